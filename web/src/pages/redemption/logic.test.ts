import { describe, expect, it } from 'vitest';
import {
  canEdit,
  checkRedemptionForm,
  defaultRedemptionForm,
  keysText,
  selectedText,
  toggleTarget,
  type RedemptionFormValues,
} from './logic.js';

const fmt = (q: number) => `$${(q / 500000).toFixed(2)}`;
const form = (over: Partial<RedemptionFormValues>): RedemptionFormValues => ({ ...defaultRedemptionForm(), ...over });

describe('checkRedemptionForm', () => {
  it('defaults: quota 100000, count 1, name = formatted quota', () => {
    expect(defaultRedemptionForm()).toEqual({ name: '', quota: 100000, count: 1 });
    expect(checkRedemptionForm(form({}), fmt)).toEqual({
      ok: true,
      payload: { name: '$0.20', quota: 100000, count: 1 },
    });
    expect(checkRedemptionForm(form({ name: '  gift ', quota: '500000', count: '100' }), fmt)).toEqual({
      ok: true,
      payload: { name: 'gift', quota: 500000, count: 100 },
    });
  });
  it('rejects bad quota, long names and counts outside 1..100', () => {
    expect(checkRedemptionForm(form({ quota: 'abc' }), fmt)).toEqual({ ok: false, error: 'err.quota' });
    expect(checkRedemptionForm(form({ quota: '1.5' }), fmt)).toEqual({ ok: false, error: 'err.quota' });
    expect(checkRedemptionForm(form({ quota: 0 }), fmt)).toEqual({ ok: false, error: 'err.quota' });
    expect(checkRedemptionForm(form({ name: '码'.repeat(21) }), fmt)).toEqual({ ok: false, error: 'err.nameLong' });
    expect(checkRedemptionForm(form({ name: '码'.repeat(20) }), fmt).ok).toBe(true);
    expect(checkRedemptionForm(form({ count: 0 }), fmt)).toEqual({ ok: false, error: 'err.count' });
    expect(checkRedemptionForm(form({ count: '2.5' }), fmt)).toEqual({ ok: false, error: 'err.count' });
    expect(checkRedemptionForm(form({ count: 101 }), fmt)).toEqual({ ok: false, error: 'err.countMax' });
  });
  it('builds an edit body with the id and without count', () => {
    expect(checkRedemptionForm(form({ name: 'x', quota: 7, count: 500 }), fmt, 9)).toEqual({
      ok: true,
      payload: { id: 9, name: 'x', quota: 7 },
    });
  });
});

describe('status rules and copy text', () => {
  it('edits only unused codes and never re-enables a used one', () => {
    expect([1, 2, 3].map((status) => canEdit({ status }))).toEqual([true, false, false]);
    expect([1, 2, 3].map((status) => toggleTarget({ status }))).toEqual([2, 1, null]);
  });
  it('formats keys for copying', () => {
    expect(keysText(['a'.repeat(32), 'b'.repeat(32)])).toBe(`${'a'.repeat(32)}\n${'b'.repeat(32)}`);
    expect(
      selectedText([
        { name: 'n1', key: 'k1' },
        { name: 'n2', key: 'k2' },
      ]),
    ).toBe('n1    k1\nn2    k2');
  });
});
