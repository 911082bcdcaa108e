// Subscription plans in the console (docs/decisions/0015-subscription-plans.md, "Console"): the shapes the plan routes
// answer, the window display (bar, what is left, when it resets), durations, and the admin form's checks and body.
// Pure functions: the pages format with them and the tests check them without rendering.

/** A plan as new-api's JSON has it. */
export interface Plan {
  id: number;
  title: string;
  subtitle: string;
  price_amount: number;
  currency: string;
  duration_unit: string;
  duration_value: number;
  custom_seconds: number;
  enabled: boolean;
  sort_order: number;
  stripe_price_id: string;
  creem_product_id: string;
  max_purchase_per_user: number;
  upgrade_group: string;
  total_amount: number;
  quota_reset_period: string;
  quota_reset_custom_seconds: number;
  created_at?: number;
  updated_at?: number;
}

/** Our windows (quota units, 0 = no such window) and scope (empty = every model / group). */
export interface PlanLimits {
  rolling_seconds: number;
  rolling_amount: number;
  daily_amount: number;
  weekly_amount: number;
  monthly_amount: number;
  models: string[];
  groups: string[];
}

export interface PlanView {
  plan: Plan;
  /** null: new-api's single window from total_amount and quota_reset_period */
  limits: PlanLimits | null;
}

export type Slot = 'main' | 'rolling' | 'daily' | 'weekly' | 'monthly';

export interface WindowView {
  slot: Slot;
  limit: number;
  used: number;
  remaining: number | null;
  /** end of the current period (unix seconds); 0 = it lasts until the subscription ends */
  resets_at: number;
}

export interface Subscription {
  id: number;
  user_id: number;
  plan_id: number;
  amount_total: number;
  amount_used: number;
  start_time: number;
  end_time: number;
  status: string;
  source: string;
  upgrade_group: string;
}

export interface SubscriptionSummary {
  subscription: Subscription;
  windows?: WindowView[];
}

export const BILLING_PREFERENCES = ['subscription_first', 'wallet_first', 'subscription_only', 'wallet_only'] as const;
export type BillingPreference = (typeof BILLING_PREFERENCES)[number];

export interface SelfSubscriptions {
  billing_preference: BillingPreference;
  subscriptions: SubscriptionSummary[];
  all_subscriptions: SubscriptionSummary[];
}

// ---- windows ----

/** How full a window's bar is, 0–100 (one decimal); a window without a limit shows an empty bar. */
export function barPercent(w: Pick<WindowView, 'limit' | 'used'>): number {
  if (!(w.limit > 0)) return 0;
  const p = (Math.max(0, w.used) / w.limit) * 100;
  return Math.min(100, Math.round(p * 10) / 10);
}

/** What is left in the window: the server's figure, else limit − used (never below 0); null = no limit. */
export function windowRemaining(w: Pick<WindowView, 'limit' | 'used' | 'remaining'>): number | null {
  if (w.remaining !== null && w.remaining !== undefined) return Math.max(0, w.remaining);
  return w.limit > 0 ? Math.max(0, w.limit - w.used) : null;
}

/**
 * The windows worth a bar: those with a limit. A plan whose only window is new-api's unlimited total still shows it
 * (what was used); beside limited windows it would be a bar that never fills.
 */
export function shownWindows(ws: WindowView[]): WindowView[] {
  const limited = ws.filter((w) => w.limit > 0);
  return limited.length ? limited : ws;
}

export type RelativeUnit = 'minute' | 'hour' | 'day';

/** A reset: at the plan's end, or at a time (shown as a date and time and as "in 3 hours"). */
export type ResetLabel = { kind: 'planEnd' } | { kind: 'at'; at: number; value: number; unit: RelativeUnit };

/** `resets_at` for display at `now` (both unix seconds): the relative part in the largest whole unit that fits. */
export function resetLabel(resetsAt: number, now: number): ResetLabel {
  if (!(resetsAt > 0)) return { kind: 'planEnd' };
  const diff = Math.max(0, resetsAt - now);
  if (diff < 3600) return { kind: 'at', at: resetsAt, value: Math.max(1, Math.ceil(diff / 60)), unit: 'minute' };
  if (diff < 86400) return { kind: 'at', at: resetsAt, value: Math.round(diff / 3600), unit: 'hour' };
  return { kind: 'at', at: resetsAt, value: Math.round(diff / 86400), unit: 'day' };
}

// ---- durations ----

export type DurationUnit = 'year' | 'month' | 'week' | 'day' | 'hour' | 'minute' | 'second';

/** A number of seconds as one count and unit: the largest unit dividing it exactly (90000 s → 25 hour). */
export function secondsAsUnit(seconds: number): { value: number; unit: DurationUnit } {
  const s = Math.max(0, Math.trunc(seconds));
  if (s > 0 && s % 86400 === 0) return { value: s / 86400, unit: 'day' };
  if (s > 0 && s % 3600 === 0) return { value: s / 3600, unit: 'hour' };
  if (s > 0 && s % 60 === 0) return { value: s / 60, unit: 'minute' };
  return { value: s, unit: 'second' };
}

/** A plan's length as a count and unit (new-api's units; custom from its seconds). */
export function planDuration(p: Pick<Plan, 'duration_unit' | 'duration_value' | 'custom_seconds'>): {
  value: number;
  unit: DurationUnit;
} {
  switch (p.duration_unit) {
    case 'year':
    case 'month':
    case 'day':
    case 'hour':
      return { value: p.duration_value, unit: p.duration_unit };
    default:
      return secondsAsUnit(p.custom_seconds);
  }
}

/** A plan's windows as the console lists them (period and amount), new-api's main one first. */
export type PlanWindow =
  | { slot: 'main'; period: string; customSeconds: number; amount: number }
  | { slot: 'rolling'; seconds: number; amount: number }
  | { slot: 'daily' | 'weekly' | 'monthly'; amount: number };

export function planWindows(v: PlanView): PlanWindow[] {
  const out: PlanWindow[] = [];
  const p = v.plan;
  // total 0 is new-api's "no limit": no main window to show
  if (p.total_amount > 0)
    out.push({
      slot: 'main',
      period: p.quota_reset_period || 'never',
      customSeconds: p.quota_reset_custom_seconds,
      amount: p.total_amount,
    });
  const l = v.limits;
  if (!l) return out;
  if (l.rolling_amount > 0) out.push({ slot: 'rolling', seconds: l.rolling_seconds, amount: l.rolling_amount });
  for (const slot of ['daily', 'weekly', 'monthly'] as const) {
    const amount = l[`${slot}_amount`];
    if (amount > 0) out.push({ slot, amount });
  }
  return out;
}

/** Whether a plan has a window that resets on the site's calendar (its first period after a purchase is partial). */
export function hasCalendarWindow(v: PlanView): boolean {
  return planWindows(v).some(
    (w) =>
      w.slot === 'daily' ||
      w.slot === 'weekly' ||
      w.slot === 'monthly' ||
      (w.slot === 'main' && w.period !== 'never' && w.period !== 'custom'),
  );
}

// ---- subscriptions ----

/** A user's subscriptions split for display: running now, bought but not started (queued), and the rest. */
export function splitSubscriptions(all: SubscriptionSummary[], now: number) {
  const running: SubscriptionSummary[] = [];
  const queued: SubscriptionSummary[] = [];
  const history: SubscriptionSummary[] = [];
  for (const s of all) {
    const sub = s.subscription;
    if (sub.status !== 'active' || sub.end_time <= now) history.push(s);
    else if (sub.start_time > now) queued.push(s);
    else running.push(s);
  }
  return { running, queued, history };
}

/** The shown state of a subscription: queued (starts later), active, expired, or cancelled. */
export function subscriptionState(s: Subscription, now: number): 'queued' | 'active' | 'expired' | 'cancelled' {
  if (s.status === 'cancelled') return 'cancelled';
  if (s.status !== 'active' || s.end_time <= now) return 'expired';
  return s.start_time > now ? 'queued' : 'active';
}

/**
 * When a purchase of `planId` would start: the server queues a plan bought again behind the running (or already
 * queued) one of the same plan, so it starts at their latest end; null when it starts now.
 */
export function queuedStart(all: SubscriptionSummary[], planId: number, now: number): number | null {
  let start: number | null = null;
  for (const { subscription: s } of all) {
    if (s.plan_id !== planId || s.status !== 'active' || s.end_time <= now) continue;
    start = Math.max(start ?? 0, s.end_time);
  }
  return start;
}

/** The wallet's cost of a plan bought with the balance (the server's rule: price × quota per unit, rounded up). */
export function balanceCost(price: number, perUnit: number): number {
  if (!(price > 0)) return 0;
  return Math.ceil(Math.round(Math.round(price * 1e6) * perUnit) / 1e6);
}

// ---- the admin form ----

export const DURATION_UNITS = ['year', 'month', 'day', 'hour', 'custom'] as const;
export const RESET_PERIODS = ['never', 'daily', 'weekly', 'monthly', 'custom'] as const;

/** The drawer's values: amounts in quota units (QuotaInput shows them in the site's unit), null when emptied. */
export interface PlanFormValues {
  title: string;
  subtitle: string;
  price_amount: number | null;
  currency: string;
  duration_unit: string;
  duration_value: number | null;
  custom_seconds: number | null;
  total_amount: number | null;
  quota_reset_period: string;
  quota_reset_custom_seconds: number | null;
  max_purchase_per_user: number | null;
  upgrade_group: string;
  stripe_price_id: string;
  creem_product_id: string;
  sort_order: number | null;
  enabled: boolean;
  rolling_seconds: number | null;
  rolling_amount: number | null;
  daily_amount: number | null;
  weekly_amount: number | null;
  monthly_amount: number | null;
  models: string[];
  groups: string[];
}

export function defaultPlanForm(): PlanFormValues {
  return {
    title: '',
    subtitle: '',
    price_amount: 0,
    currency: 'USD',
    duration_unit: 'month',
    duration_value: 1,
    custom_seconds: 0,
    total_amount: 0,
    quota_reset_period: 'never',
    quota_reset_custom_seconds: 0,
    max_purchase_per_user: 0,
    upgrade_group: '',
    stripe_price_id: '',
    creem_product_id: '',
    sort_order: 0,
    enabled: true,
    rolling_seconds: 0,
    rolling_amount: 0,
    daily_amount: 0,
    weekly_amount: 0,
    monthly_amount: 0,
    models: [],
    groups: [],
  };
}

export function planToForm(v: PlanView): PlanFormValues {
  const p = v.plan;
  const l = v.limits;
  return {
    title: p.title,
    subtitle: p.subtitle,
    price_amount: p.price_amount,
    currency: p.currency || 'USD',
    duration_unit: p.duration_unit || 'month',
    duration_value: p.duration_value,
    custom_seconds: p.custom_seconds,
    total_amount: p.total_amount,
    quota_reset_period: p.quota_reset_period || 'never',
    quota_reset_custom_seconds: p.quota_reset_custom_seconds,
    max_purchase_per_user: p.max_purchase_per_user,
    upgrade_group: p.upgrade_group,
    stripe_price_id: p.stripe_price_id,
    creem_product_id: p.creem_product_id,
    sort_order: p.sort_order,
    enabled: p.enabled,
    rolling_seconds: l?.rolling_seconds ?? 0,
    rolling_amount: l?.rolling_amount ?? 0,
    daily_amount: l?.daily_amount ?? 0,
    weekly_amount: l?.weekly_amount ?? 0,
    monthly_amount: l?.monthly_amount ?? 0,
    models: l?.models ?? [],
    groups: l?.groups ?? [],
  };
}

/** The form's error keys (namespace `subscription`). */
export type PlanFormError =
  | 'err.title'
  | 'err.price'
  | 'err.duration'
  | 'err.customSeconds'
  | 'err.resetSeconds'
  | 'err.negative'
  | 'err.rollingSeconds';

export interface PlanPayload {
  plan: Omit<Plan, 'id' | 'created_at' | 'updated_at'>;
  limits: PlanLimits;
}

const whole = (n: number | null) => (n === null || !Number.isFinite(n) ? 0 : Math.trunc(n));

/**
 * The form checked as the server would (its texts come back otherwise) and the `{plan, limits}` body. `limits` is
 * always sent: all zero and no scope removes the plan's windows, which is what an emptied form means.
 */
export function checkPlanForm(
  v: PlanFormValues,
): { ok: true; payload: PlanPayload } | { ok: false; error: PlanFormError } {
  const title = v.title.trim();
  if (!title) return { ok: false, error: 'err.title' };
  const price = v.price_amount ?? 0;
  if (!Number.isFinite(price) || price < 0 || price > 9999) return { ok: false, error: 'err.price' };
  const counts = [
    v.duration_value,
    v.custom_seconds,
    v.total_amount,
    v.quota_reset_custom_seconds,
    v.max_purchase_per_user,
    v.rolling_seconds,
    v.rolling_amount,
    v.daily_amount,
    v.weekly_amount,
    v.monthly_amount,
  ].map(whole);
  if (counts.some((n) => n < 0)) return { ok: false, error: 'err.negative' };
  const unit = v.duration_unit;
  if (unit === 'custom' && whole(v.custom_seconds) <= 0) return { ok: false, error: 'err.customSeconds' };
  if (unit !== 'custom' && whole(v.duration_value) <= 0) return { ok: false, error: 'err.duration' };
  if (v.quota_reset_period === 'custom' && whole(v.quota_reset_custom_seconds) <= 0)
    return { ok: false, error: 'err.resetSeconds' };
  if (whole(v.rolling_amount) > 0 && whole(v.rolling_seconds) <= 0) return { ok: false, error: 'err.rollingSeconds' };
  const names = (xs: string[]) => [...new Set(xs.map((x) => x.trim()).filter(Boolean))];
  return {
    ok: true,
    payload: {
      plan: {
        title,
        subtitle: v.subtitle.trim(),
        price_amount: price,
        currency: v.currency || 'USD',
        duration_unit: unit,
        duration_value: unit === 'custom' ? 0 : whole(v.duration_value),
        custom_seconds: unit === 'custom' ? whole(v.custom_seconds) : 0,
        enabled: v.enabled,
        sort_order: whole(v.sort_order),
        stripe_price_id: v.stripe_price_id.trim(),
        creem_product_id: v.creem_product_id.trim(),
        max_purchase_per_user: whole(v.max_purchase_per_user),
        upgrade_group: v.upgrade_group.trim(),
        total_amount: whole(v.total_amount),
        quota_reset_period: v.quota_reset_period,
        quota_reset_custom_seconds: v.quota_reset_period === 'custom' ? whole(v.quota_reset_custom_seconds) : 0,
      },
      limits: {
        rolling_seconds: whole(v.rolling_amount) > 0 ? whole(v.rolling_seconds) : 0,
        rolling_amount: whole(v.rolling_amount),
        daily_amount: whole(v.daily_amount),
        weekly_amount: whole(v.weekly_amount),
        monthly_amount: whole(v.monthly_amount),
        models: names(v.models),
        groups: names(v.groups),
      },
    },
  };
}
