// What a user sees of their own subscriptions (GET /api/subscription/self) and their billing preference (PUT
// /api/subscription/self/preference), docs/decisions/0015-subscription-plans.md: new-api's `{subscription}` summaries
// with our `windows` beside each (per window: limit, use and what is left in the current period, and when it resets),
// and `billing_preference` inside the JSON of users.setting, where new-api keeps it.
import type { Selectable } from 'kysely';
import type { AppContext } from '../../context.js';
import type { SubscriptionUsageTable, UserSubscriptionsTable } from '../../db/schema-subscriptions.js';
import { zoneOrLocal } from '../limits/periods.js';
import { UserFacingError } from '../users.js';
import {
  mainFromNewApi,
  normalizeResetPeriod,
  remaining,
  slotEnd,
  trackedSlots,
  usedIn,
  type Slot,
  type SlotState,
  type SubscriptionWindows,
} from './windows.js';

/** new-api's values; anything else reads as the default, subscription_first (common.NormalizeBillingPreference). */
export const BILLING_PREFERENCES = ['subscription_first', 'wallet_first', 'subscription_only', 'wallet_only'] as const;
export type BillingPreference = (typeof BILLING_PREFERENCES)[number];

export function normalizeBillingPreference(v: unknown): BillingPreference {
  const s = typeof v === 'string' ? v.trim() : '';
  return (BILLING_PREFERENCES as readonly string[]).includes(s) ? (s as BillingPreference) : 'subscription_first';
}

/** users.setting as an object; a missing or unreadable value is empty (new-api's GetSetting ignores the error). */
function parseSetting(raw: string | null | undefined): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(raw || '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export async function billingPreferenceOf(ctx: AppContext, userId: number): Promise<BillingPreference> {
  const row = await ctx.db.selectFrom('users').select('setting').where('id', '=', userId).executeTakeFirst();
  return normalizeBillingPreference(parseSetting(row?.setting).billing_preference);
}

/**
 * Stores the preference (normalised) beside the user's other settings and answers it. A body that is not an
 * object, or a preference that is not a string, is new-api's 参数错误 and changes nothing.
 */
export async function setBillingPreference(ctx: AppContext, userId: number, body: unknown): Promise<BillingPreference> {
  const raw = body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
  const value = raw?.billing_preference;
  if (!raw || (value !== undefined && value !== null && typeof value !== 'string'))
    throw new UserFacingError('参数错误');
  const pref = normalizeBillingPreference(value);
  await ctx.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('users').select('setting').where('id', '=', userId).executeTakeFirst();
    const setting = { ...parseSetting(row?.setting), billing_preference: pref };
    await trx
      .updateTable('users')
      .set({ setting: JSON.stringify(setting) })
      .where('id', '=', userId)
      .execute();
  });
  ctx.changes.publish({ kind: 'user', id: userId });
  return pref;
}

type SubscriptionRow = Selectable<UserSubscriptionsTable>;

/** A subscription as new-api's JSON has it (model.UserSubscription). */
export function subscriptionJson(r: SubscriptionRow) {
  return {
    id: Number(r.id),
    user_id: Number(r.user_id),
    plan_id: Number(r.plan_id),
    amount_total: Number(r.amount_total),
    amount_used: Number(r.amount_used),
    start_time: Number(r.start_time ?? 0),
    end_time: Number(r.end_time ?? 0),
    status: r.status ?? '',
    source: r.source ?? '',
    last_reset_time: Number(r.last_reset_time ?? 0),
    next_reset_time: Number(r.next_reset_time ?? 0),
    upgrade_group: r.upgrade_group ?? '',
    prev_user_group: r.prev_user_group ?? '',
    created_at: Number(r.created_at ?? 0),
    updated_at: Number(r.updated_at ?? 0),
  };
}

/** One window as the console shows it; `remaining` null when the window has no limit. */
export interface WindowView {
  slot: Slot;
  limit: number;
  used: number;
  remaining: number | null;
  /** when the current period ends (unix seconds); 0 when it lasts until the subscription ends */
  resets_at: number;
}

interface PlanWindowsInfo {
  quota_reset_period: string | null;
  quota_reset_custom_seconds: number | null;
  rolling_seconds: number | null;
}

/** Every tracked window of a running subscription at `now`, from its usage row (or new-api's columns). */
export function windowViews(
  sub: SubscriptionRow,
  usage: Selectable<SubscriptionUsageTable> | undefined,
  plan: PlanWindowsInfo | undefined,
  now: number,
  zone: string,
): WindowView[] {
  const w: SubscriptionWindows = {
    start: Number(sub.start_time ?? 0),
    end: Number(sub.end_time ?? 0),
    mainReset: normalizeResetPeriod(plan?.quota_reset_period),
    mainCustomSeconds: Number(plan?.quota_reset_custom_seconds ?? 0),
    rollingSeconds: Number(usage?.rolling_seconds ?? 0) || Number(plan?.rolling_seconds ?? 0),
    limits: {
      main: Number(usage?.main_limit ?? sub.amount_total),
      rolling: Number(usage?.rolling_limit ?? 0),
      daily: Number(usage?.daily_limit ?? 0),
      weekly: Number(usage?.weekly_limit ?? 0),
      monthly: Number(usage?.monthly_limit ?? 0),
    },
  };
  const stateOf = (slot: Slot): SlotState => {
    if (!usage)
      return slot === 'main'
        ? mainFromNewApi(
            {
              amount_total: Number(sub.amount_total),
              amount_used: Number(sub.amount_used),
              next_reset_time: Number(sub.next_reset_time ?? 0),
              end_time: w.end,
            },
            w,
            now,
            zone,
          )
        : { limit: 0, used: 0, end: 0 };
    return {
      limit: Number(usage[`${slot}_limit`]),
      used: Number(usage[`${slot}_used`]),
      end: Number(usage[`${slot}_end`]),
    };
  };
  return trackedSlots(w).map((slot) => {
    const state = stateOf(slot);
    const end = slotEnd(slot, w, now, zone);
    const left = remaining(state, end);
    return {
      slot,
      limit: state.limit,
      used: usedIn(state, end),
      remaining: Number.isFinite(left) ? left : null,
      resets_at: end < w.end ? end : 0,
    };
  });
}

/** Running: new-api's active (status active, end still ahead), queued renewals included. */
const isRunning = (r: SubscriptionRow, now: number) => r.status === 'active' && Number(r.end_time) > now;

/** A user's subscriptions, newest end first (new-api's order), each with its windows while it runs. */
export async function subscriptionSummaries(ctx: AppContext, userId: number, now: number) {
  const rows = await ctx.db
    .selectFrom('user_subscriptions')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('end_time', 'desc')
    .orderBy('id', 'desc')
    .execute();
  const running = rows.filter((r) => isRunning(r, now));
  const ids = running.map((r) => r.id);
  const planIds = [...new Set(running.map((r) => Number(r.plan_id)))];
  const [usages, plans] = await Promise.all([
    ids.length
      ? ctx.db.selectFrom('subscription_usage').selectAll().where('user_subscription_id', 'in', ids).execute()
      : [],
    planIds.length
      ? ctx.db
          .selectFrom('subscription_plans as p')
          .leftJoin('subscription_plan_limits as l', 'l.plan_id', 'p.id')
          .select(['p.id', 'p.quota_reset_period', 'p.quota_reset_custom_seconds', 'l.rolling_seconds'])
          .where('p.id', 'in', planIds)
          .execute()
      : [],
  ]);
  const usageById = new Map(usages.map((u) => [Number(u.user_subscription_id), u]));
  const planById = new Map(plans.map((p) => [Number(p.id), p]));
  const zone = zoneOrLocal(ctx.options.get('UsageLimitTimeZone'));
  const all = rows.map((r) => ({
    subscription: subscriptionJson(r),
    windows: isRunning(r, now)
      ? windowViews(r, usageById.get(Number(r.id)), planById.get(Number(r.plan_id)), now, zone)
      : [],
  }));
  return { active: all.filter((_, i) => isRunning(rows[i], now)), all };
}

/** GET /api/subscription/self's data. */
export async function selfView(ctx: AppContext, userId: number, now = Math.floor(Date.now() / 1000)) {
  const [pref, summaries] = await Promise.all([
    billingPreferenceOf(ctx, userId),
    subscriptionSummaries(ctx, userId, now),
  ]);
  return { billing_preference: pref, subscriptions: summaries.active, all_subscriptions: summaries.all };
}
