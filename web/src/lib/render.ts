// Display helpers shared by every page. Quota settings come from the values StatusProvider caches in localStorage
// (new-api-compat.md §11.3), so these helpers work outside React too. Amounts, numbers and times follow the
// console's language through Intl; Chinese and English keep new-api's own number and time forms (`12.3k`,
// `2024-01-05 07:08:09`), which its users know.
import { currentLanguage, localeTag } from '../i18n/index.js';

const DEFAULT_QUOTA_PER_UNIT = 500000;

export function quotaPerUnit(): number {
  const v = Number(localStorage.getItem('quota_per_unit'));
  return Number.isFinite(v) && v > 0 ? v : DEFAULT_QUOTA_PER_UNIT;
}

export function displayInCurrency(): boolean {
  const v = localStorage.getItem('display_in_currency');
  // new-api defaults to currency display when the status was never loaded.
  return v === null ? true : v === 'true';
}

/** new-api's two languages keep its number and time forms; the others take their locale's. */
const keepsNewApiForms = () => {
  const lng = currentLanguage();
  return lng === 'zh' || lng === 'en';
};

const formats = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();

/** One formatter per tag and options (tables format many cells; building one is the slow part). */
function cached<F extends Intl.NumberFormat | Intl.DateTimeFormat>(key: string, make: (tag: string) => F): F {
  const tag = localeTag();
  let f = formats.get(`${tag}|${key}`) as F | undefined;
  if (!f) {
    f = make(tag);
    formats.set(`${tag}|${key}`, f);
  }
  return f;
}

/**
 * Dollars in the language's currency form: `$1.00` (zh, en, ja), `1,00 $` (fr, ru, vi), with `digits` decimals
 * (at least `minimumDigits`: the pricing table drops trailing zeros).
 */
export function formatDollars(dollars: number, digits = 2, minimumDigits = digits): string {
  const f = cached(
    `usd${minimumDigits}-${digits}`,
    (tag) =>
      new Intl.NumberFormat(tag, {
        style: 'currency',
        currency: 'USD',
        // `$` rather than zh-CN's `US$`: the amounts are new-api's dollars, shown as it shows them
        currencyDisplay: 'narrowSymbol',
        minimumFractionDigits: minimumDigits,
        maximumFractionDigits: digits,
      }),
  );
  return f.format(dollars);
}

/** An amount with two decimals: `9.50` in zh and en as new-api, the locale's (`9,50`) in the others. */
export function formatDecimal(n: number): string {
  if (keepsNewApiForms()) return n.toFixed(2);
  return cached(
    '2dp',
    (tag) => new Intl.NumberFormat(tag, { minimumFractionDigits: 2, maximumFractionDigits: 2 }),
  ).format(n);
}

/** A price in a currency named by its ISO code (a Creem product's): `9.50 USD` in zh and en, the locale's else. */
export function formatMoney(amount: number, currency: string): string {
  if (!keepsNewApiForms()) {
    try {
      return cached(
        `money-${currency}`,
        (tag) => new Intl.NumberFormat(tag, { style: 'currency', currency, currencyDisplay: 'code' }),
      ).format(amount);
    } catch {
      /* not an ISO code: shown as typed, below */
    }
  }
  return `${amount.toFixed(2)} ${currency}`;
}

/** Quota as dollars ("$1.00") when currency display is on, else the raw number. */
export function renderQuota(quota: number, digits = 2): string {
  if (displayInCurrency()) return formatDollars(quota / quotaPerUnit(), digits);
  return renderNumber(quota);
}

/** Decimal places that show a dollar amount to two significant digits: 2 from $0.10 up, at most 6 ($0.00036). */
export function dollarDigits(dollars: number): number {
  if (!(dollars > 0) || dollars >= 0.1) return 2;
  return Math.min(6, Math.ceil(-Math.log10(dollars)) + 1);
}

/** renderQuota for sums that may be small: "$0.00036" rather than "$0.00". */
export function renderQuotaSum(quota: number): string {
  return renderQuota(quota, dollarDigits(quotaToDollars(quota)));
}

/** Converts a quota to dollars without formatting. */
export function quotaToDollars(quota: number): number {
  return quota / quotaPerUnit();
}

/** Shortens large numbers: k from 10000, then M and B (zh, en); the language's compact form in the others. */
export function renderNumber(n: number): string {
  if (!keepsNewApiForms()) {
    const compact = Math.abs(n) >= 1e4;
    return cached(compact ? 'compact' : 'plain', (tag) =>
      compact
        ? new Intl.NumberFormat(tag, { notation: 'compact', maximumFractionDigits: 1 })
        : new Intl.NumberFormat(tag),
    ).format(n);
  }
  const abs = Math.abs(n);
  const trim = (v: number) => {
    const s = v.toFixed(1);
    return s.endsWith('.0') ? s.slice(0, -2) : s;
  };
  if (abs >= 1e9) return `${trim(n / 1e9)}B`;
  if (abs >= 1e6) return `${trim(n / 1e6)}M`;
  if (abs >= 1e4) return `${trim(n / 1e3)}k`;
  return String(n);
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Unix seconds → local "YYYY-MM-DD HH:mm:ss" (also the form of editable times: token expiry). */
export function timestamp2string(sec: number): string {
  const d = new Date(sec * 1000);
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  );
}

/** A time to read (tables, hints): new-api's `YYYY-MM-DD HH:mm:ss` in zh and en, the locale's date and time else. */
export function renderTime(sec: number): string {
  if (keepsNewApiForms()) return timestamp2string(sec);
  return cached('time', (tag) => new Intl.DateTimeFormat(tag, { dateStyle: 'short', timeStyle: 'medium' })).format(
    new Date(sec * 1000),
  );
}

/** antd Tag colour for a user group (spec §6): vip/pro yellow, svip/premium red, others default. */
export function renderGroupColor(group: string): string {
  switch (group) {
    case 'vip':
    case 'pro':
      return 'gold';
    case 'svip':
    case 'premium':
      return 'red';
    case 'default':
      return 'blue';
    default:
      return 'default';
  }
}

/** Tag colour for a group ratio (spec §9): above 5 red, above 3 orange, above 1 blue, else green. */
export function renderRatioColor(ratio: number): string {
  if (ratio > 5) return 'red';
  if (ratio > 3) return 'orange';
  if (ratio > 1) return 'blue';
  return 'green';
}
