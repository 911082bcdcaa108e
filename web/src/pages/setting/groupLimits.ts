// Pure logic of the per-group default limits form (option UsageLimitGroupDefaults, {group: {rpm, tpm, budget, period,
// reset}};
// server/src/services/limits/). The server checks the option on save with the same rules as a token's limits.
import type { LimitSettings, Period } from '../../components/usage-limits/api.js';
import type { Options } from './logic.js';

export const GROUP_LIMITS_KEY = 'UsageLimitGroupDefaults';

export interface GroupLimitRow extends LimitSettings {
  group: string;
}

const PERIODS: readonly Period[] = ['daily', 'weekly', 'monthly'];

function objectOf(text: string | undefined): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text ?? '');
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** a whole number > 0 as stored (a number or decimal digits, as the server reads it), else none */
function positive(v: unknown): number | undefined {
  const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

function settingsOf(raw: unknown): LimitSettings {
  const r = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const out: LimitSettings = { rpm: positive(r.rpm), tpm: positive(r.tpm), budget: positive(r.budget) };
  if (PERIODS.includes(r.period as Period)) out.period = r.period as Period;
  if (r.reset === 'rolling') out.reset = 'rolling';
  return out;
}

/**
 * One row per group: the groups with a ratio (GroupRatio: the groups that exist), then any group that has defaults but
 * no ratio any more, so its limits can still be seen and cleared.
 */
export function groupLimitRows(options: Options): GroupLimitRow[] {
  const defaults = objectOf(options[GROUP_LIMITS_KEY]);
  const groups = [...new Set([...Object.keys(objectOf(options.GroupRatio)), ...Object.keys(defaults)])];
  return groups.map((group) => ({ group, ...settingsOf(defaults[group]) }));
}

/** The option's value: groups without any limit left out, each with only the fields set (a period, and a rolling reset,
 * only with a budget). */
export function groupDefaultsJson(rows: GroupLimitRow[]): string {
  const out: Record<string, LimitSettings> = {};
  for (const r of rows) {
    const s: LimitSettings = {};
    if (r.rpm) s.rpm = r.rpm;
    if (r.tpm) s.tpm = r.tpm;
    if (r.budget) {
      s.budget = r.budget;
      s.period = r.period ?? 'monthly';
      if (r.reset === 'rolling') s.reset = 'rolling';
    }
    if (Object.keys(s).length) out[r.group] = s;
  }
  return JSON.stringify(out);
}
