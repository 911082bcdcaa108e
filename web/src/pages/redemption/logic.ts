// Pure redemption-code rules (spec §4 Redemption status, §5 Redemption, §9 presets and defaults).

export interface Redemption {
  id: number;
  user_id: number;
  key: string;
  status: number;
  name: string;
  quota: number;
  created_time: number;
  redeemed_time: number;
  used_user_id: number;
}

export interface RedemptionPage {
  items: Redemption[];
  total: number;
  page: number;
  page_size: number;
}

/** Every query of the codes (lists and the one being edited) starts with this key: a change invalidates them all. */
export const REDEMPTIONS_KEY = ['redemptions'] as const;

export const STATUS_UNUSED = 1;
export const STATUS_DISABLED = 2;
export const STATUS_USED = 3;

/** Spec §9 quota presets (quota units; 500000 = $1). */
export const QUOTA_PRESETS = [500000, 5000000, 25000000, 50000000, 250000000, 500000000];
export const DEFAULT_REDEMPTION_QUOTA = 100000;
export const DEFAULT_REDEMPTION_COUNT = 1;
export const MAX_REDEMPTION_COUNT = 100;
export const MAX_NAME_LENGTH = 20;

export interface RedemptionFormValues {
  name: string;
  quota: number | string | null;
  count: number | string | null;
}

export function defaultRedemptionForm(): RedemptionFormValues {
  return { name: '', quota: DEFAULT_REDEMPTION_QUOTA, count: DEFAULT_REDEMPTION_COUNT };
}

export function redemptionToForm(r: Redemption): RedemptionFormValues {
  return { name: r.name, quota: r.quota, count: 1 };
}

export type RedemptionCheck = { ok: true; payload: Record<string, unknown> } | { ok: false; error: string };

const isInt = (v: unknown) => /^-?\d+$/.test(String(v ?? '').trim());

/**
 * Validates the drawer and builds the POST/PUT body. An empty name becomes the formatted quota (`formatQuota`,
 * normally renderQuota), as new-api's console does.
 */
export function checkRedemptionForm(
  v: RedemptionFormValues,
  formatQuota: (q: number) => string,
  editId?: number,
): RedemptionCheck {
  if (!isInt(v.quota) || Number(v.quota) <= 0) return { ok: false, error: 'err.quota' };
  const quota = Number(v.quota);
  const name = v.name.trim() || formatQuota(quota);
  if ([...name].length > MAX_NAME_LENGTH) return { ok: false, error: 'err.nameLong' };
  if (editId !== undefined) return { ok: true, payload: { id: editId, name, quota } };
  if (!isInt(v.count) || Number(v.count) < 1) return { ok: false, error: 'err.count' };
  if (Number(v.count) > MAX_REDEMPTION_COUNT) return { ok: false, error: 'err.countMax' };
  return { ok: true, payload: { name, quota, count: Number(v.count) } };
}

/** Only an unused code can be edited. */
export const canEdit = (r: Pick<Redemption, 'status'>): boolean => r.status === STATUS_UNUSED;

/** The status the enable/disable button switches to, or null for a used code (it can never be enabled again). */
export function toggleTarget(r: Pick<Redemption, 'status'>): number | null {
  if (r.status === STATUS_UNUSED) return STATUS_DISABLED;
  if (r.status === STATUS_DISABLED) return STATUS_UNUSED;
  return null;
}

/** Text copied by "copy all" after creation: one key per line. */
export function keysText(keys: string[]): string {
  return keys.join('\n');
}

/** Text copied by "copy selected": name, four spaces, key, one code per line (new-api's format). */
export function selectedText(rows: Pick<Redemption, 'name' | 'key'>[]): string {
  return rows.map((r) => `${r.name}    ${r.key}`).join('\n');
}
