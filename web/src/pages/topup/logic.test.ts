import { describe, expect, it } from 'vitest';
import {
  buildPayForm,
  checkAmount,
  effectiveMinTopup,
  initialAmount,
  isSafari,
  normalizeAmount,
  paySucceeded,
} from './logic.js';

describe('amount rules', () => {
  it('sets amounts below 1 (and non-numbers) to 1 and drops fractions', () => {
    expect(normalizeAmount(0)).toBe(1);
    expect(normalizeAmount(-5)).toBe(1);
    expect(normalizeAmount('')).toBe(1);
    expect(normalizeAmount('abc')).toBe(1);
    expect(normalizeAmount(null)).toBe(1);
    expect(normalizeAmount('12')).toBe(12);
    expect(normalizeAmount(7.9)).toBe(7);
  });
  it('refuses amounts below min_topup and reports the minimum', () => {
    expect(checkAmount(3, 5)).toEqual({ ok: false, error: 'err.min', min: 5 });
    expect(checkAmount(5, 5)).toEqual({ ok: true, amount: 5 });
    expect(checkAmount(0, undefined)).toEqual({ ok: true, amount: 1 });
    expect(checkAmount(0, 2)).toEqual({ ok: false, error: 'err.min', min: 2 });
    expect(initialAmount(3)).toBe(3);
    expect(initialAmount(undefined)).toBe(1);
  });
  it('scales the minimum to quota points when currency display is off', () => {
    expect(effectiveMinTopup({ min_topup: 2, display_in_currency: true })).toBe(2);
    expect(effectiveMinTopup({})).toBe(1);
    expect(effectiveMinTopup({ min_topup: 2, display_in_currency: false, quota_per_unit: 500000 })).toBe(1000000);
    expect(effectiveMinTopup({ min_topup: 0, display_in_currency: false })).toBe(500000);
  });
});

describe('payment', () => {
  it('reads the payment answer shape', () => {
    expect(paySucceeded({ message: 'success', data: '7.30' })).toBe(true);
    expect(paySucceeded({ message: 'error', data: '充值数量不能小于 2' })).toBe(false);
  });
  it('builds a hidden POST form with every parameter', () => {
    const form = buildPayForm(document, 'https://pay.example.com/submit.php', {
      pid: '1001',
      money: '7.30',
      sign: 'abc',
      sign_type: 'MD5',
    });
    expect(form.method.toLowerCase()).toBe('post');
    expect(form.action).toBe('https://pay.example.com/submit.php');
    expect(form.target).toBe('_blank');
    const fields = Object.fromEntries([...form.querySelectorAll('input')].map((i) => [i.name, [i.type, i.value]]));
    expect(fields).toEqual({
      pid: ['hidden', '1001'],
      money: ['hidden', '7.30'],
      sign: ['hidden', 'abc'],
      sign_type: ['hidden', 'MD5'],
    });
    expect(buildPayForm(document, '/x', {}, false).target).toBe('');
  });
  it('detects Safari but not Chrome', () => {
    expect(isSafari('Mozilla/5.0 (Macintosh) AppleWebKit/605.1.15 Version/17.0 Safari/605.1.15')).toBe(true);
    expect(isSafari('Mozilla/5.0 (X11; Linux) AppleWebKit/537.36 Chrome/120.0 Safari/537.36')).toBe(false);
  });
});
