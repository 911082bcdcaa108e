// Pure helpers of the public pricing page (spec §2 Pricing page, §9 Pricing formulas): price per 1M tokens,
// group ratio lookup, availability, ordering and the model-name search.
import { formatDollars } from '../../lib/render.js';

export interface PricingRow {
  model_name: string;
  /** 0 = per token (ratios), 1 = per call (model_price) */
  quota_type: number;
  model_ratio: number;
  model_price: number;
  owner_by: string;
  completion_ratio: number;
  enable_groups: string[];
  /** ours: 'second' on a per-call priced video model charged per second of video (model_price is per second) */
  billing_unit?: 'second';
}

export interface PricingResponse {
  success: boolean;
  message: string;
  data: PricingRow[];
  group_ratio?: Record<string, number>;
  usable_group?: Record<string, string>;
}

export const DEFAULT_GROUP = 'default';
/** The base price a model ratio of 1 stands for: $0.002 / 1K tokens = $2 / 1M tokens. */
const DOLLARS_PER_1M_AT_RATIO_1 = 2;

/** The ratio of a group; 1 when the server did not list it (the server's own default for unknown groups). */
export function groupRatioOf(groupRatio: Record<string, number> | undefined, group: string): number {
  const v = groupRatio?.[group];
  return typeof v === 'number' && Number.isFinite(v) ? v : 1;
}

export function isPerCall(row: Pick<PricingRow, 'quota_type'>): boolean {
  return row.quota_type === 1;
}

/** A video model whose model_price is charged for every second of video (the server's billing_unit). */
export function isPerSecond(row: Pick<PricingRow, 'quota_type' | 'billing_unit'>): boolean {
  return row.quota_type === 1 && row.billing_unit === 'second';
}

/** Prompt price in dollars per 1M tokens: model ratio × 2 × group ratio. */
export function promptPrice(row: Pick<PricingRow, 'model_ratio'>, groupRatio: number): number {
  return row.model_ratio * DOLLARS_PER_1M_AT_RATIO_1 * groupRatio;
}

/** Completion price in dollars per 1M tokens: model ratio × completion ratio × 2 × group ratio. */
export function completionPrice(row: Pick<PricingRow, 'model_ratio' | 'completion_ratio'>, groupRatio: number): number {
  return row.model_ratio * row.completion_ratio * DOLLARS_PER_1M_AT_RATIO_1 * groupRatio;
}

/** Fixed per-call (or, for a per-second model, per-second) price in dollars: model price × group ratio. */
export function callPrice(row: Pick<PricingRow, 'model_price'>, groupRatio: number): number {
  return row.model_price * groupRatio;
}

/** Drops float noise (0.1 × 3 → 0.3) and keeps at most 6 decimals. */
export function trimNumber(n: number, digits = 6): string {
  if (!Number.isFinite(n)) return '-';
  return String(parseFloat(n.toFixed(digits)));
}

export interface AmountDisplay {
  /** status.display_in_currency: true → dollars, false → quota units */
  inCurrency: boolean;
  quotaPerUnit: number;
}

/** A dollar amount as "$0.15", or as quota units (dollars × quota per unit) when currency display is off. */
export function formatAmount(dollars: number, display: AmountDisplay): { text: string; unit: 'currency' | 'quota' } {
  if (display.inCurrency) {
    const text = Number.isFinite(dollars) ? formatDollars(dollars, 6, 0) : '-';
    return { text, unit: 'currency' };
  }
  return { text: trimNumber(dollars * display.quotaPerUnit, 2), unit: 'quota' };
}

/** The completion ratio as shown in the ratio column (3 decimals, as the spec's ratio display). */
export function displayCompletionRatio(r: number): string {
  return trimNumber(r, 3);
}

/** Whether the viewed group may use the model. */
export function isAvailable(row: Pick<PricingRow, 'enable_groups'>, group: string): boolean {
  return row.enable_groups.includes(group);
}

/** The model's groups the viewer may switch to (those in usable_group), in the server's order. */
export function usableGroupsOf(
  row: Pick<PricingRow, 'enable_groups'>,
  usable: Record<string, string> | undefined,
): string[] {
  if (!usable) return [];
  return row.enable_groups.filter((g) => Object.prototype.hasOwnProperty.call(usable, g));
}

/** The group viewed first: the logged-in user's group, else the default group. */
export function initialGroup(user: { group?: string } | null | undefined): string {
  return user?.group || DEFAULT_GROUP;
}

/** gpt models first, then per-token before per-call; otherwise the server's order (stable). */
export function sortPricing<T extends Pick<PricingRow, 'model_name' | 'quota_type'>>(rows: readonly T[]): T[] {
  const gpt = (r: T) => (r.model_name.toLowerCase().startsWith('gpt') ? 0 : 1);
  return [...rows].sort((a, b) => gpt(a) - gpt(b) || a.quota_type - b.quota_type);
}

/** Fuzzy model-name match: case-insensitive, every whitespace-separated word must occur ("gpt mini" finds gpt-4o-mini). */
export function matchesSearch(modelName: string, query: string): boolean {
  const words = query.trim().toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return true;
  const name = modelName.toLowerCase();
  return words.every((w) => name.includes(w));
}

export function filterPricing<T extends Pick<PricingRow, 'model_name'>>(rows: readonly T[], query: string): T[] {
  return rows.filter((r) => matchesSearch(r.model_name, query));
}

/** The text 'copy selected models' puts on the clipboard: names joined by commas (as new-api's String(array)). */
export function selectedModelsText(keys: readonly string[]): string {
  return keys.join(',');
}
