// The usage-limits routes (server/src/api/limits.ts): a token's or a user's settings, and what the limits in force
// have used.
import { api } from '../../lib/api.js';

export type Period = 'daily' | 'weekly' | 'monthly';
/** calendar: from midnight / Monday / the 1st in the site's time zone; rolling: a window from the first charge */
export type Reset = 'calendar' | 'rolling';

export interface LimitSettings {
  rpm?: number;
  tpm?: number;
  budget?: number;
  period?: Period;
  /** the server stores only `rolling`; absent is calendar */
  reset?: Reset;
}

export interface UsageView {
  limit: number;
  used: number;
  scope: 'token' | 'user';
}

export interface LimitStatus {
  rpm: UsageView | null;
  tpm: UsageView | null;
  /** resetAt: unix seconds; null for a rolling budget not charged yet (its window starts with its first charge) */
  budget: (UsageView & { period: Period; reset: Reset; resetAt: number | null }) | null;
}

/** `/api/token/:id/limits` or `/api/user/:id/limits` */
export const limitsPath = (scope: 'token' | 'user', id: number) => `/api/${scope}/${id}/limits`;

export async function loadLimits(path: string): Promise<LimitSettings> {
  const r = await api.get<{ settings: LimitSettings }>(path);
  const s = r.success ? r.data?.settings : undefined;
  return s && typeof s === 'object' ? s : {};
}

const same = (a: LimitSettings, b: LimitSettings) =>
  (a.rpm ?? 0) === (b.rpm ?? 0) &&
  (a.tpm ?? 0) === (b.tpm ?? 0) &&
  (a.budget ?? 0) === (b.budget ?? 0) &&
  (!a.budget ||
    ((a.period ?? 'monthly') === (b.period ?? 'monthly') && (a.reset ?? 'calendar') === (b.reset ?? 'calendar')));

export const hasLimits = (s: LimitSettings) => !!(s.rpm || s.tpm || s.budget);

/** The settings as the server takes them (PUT …/limits, POST /api/token/'s usage_limits): 0 for a limit not set. */
export const limitsBody = (s: LimitSettings) => ({
  rpm: s.rpm ?? 0,
  tpm: s.tpm ?? 0,
  budget: s.budget ?? 0,
  period: s.budget ? (s.period ?? 'monthly') : '',
  reset: s.budget ? (s.reset ?? 'calendar') : '',
});

/** Saves the settings when they differ from those loaded; the server's message when it refuses them. */
export async function saveLimits(path: string, settings: LimitSettings, loaded: LimitSettings): Promise<string | null> {
  if (same(settings, loaded)) return null;
  const r = await api.put(path, limitsBody(settings));
  return r.success ? null : r.message;
}

/** The limits in force on the caller's listed tokens, by token id (only those the server knows as the caller's). */
export async function tokenLimits(ids: number[]): Promise<Record<number, LimitStatus>> {
  if (!ids.length) return {};
  const r = await api.get<Record<number, LimitStatus>>('/api/token/limits', { ids: ids.join(',') });
  return r.success && r.data ? r.data : {};
}
