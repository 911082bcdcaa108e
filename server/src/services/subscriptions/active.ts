// The running subscriptions a relay request may bill (docs/decisions/0015-subscription-plans.md, "Hot-path cost"):
// per user, read once per sync period (or after the `user` change every purchase, bind, invalidation and expiry
// publishes) and kept in memory with what the reservation needs to name each window's period without reading the row.
// A site without plans costs one size check per request; a user without subscriptions one map lookup.
import type { AppContext } from '../../context.js';
import { planCache, type PlanView } from './plans.js';
import { normalizeBillingPreference, type BillingPreference } from './self.js';
import { mainFromNewApi, normalizeResetPeriod, type SlotState, type SubscriptionWindows } from './windows.js';

/** A running subscription as the relay bills it. */
export interface ActiveSub {
  id: number;
  userId: number;
  planId: number;
  start: number;
  end: number;
  /** the limits bought (subscription_usage's snapshot); the period lengths come from the plan */
  limits: SubscriptionWindows['limits'];
  /** the rolling window's length as bought; 0 for rows kept before it was (the plan's then) */
  rollingSeconds: number;
  /**
   * a subscription new-api created has no subscription_usage row yet: its `main` slot as new-api's columns say
   * (written into the row by the first reservation)
   */
  newApiMain: SlotState | null;
}

/** What a reservation tries before (or after) the wallet: the user's matching subscriptions, in order. */
export interface PlanRoute {
  preference: BillingPreference;
  subs: Array<{ sub: ActiveSub; windows: SubscriptionWindows; title: string }>;
  zone: string;
}

interface Entry {
  subs: ActiveSub[];
  at: number;
}

export class ActiveSubscriptions {
  private readonly mem = new Map<number, Entry>();
  private readonly ttlMs: number;
  private readonly stop: () => void;
  /** the database reads of users' subscriptions (a user without any is read once per sync period) */
  loads = 0;

  constructor(private readonly ctx: AppContext) {
    this.ttlMs = ctx.config.syncFrequencySec * 1000;
    this.stop = ctx.changes.subscribe((ev) => {
      if (ev.kind === 'user') this.mem.delete(ev.id);
    });
    ctx.onClose(() => this.stop());
  }

  /** Drops a user's entry (their subscriptions changed on this node). */
  forget(userId: number): void {
    this.mem.delete(userId);
  }

  async of(userId: number): Promise<ActiveSub[]> {
    const e = this.mem.get(userId);
    if (e && Date.now() - e.at < this.ttlMs) return e.subs;
    const subs = await this.load(userId);
    this.mem.set(userId, { subs, at: Date.now() });
    return subs;
  }

  /** The user's active subscriptions that have not ended (queued renewals included: filtered by start on use). */
  private async load(userId: number): Promise<ActiveSub[]> {
    this.loads++;
    const now = Math.floor(Date.now() / 1000);
    const rows = await this.ctx.db
      .selectFrom('user_subscriptions as s')
      .leftJoin('subscription_usage as u', 'u.user_subscription_id', 's.id')
      .select([
        's.id',
        's.plan_id',
        's.start_time',
        's.end_time',
        's.amount_total',
        's.amount_used',
        's.next_reset_time',
        'u.user_subscription_id as usage_id',
        'u.main_limit',
        'u.rolling_limit',
        'u.daily_limit',
        'u.weekly_limit',
        'u.monthly_limit',
        'u.rolling_seconds',
      ])
      .where('s.user_id', '=', userId)
      .where('s.status', '=', 'active')
      .where('s.end_time', '>', now)
      .orderBy('s.end_time', 'asc')
      .orderBy('s.id', 'asc')
      .execute();
    return rows.map((r) => {
      const hasRow = r.usage_id !== null && r.usage_id !== undefined;
      return {
        id: Number(r.id),
        userId,
        planId: Number(r.plan_id),
        start: Number(r.start_time ?? 0),
        end: Number(r.end_time ?? 0),
        limits: {
          main: Number(hasRow ? r.main_limit : r.amount_total),
          rolling: Number(r.rolling_limit ?? 0),
          daily: Number(r.daily_limit ?? 0),
          weekly: Number(r.weekly_limit ?? 0),
          monthly: Number(r.monthly_limit ?? 0),
        },
        rollingSeconds: Number(r.rolling_seconds ?? 0),
        newApiMain: hasRow
          ? null
          : { limit: Number(r.amount_total), used: Number(r.amount_used), end: Number(r.next_reset_time ?? 0) },
      };
    });
  }
}

/** A subscription's windows: the limits it was bought with, the period lengths of its plan. */
export function windowsOf(sub: ActiveSub, plan: PlanView): SubscriptionWindows {
  return {
    start: sub.start,
    end: sub.end,
    mainReset: normalizeResetPeriod(plan.plan.quota_reset_period),
    mainCustomSeconds: plan.plan.quota_reset_custom_seconds,
    rollingSeconds: sub.rollingSeconds || (plan.limits?.rolling_seconds ?? 0),
    limits: sub.limits,
  };
}

/** new-api's main slot of a subscription it created, as our row will hold it (the first reservation writes it). */
export function newApiMainState(sub: ActiveSub, w: SubscriptionWindows, now: number, zone: string): SlotState {
  const m = sub.newApiMain!;
  return mainFromNewApi(
    { amount_total: m.limit, amount_used: m.used, next_reset_time: m.end, end_time: sub.end },
    w,
    now,
    zone,
  );
}

/** The plan's scope: its models and using groups (empty = all). */
function inScope(plan: PlanView, model: string, group: string): boolean {
  const l = plan.limits;
  if (!l) return true;
  return (l.models.length === 0 || l.models.includes(model)) && (l.groups.length === 0 || l.groups.includes(group));
}

const caches = new WeakMap<AppContext, ActiveSubscriptions>();

export function activeSubscriptions(ctx: AppContext): ActiveSubscriptions {
  let c = caches.get(ctx);
  if (!c) caches.set(ctx, (c = new ActiveSubscriptions(ctx)));
  return c;
}

/**
 * Whether a request of this user may bill a plan at all, without waiting: false on a site without plans (once they
 * were read) and for the preference `wallet_only`. Then the relay skips planRoute and its await.
 */
export function mayBillPlans(ctx: AppContext, user: { setting: Record<string, unknown> }): boolean {
  const plans = planCache(ctx);
  if (plans.loaded && plans.size === 0) return false;
  return user.setting.billing_preference !== 'wallet_only';
}

/**
 * The subscriptions a request of `model` in `group` may bill, by the user's preference; null when it bills the wallet
 * only (no plans on the site, none running for the user, none in scope, or the preference `wallet_only`).
 * `subscription_only` with nothing to bill answers an empty route: the request is refused, the wallet untouched.
 */
export async function planRoute(
  ctx: AppContext,
  user: { id: number; setting: Record<string, unknown> },
  model: string,
  group: string,
  zone: string,
): Promise<PlanRoute | null> {
  const plans = planCache(ctx);
  if (!plans.loaded) await plans.ready;
  const preference = normalizeBillingPreference(user.setting.billing_preference);
  if (plans.size === 0 || preference === 'wallet_only') return null;
  const subs = await activeSubscriptions(ctx).of(user.id);
  const now = Math.floor(Date.now() / 1000);
  const out: PlanRoute['subs'] = [];
  for (const sub of subs) {
    const plan = plans.get(sub.planId);
    if (!plan || sub.start > now || sub.end <= now || !inScope(plan, model, group)) continue;
    out.push({ sub, windows: windowsOf(sub, plan), title: plan.plan.title });
  }
  if (out.length === 0 && preference !== 'subscription_only') return null;
  return { preference, subs: out, zone };
}
