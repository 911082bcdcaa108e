import { afterEach, describe, expect, it } from 'vitest';
import {
  dollarDigits,
  renderGroupColor,
  renderNumber,
  renderQuota,
  renderQuotaSum,
  renderRatioColor,
  timestamp2string,
} from './render.js';

afterEach(() => localStorage.clear());

describe('small sums', () => {
  it('keep two significant digits of a dollar amount', () => {
    expect(dollarDigits(0.00036)).toBe(5);
    expect(dollarDigits(0.05)).toBe(3);
    expect(dollarDigits(0.1)).toBe(2);
    expect(dollarDigits(12.5)).toBe(2);
    expect(dollarDigits(0)).toBe(2);
    expect(dollarDigits(1e-9)).toBe(6);
  });
  it('render as $0.00036 rather than $0.00, and as before from $0.10 up', () => {
    localStorage.setItem('display_in_currency', 'true');
    localStorage.setItem('quota_per_unit', '500000');
    expect(renderQuotaSum(180)).toBe('$0.00036');
    expect(renderQuotaSum(25000)).toBe('$0.050');
    expect(renderQuotaSum(1250000)).toBe('$2.50');
    expect(renderQuotaSum(0)).toBe('$0.00');
    localStorage.setItem('display_in_currency', 'false');
    expect(renderQuotaSum(180)).toBe('180');
  });
});

describe('renderQuota', () => {
  it('shows dollars using quota_per_unit when display_in_currency is on', () => {
    localStorage.setItem('display_in_currency', 'true');
    localStorage.setItem('quota_per_unit', '500000');
    expect(renderQuota(500000)).toBe('$1.00');
    expect(renderQuota(1250000)).toBe('$2.50');
    expect(renderQuota(123456, 4)).toBe('$0.2469');
  });
  it('uses a custom quota_per_unit', () => {
    localStorage.setItem('display_in_currency', 'true');
    localStorage.setItem('quota_per_unit', '1000');
    expect(renderQuota(2500)).toBe('$2.50');
  });
  it('shows the (shortened) number when currency display is off', () => {
    localStorage.setItem('display_in_currency', 'false');
    expect(renderQuota(500)).toBe('500');
    expect(renderQuota(500000)).toBe('500k');
  });
});

describe('renderNumber', () => {
  it('keeps numbers below 10000 as they are', () => {
    expect(renderNumber(0)).toBe('0');
    expect(renderNumber(9999)).toBe('9999');
  });
  it('uses k from 10000, then M and B', () => {
    expect(renderNumber(10000)).toBe('10k');
    expect(renderNumber(12345)).toBe('12.3k');
    expect(renderNumber(2_500_000)).toBe('2.5M');
    expect(renderNumber(3_000_000_000)).toBe('3B');
  });
});

describe('timestamp2string', () => {
  it('formats local time as YYYY-MM-DD HH:mm:ss', () => {
    const d = new Date(2024, 0, 5, 7, 8, 9);
    expect(timestamp2string(d.getTime() / 1000)).toBe('2024-01-05 07:08:09');
  });
});

describe('colours', () => {
  it('colours groups as the spec says', () => {
    expect(renderGroupColor('vip')).toBe('gold');
    expect(renderGroupColor('pro')).toBe('gold');
    expect(renderGroupColor('svip')).toBe('red');
    expect(renderGroupColor('premium')).toBe('red');
    expect(renderGroupColor('other')).toBe('default');
  });
  it('colours ratios: >5 red, >3 orange, >1 blue, else green', () => {
    expect(renderRatioColor(6)).toBe('red');
    expect(renderRatioColor(5)).toBe('orange');
    expect(renderRatioColor(3)).toBe('blue');
    expect(renderRatioColor(1)).toBe('green');
  });
});
