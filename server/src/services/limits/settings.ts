// What can be limited (issue 35, beyond new-api: new-api-compat.md §13.3): requests per minute, tokens per minute and a
// quota budget per calendar period or rolling window, each optional, set on a token, on a user, or per group as the default of its
// users. The most specific setting of each field wins: token over user over group.

export type Period = 'daily' | 'weekly' | 'monthly';
export const PERIODS: readonly Period[] = ['daily', 'weekly', 'monthly'];

/**
 * How a budget's period runs: `calendar` from local midnight / Monday / the 1st in the site's time zone; `rolling`
 * from the budget's first charge, for a day, 7 days or a month, and again from the first charge after it ended (as
 * LiteLLM's budget_duration).
 */
export type Reset = 'calendar' | 'rolling';
export const RESETS: readonly Reset[] = ['calendar', 'rolling'];

export interface LimitSettings {
  /** requests per minute */
  rpm?: number;
  /** tokens (prompt + completion) per minute */
  tpm?: number;
  /** quota that may be charged per period */
  budget?: number;
  /** the budget's period, in the site's time zone (option UsageLimitTimeZone); monthly when unset */
  period?: Period;
  /** stored only when rolling: absent means calendar */
  reset?: 'rolling';
}

/** Whose counter a rule counts on: a token's own, or its user's (a user's setting or its group's default). */
export interface Rule {
  limit: number;
  scope: 'token' | 'user';
  id: number;
}

export interface Rules {
  rpm: Rule | null;
  tpm: Rule | null;
  budget: (Rule & { period: Period; reset: Reset }) | null;
}

/** A whole number > 0, given as a number or as decimal digits (parseSettingsInput accepts both, so both are read). */
const positiveInt = (v: unknown): number | undefined => {
  const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : undefined;
};

/** The valid fields of stored or option JSON; anything else is dropped (a bad value never blocks requests). */
export function cleanSettings(raw: unknown): LimitSettings {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return {};
  const r = raw as Record<string, unknown>;
  const out: LimitSettings = {};
  const rpm = positiveInt(r.rpm);
  const tpm = positiveInt(r.tpm);
  const budget = positiveInt(r.budget);
  if (rpm) out.rpm = rpm;
  if (tpm) out.tpm = tpm;
  if (budget) {
    out.budget = budget;
    out.period = PERIODS.includes(r.period as Period) ? (r.period as Period) : 'monthly';
    if (r.reset === 'rolling') out.reset = 'rolling';
  }
  return out;
}

export class LimitInputError extends Error {}

const blank = (v: unknown) => v === undefined || v === null || v === '';

/**
 * A console caller's settings: each field a whole number ≥ 0 (0, null or absent: no limit), period one of PERIODS,
 * reset one of RESETS (absent: calendar).
 * Throws LimitInputError on anything else, so bad input changes nothing.
 */
export function parseSettingsInput(body: Record<string, unknown>): LimitSettings {
  const out: Record<string, unknown> = {};
  for (const field of ['rpm', 'tpm', 'budget'] as const) {
    const v = body[field];
    if (v === undefined || v === null || v === '' || v === 0) continue;
    const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0)
      throw new LimitInputError(`${field} must be a whole number of 0 or more`);
    if (n > 0) out[field] = n;
  }
  const { period, reset } = body;
  if (!blank(period) && !PERIODS.includes(period as Period))
    throw new LimitInputError(`period must be one of ${PERIODS.join(', ')}`);
  if (!blank(reset) && !RESETS.includes(reset as Reset))
    throw new LimitInputError(`reset must be one of ${RESETS.join(', ')}`);
  if (out.budget) {
    out.period = period || 'monthly';
    if (reset === 'rolling') out.reset = 'rolling';
  }
  return out as LimitSettings;
}

const SETTING_FIELDS = new Set(['rpm', 'tpm', 'budget', 'period', 'reset']);

/**
 * The option UsageLimitGroupDefaults as root saves it (its JSON already parsed): an object {group: {rpm, tpm, budget, period, reset}}, each group's
 * settings checked by parseSettingsInput (so a value the option accepts is one the token and user routes accept), and
 * no other field, so a misspelt one is not silently ignored. Throws LimitInputError naming the group.
 */
export function parseGroupDefaultsInput(parsed: unknown): Record<string, LimitSettings> {
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new LimitInputError(
      'UsageLimitGroupDefaults must be an object of groups: {"group": {rpm, tpm, budget, period, reset}}',
    );
  const out: Record<string, LimitSettings> = {};
  for (const [group, raw] of Object.entries(parsed as Record<string, unknown>)) {
    if (!group.trim()) throw new LimitInputError('UsageLimitGroupDefaults: a group name is empty');
    if (!raw || typeof raw !== 'object' || Array.isArray(raw))
      throw new LimitInputError(`group ${group}: the limits must be an object {rpm, tpm, budget, period, reset}`);
    const unknown = Object.keys(raw).find((k) => !SETTING_FIELDS.has(k));
    if (unknown) throw new LimitInputError(`group ${group}: unknown field ${unknown}`);
    try {
      out[group] = parseSettingsInput(raw as Record<string, unknown>);
    } catch (e) {
      if (e instanceof LimitInputError) throw new LimitInputError(`group ${group}: ${e.message}`);
      throw e;
    }
  }
  return out;
}

export const isEmpty = (s: LimitSettings | undefined): boolean => !s || (!s.rpm && !s.tpm && !s.budget);

/** The rules that apply to one caller, field by field from the most specific setting; null when there are none. */
export function resolveRules(
  tokenId: number,
  userId: number,
  token: LimitSettings | undefined,
  user: LimitSettings | undefined,
  group: LimitSettings | undefined,
): Rules | null {
  const pick = (field: 'rpm' | 'tpm' | 'budget'): (Rule & { from: LimitSettings }) | null => {
    if (token?.[field] && tokenId) return { limit: token[field], scope: 'token', id: tokenId, from: token };
    if (user?.[field]) return { limit: user[field], scope: 'user', id: userId, from: user };
    if (group?.[field]) return { limit: group[field], scope: 'user', id: userId, from: group };
    return null;
  };
  const rpm = pick('rpm');
  const tpm = pick('tpm');
  const budget = pick('budget');
  if (!rpm && !tpm && !budget) return null;
  const strip = (r: (Rule & { from: LimitSettings }) | null): Rule | null =>
    r && { limit: r.limit, scope: r.scope, id: r.id };
  return {
    rpm: strip(rpm),
    tpm: strip(tpm),
    budget: budget && {
      ...strip(budget)!,
      period: budget.from.period ?? 'monthly',
      reset: budget.from.reset === 'rolling' ? 'rolling' : 'calendar',
    },
  };
}
