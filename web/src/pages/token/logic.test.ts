import { describe, expect, it } from 'vitest';
import { timestamp2string } from '../../lib/render.js';
import {
  batchNames,
  canToggleStatus,
  checkTokenForm,
  defaultTokenForm,
  expiryShortcut,
  fullKey,
  maskKey,
  parseExpiry,
  type TokenFormValues,
} from './logic.js';

const form = (over: Partial<TokenFormValues>): TokenFormValues => ({ ...defaultTokenForm(), ...over });

describe('expiry', () => {
  it('parses -1 and yyyy-MM-dd HH:mm:ss in local time', () => {
    expect(parseExpiry('-1')).toBe(-1);
    const sec = parseExpiry('2030-01-02 03:04:05');
    expect(sec).toBe(Math.floor(new Date(2030, 0, 2, 3, 4, 5).getTime() / 1000));
    expect(timestamp2string(sec!)).toBe('2030-01-02 03:04:05');
  });
  it('rejects other formats and impossible dates', () => {
    for (const bad of [
      '',
      'tomorrow',
      '2030-01-02',
      '2030/01/02 03:04:05',
      '2030-02-30 00:00:00',
      '2030-01-02 24:00:00',
      '-2',
    ]) {
      expect(parseExpiry(bad)).toBeNull();
    }
  });
  it('computes shortcuts (month = 30 days)', () => {
    const now = Math.floor(new Date(2030, 0, 1, 12, 0, 0).getTime() / 1000);
    expect(expiryShortcut('never', now)).toBe('-1');
    expect(parseExpiry(expiryShortcut('hour', now))).toBe(now + 3600);
    expect(parseExpiry(expiryShortcut('day', now))).toBe(now + 86400);
    expect(parseExpiry(expiryShortcut('month', now))).toBe(now + 30 * 86400);
  });
});

describe('checkTokenForm', () => {
  it('validates name, expiry, quota and count', () => {
    expect(checkTokenForm(form({}))).toEqual({ ok: false, error: 'err.name' });
    expect(checkTokenForm(form({ name: 'a', expired: '2030-13-01 00:00:00' }))).toEqual({
      ok: false,
      error: 'err.expiry',
    });
    expect(checkTokenForm(form({ name: 'a', remain_quota: '1.5' }))).toEqual({ ok: false, error: 'err.quota' });
    expect(checkTokenForm(form({ name: 'a', count: 0 }))).toEqual({ ok: false, error: 'err.count' });
    expect(checkTokenForm(form({ name: 'a', count: 'x' }))).toEqual({ ok: false, error: 'err.count' });
    expect(checkTokenForm(form({ name: 'x'.repeat(31) }))).toEqual({ ok: false, error: 'err.nameLong' });
  });
  it('builds the payload', () => {
    const r = checkTokenForm(
      form({ name: ' k ', remain_quota: '5000000', model_limits_enabled: true, model_limits: ['a', 'b'], count: '20' }),
    );
    expect(r).toEqual({
      ok: true,
      count: 20,
      payload: {
        name: 'k',
        expired_time: -1,
        remain_quota: 5000000,
        unlimited_quota: false,
        model_limits_enabled: true,
        model_limits: 'a,b',
        allow_ips: '',
        group: '',
      },
    });
    const edit = checkTokenForm(form({ name: '', unlimited_quota: true, remain_quota: '' }), 9);
    expect(edit.ok && edit.payload).toMatchObject({ id: 9, unlimited_quota: true, remain_quota: 0 });
  });
});

describe('batch names and keys', () => {
  it('gives extra tokens a random 6-char suffix', () => {
    const names = batchNames('team', 4);
    expect(names[0]).toBe('team');
    expect(names).toHaveLength(4);
    for (const n of names.slice(1)) expect(n).toMatch(/^team-[A-Za-z0-9]{6}$/);
    expect(new Set(names).size).toBe(4);
  });
  it('shows keys with the sk- prefix', () => {
    const key = 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL';
    expect(fullKey(key)).toBe(`sk-${key}`);
    expect(fullKey(`sk-${key}`)).toBe(`sk-${key}`);
    expect(maskKey(key)).toBe('sk-abcd…IJKL');
  });
});

describe('status toggle', () => {
  it('is allowed only between enabled (1) and disabled (2)', () => {
    expect(canToggleStatus(1)).toBe(true);
    expect(canToggleStatus(2)).toBe(true);
    expect(canToggleStatus(3)).toBe(false);
    expect(canToggleStatus(4)).toBe(false);
    expect(canToggleStatus(0)).toBe(false);
  });
});
