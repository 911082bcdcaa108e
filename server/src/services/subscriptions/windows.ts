// The windows of a subscription as pure functions of time (docs/decisions/0015-subscription-plans.md): which period
// ("generation", named by its end) a charge falls into, what is left in it, and the parameters of the one conditional
// UPDATE of a subscription_usage row that reserves against every window at once. Calendar periods are the site's
// (option UsageLimitTimeZone, limits/periods.ts: local midnight, Monday, the 1st, days of 23 or 25 hours around a
// daylight-saving change); rolling windows and new-api's custom reset are aligned to the subscription's start, so a
// process knows the period without reading the row, and no window ends after the subscription does.
import { periodAt } from '../limits/periods.js';

/** The window slots of a subscription_usage row: `main` is new-api's total and reset period, the others are ours. */
export const SLOTS = ['main', 'rolling', 'daily', 'weekly', 'monthly'] as const;
export type Slot = (typeof SLOTS)[number];

/** new-api's quota_reset_period values */
export const RESET_PERIODS = ['never', 'daily', 'weekly', 'monthly', 'custom'] as const;
export type ResetPeriod = (typeof RESET_PERIODS)[number];

/** new-api's NormalizeResetPeriod: an unknown or empty value is `never`. */
export function normalizeResetPeriod(period: string | null | undefined): ResetPeriod {
  const p = (period ?? '').trim();
  return (RESET_PERIODS as readonly string[]).includes(p) ? (p as ResetPeriod) : 'never';
}

/** What a bought subscription was sold with (snapshot at purchase), times in unix seconds, amounts in quota units. */
export interface SubscriptionWindows {
  start: number;
  /** the subscription's end_time: no window ends later */
  end: number;
  /** new-api's quota_reset_period and quota_reset_custom_seconds, for `main` */
  mainReset: ResetPeriod;
  mainCustomSeconds: number;
  rollingSeconds: number;
  /** per slot, 0 = no such window (for `main`: unlimited, yet its use is still counted for new-api) */
  limits: Record<Slot, number>;
}

/** The end of the period of `start + k·length` that contains `t`. */
function alignedEnd(start: number, length: number, t: number): number {
  const from = Math.max(t, start);
  return start + (Math.floor((from - start) / length) + 1) * length;
}

const calendarEnd = (period: 'daily' | 'weekly' | 'monthly', t: number, zone: string) =>
  Math.ceil(periodAt(period, t * 1000, zone).end / 1000);

/**
 * The end (unix seconds) of the slot's period that contains `now`, never after the subscription's end; a window that
 * never resets ends with the subscription. `zone`: the site's time zone ('' = the server's local zone).
 */
export function slotEnd(slot: Slot, w: SubscriptionWindows, now: number, zone: string): number {
  let end: number;
  switch (slot) {
    case 'main':
      if (w.mainReset === 'custom')
        end = w.mainCustomSeconds > 0 ? alignedEnd(w.start, w.mainCustomSeconds, now) : w.end;
      else end = w.mainReset === 'never' ? w.end : calendarEnd(w.mainReset, Math.max(now, w.start), zone);
      break;
    case 'rolling':
      end = w.rollingSeconds > 0 ? alignedEnd(w.start, w.rollingSeconds, now) : w.end;
      break;
    default:
      end = calendarEnd(slot, Math.max(now, w.start), zone);
  }
  return Math.min(end, w.end);
}

/** The slots a charge touches: `main` always (new-api's amount_used), the others when they have a limit. */
export function trackedSlots(w: SubscriptionWindows): Slot[] {
  return SLOTS.filter((slot) => slot === 'main' || w.limits[slot] > 0);
}

/** The end of each tracked slot's current period. */
export function windowEnds(w: SubscriptionWindows, now: number, zone: string): Partial<Record<Slot, number>> {
  return Object.fromEntries(trackedSlots(w).map((slot) => [slot, slotEnd(slot, w, now, zone)]));
}

/** One slot's state as stored in subscription_usage. */
export interface SlotState {
  limit: number;
  used: number;
  end: number;
}

export type UsageRow = Record<Slot, SlotState>;

/** A stored use counts only while its period is the current one: a row still on an earlier period has used nothing. */
export function usedIn(state: SlotState, currentEnd: number): number {
  return state.end < currentEnd ? 0 : state.used;
}

/** What is left in the slot's current period; Infinity when the slot has no limit. */
export function remaining(state: SlotState, currentEnd: number): number {
  if (state.limit <= 0) return Infinity;
  return Math.max(0, state.limit - usedIn(state, currentEnd));
}

/**
 * The parameters of the reservation's UPDATE of one subscription_usage row, for each tracked slot in SLOTS order:
 *   SET <slot>_used = CASE WHEN <slot>_end < :end THEN :pre ELSE <slot>_used + :pre END   (every used column first:
 *       <slot>_end = :end                                                                   MySQL assigns in order)
 *   WHERE user_subscription_id = :id AND, per slot, <slot>_end <= :end
 *     AND (<slot>_limit = 0 OR (CASE WHEN <slot>_end < :end THEN 0 ELSE <slot>_used END) + :pre <= <slot>_limit)
 */
export interface WindowCharge {
  pre: number;
  slots: { slot: Slot; end: number }[];
}

export function chargeFor(w: SubscriptionWindows, now: number, zone: string, pre: number): WindowCharge {
  const ends = windowEnds(w, now, zone);
  return { pre, slots: trackedSlots(w).map((slot) => ({ slot, end: ends[slot]! })) };
}

export type ChargeResult =
  | { ok: true; row: UsageRow }
  /**
   * refused: the slots without room for the charge, and `resetsAt` the latest of their ends (when all of them have
   * room again); stale: the slots the row already has in a later period (another node's clock ahead), to be retried
   * once with the row's ends
   */
  | { ok: false; refused: Slot[]; stale: Slot[]; resetsAt: number };

/** The UPDATE above applied in memory: what the database decides, for SQLite's in-process decisions and the tests. */
export function applyCharge(row: UsageRow, charge: WindowCharge): ChargeResult {
  const refused: Slot[] = [];
  const stale: Slot[] = [];
  for (const { slot, end } of charge.slots) {
    const s = row[slot];
    if (s.end > end) stale.push(slot);
    else if (s.limit > 0 && usedIn(s, end) + charge.pre > s.limit) refused.push(slot);
  }
  if (refused.length > 0 || stale.length > 0) {
    const resetsAt = Math.max(0, ...charge.slots.filter((c) => refused.includes(c.slot)).map((c) => c.end));
    return { ok: false, refused, stale, resetsAt };
  }
  const next = { ...row };
  for (const { slot, end } of charge.slots)
    next[slot] = { ...row[slot], used: usedIn(row[slot], end) + charge.pre, end };
  return { ok: true, row: next };
}

/**
 * A settlement's or refund's correction (final − pre, or −pre): it applies to a slot only while the row is still in
 * the reservation's period (`WHERE <slot>_end = :end`), so a refund after a reset credits nothing and a late extra
 * charge does not burden the new period; the use never goes below 0.
 */
export function applyCorrection(row: UsageRow, charge: WindowCharge, delta: number): UsageRow {
  const next = { ...row };
  for (const { slot, end } of charge.slots)
    if (row[slot].end === end) next[slot] = { ...row[slot], used: Math.max(0, row[slot].used + delta) };
  return next;
}

/**
 * The `main` slot of a subscription new-api created (no subscription_usage row yet): its total, use and next reset;
 * a use counted in a period that already ended (new-api resets lazily) is dropped by the end's comparison.
 */
export function mainFromNewApi(
  sub: { amount_total: number; amount_used: number; next_reset_time: number | null; end_time: number | null },
  w: SubscriptionWindows,
  now: number,
  zone: string,
): SlotState {
  const currentEnd = slotEnd('main', w, now, zone);
  const storedEnd = sub.next_reset_time && sub.next_reset_time > 0 ? sub.next_reset_time : (sub.end_time ?? 0);
  const end = Math.min(storedEnd, currentEnd);
  return { limit: sub.amount_total, used: end < currentEnd ? 0 : sub.amount_used, end };
}

/** new-api's next_reset_time for our `main` end: 0 when the window does not reset before the subscription ends. */
export function newApiNextResetTime(mainEnd: number, w: SubscriptionWindows): number {
  return w.mainReset === 'never' || mainEnd >= w.end ? 0 : mainEnd;
}
