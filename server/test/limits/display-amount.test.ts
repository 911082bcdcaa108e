// The usage limits' refusals name a budget in the unit the site shows amounts in (issue 46, point 10): dollars when
// DisplayInCurrencyEnabled (two significant digits for small sums, as the console's renderQuotaSum), else quota.
import { describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/context.js';
import { displayAmount } from '../../src/services/user-logs.js';

function ctxWith(options: Record<string, string>): AppContext {
  return {
    options: {
      bool: (k: string) => options[k] === 'true',
      num: (k: string, d?: number) => (options[k] === undefined ? (d ?? 0) : Number(options[k])),
    },
  } as unknown as AppContext;
}

describe('displayAmount', () => {
  it('shows dollars when the site displays currency, with digits enough for small sums', () => {
    const ctx = ctxWith({ DisplayInCurrencyEnabled: 'true', QuotaPerUnit: '500000' });
    expect(displayAmount(ctx, 1_000_000)).toBe('$2.00');
    expect(displayAmount(ctx, 55)).toBe('$0.00011');
    expect(displayAmount(ctx, 10)).toBe('$0.000020');
    expect(displayAmount(ctx, 0)).toBe('$0.00');
  });

  it('shows quota units otherwise', () => {
    expect(displayAmount(ctxWith({ DisplayInCurrencyEnabled: 'false' }), 1234)).toBe('1234 quota');
  });
});
