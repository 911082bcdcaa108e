// Pure wallet rules (spec §5 Wallet; new-api-compat.md §9.1): top-up amount normalisation and checks, the payment
// method codes and the form the browser posts to the payment gateway.

/** Amounts are whole numbers; anything below 1 (or not a number) becomes 1. */
export function normalizeAmount(raw: unknown): number {
  const n = typeof raw === 'number' ? raw : Number.parseInt(String(raw ?? ''), 10);
  if (!Number.isFinite(n) || n < 1) return 1;
  return Math.floor(n);
}

export type AmountCheck = { ok: true; amount: number } | { ok: false; error: 'err.min'; min: number };

/** The minimum check done before asking the server (充值数量不能小于 N). */
export function checkAmount(raw: unknown, minTopup: number | undefined): AmountCheck {
  const amount = normalizeAmount(raw);
  const min = Number(minTopup) > 0 ? Number(minTopup) : 1;
  if (amount < min) return { ok: false, error: 'err.min', min };
  return { ok: true, amount };
}

/**
 * The minimum in the unit the amount is typed in: min_topup is in dollars; with currency display off the amount is
 * typed in quota points, so the minimum is scaled by quota_per_unit (the server applies the same rule).
 */
export function effectiveMinTopup(status: {
  min_topup?: number;
  display_in_currency?: boolean;
  quota_per_unit?: number;
}): number {
  const min = Number(status.min_topup) > 0 ? Number(status.min_topup) : 1;
  if (status.display_in_currency === false) {
    const perUnit = Number(status.quota_per_unit) > 0 ? Number(status.quota_per_unit) : 500000;
    return Math.trunc(min * perUnit);
  }
  return min;
}

/** The starting amount shown in the input: the configured minimum, at least 1. */
export const initialAmount = (minTopup: number | undefined): number => normalizeAmount(minTopup ?? 1);

export type PaymentMethod = 'zfb' | 'wx';

/** The payment endpoints answer {message: "success"|"error", data, url?} rather than the usual envelope. */
export interface PayAnswer<T = unknown> {
  message: string;
  data: T;
  url?: string;
}

export const paySucceeded = (res: PayAnswer): boolean => res.message === 'success';

/** Builds the hidden POST form for the gateway (one hidden input per parameter). */
export function buildPayForm(
  doc: Document,
  url: string,
  params: Record<string, unknown>,
  newTab = true,
): HTMLFormElement {
  const form = doc.createElement('form');
  form.action = url;
  form.method = 'POST';
  if (newTab) form.target = '_blank';
  for (const [name, value] of Object.entries(params)) {
    const input = doc.createElement('input');
    input.type = 'hidden';
    input.name = name;
    input.value = String(value ?? '');
    form.appendChild(input);
  }
  return form;
}

/** Safari blocks a form opened in a new tab from script, so there the gateway opens in the same tab. */
export function isSafari(userAgent: string): boolean {
  return userAgent.includes('Safari') && !userAgent.includes('Chrome') && !userAgent.includes('Chromium');
}
