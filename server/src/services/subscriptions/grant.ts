// Creating a user_subscriptions row from a plan (docs/decisions/0015-subscription-plans.md), shared by the balance
// purchase and the admin's bind: the caller's transaction has already locked the user's row (lockUserTx), so the
// checks made here (max_purchase_per_user, the queue of the same plan, the user's group) see every earlier grant of
// that user and none can slip in between.
import type { Insertable, Kysely, Selectable } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../db/schema.js';
import type { SubscriptionPlansTable, UserSubscriptionsTable } from '../../db/schema-subscriptions.js';
import { zoneOrLocal } from '../limits/periods.js';
import { UserFacingError } from '../users.js';
import { newApiNextResetTime, normalizeResetPeriod, slotEnd, type SubscriptionWindows } from './windows.js';

export const PURCHASE_LIMIT_REACHED = '已达到该套餐购买上限';
export const PLAN_NOT_FOUND = '套餐不存在';

export type PlanRow = Selectable<SubscriptionPlansTable>;

/**
 * Locks the user's row for the rest of the transaction and debits `cost` from the wallet in the same statement, never
 * below zero; false when the wallet holds less (or there is no such user). Every grant to one user goes through it
 * first, so one user's purchases and binds are serialised (SQLite serialises whole transactions anyway), and on MySQL
 * (repeatable read) the reads that follow see what the previous grant committed: the lock comes before any snapshot.
 */
export async function lockUserTx(trx: Kysely<Database>, userId: number, cost: number): Promise<boolean> {
  let q = trx
    .updateTable('users')
    .set((eb) => ({ quota: eb('quota', '-', cost) }))
    .where('id', '=', userId);
  if (cost > 0) q = q.where('quota', '>=', cost);
  const r = await q.executeTakeFirst();
  if (Number(r.numUpdatedRows) === 1) return true;
  // MySQL counts an update that changed nothing (cost 0) as no row: the user's existence decides
  if (cost > 0) return false;
  return !!(await trx.selectFrom('users').select('id').where('id', '=', userId).executeTakeFirst());
}

/** new-api's calcPlanEndTime: calendar years and months (a month past the 31st overflows as Go's AddDate does). */
export function planEndTime(start: number, plan: Pick<PlanRow, 'duration_unit' | 'duration_value' | 'custom_seconds'>) {
  const n = Number(plan.duration_value);
  const d = new Date(start * 1000);
  switch (plan.duration_unit) {
    case 'year':
      d.setUTCFullYear(d.getUTCFullYear() + n);
      return Math.floor(d.getTime() / 1000);
    case 'month':
      d.setUTCMonth(d.getUTCMonth() + n);
      return Math.floor(d.getTime() / 1000);
    case 'day':
      return start + n * 86400;
    case 'hour':
      return start + n * 3600;
    case 'custom':
      if (Number(plan.custom_seconds) > 0) return start + Number(plan.custom_seconds);
  }
  throw new UserFacingError('订阅时长配置无效');
}

/** The id of a row just inserted (PostgreSQL answers it with RETURNING, the others as insertId). */
async function insertSubscription(
  ctx: AppContext,
  trx: Kysely<Database>,
  values: Insertable<UserSubscriptionsTable>,
): Promise<number> {
  const q = trx.insertInto('user_subscriptions').values(values);
  if (ctx.dbKind === 'postgres') return Number((await q.returning('id').executeTakeFirstOrThrow()).id);
  return Number((await q.executeTakeFirstOrThrow()).insertId);
}

/**
 * The group a new upgrading subscription remembers to restore. When the user's group is already another active
 * subscription's upgrade, the chain's origin is carried on (that subscription's prev_user_group), so the last of an
 * overlapping chain to end restores the group the user had before the first (new-api restored the previous link's
 * upgrade: bug 5 of the decision). '' when the user already is in the upgrade group by other means.
 */
async function groupToRestore(trx: Kysely<Database>, userId: number, current: string, upgrade: string, now: number) {
  const chain = await trx
    .selectFrom('user_subscriptions')
    .select('prev_user_group')
    .where('user_id', '=', userId)
    .where('status', '=', 'active')
    .where('end_time', '>', now)
    .where('upgrade_group', '=', current)
    .where('prev_user_group', '<>', '')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  if (chain?.prev_user_group) return chain.prev_user_group;
  return current !== upgrade ? current : '';
}

export interface Granted {
  subscriptionId: number;
  start: number;
  end: number;
  /** the group the user was moved to, '' when it did not change */
  upgradedTo: string;
}

/** max_purchase_per_user (0 = none) against every subscription of the plan the user ever had, as new-api counts. */
export async function purchaseLimitReached(
  db: Kysely<Database>,
  userId: number,
  plan: Pick<PlanRow, 'id' | 'max_purchase_per_user'>,
): Promise<boolean> {
  const max = Number(plan.max_purchase_per_user ?? 0);
  if (max <= 0) return false;
  const row = await db
    .selectFrom('user_subscriptions')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('user_id', '=', userId)
    .where('plan_id', '=', plan.id)
    .executeTakeFirstOrThrow();
  return Number(row.n) >= max;
}

/**
 * Inserts the subscription (and its subscription_usage row with the plan's windows as limits) in the caller's
 * transaction, after lockUserTx. A plan bought again while an earlier subscription of it is still running is queued:
 * it starts when the last of them ends. `enforceLimit`: max_purchase_per_user counts every subscription of the plan
 * the user ever had, as new-api's does.
 */
export async function grantPlanTx(
  ctx: AppContext,
  trx: Kysely<Database>,
  args: { userId: number; plan: PlanRow; source: string; now: number; enforceLimit: boolean },
): Promise<Granted> {
  const { userId, plan, now } = args;
  if (args.enforceLimit && (await purchaseLimitReached(trx, userId, plan))) {
    throw new UserFacingError(PURCHASE_LIMIT_REACHED);
  }
  const queue = await trx
    .selectFrom('user_subscriptions')
    .select((eb) => eb.fn.max('end_time').as('last'))
    .where('user_id', '=', userId)
    .where('plan_id', '=', plan.id)
    .where('status', '=', 'active')
    .where('end_time', '>', now)
    .executeTakeFirst();
  const start = Math.max(now, Number(queue?.last ?? 0));
  const end = planEndTime(start, plan);

  const limits = await trx
    .selectFrom('subscription_plan_limits')
    .selectAll()
    .where('plan_id', '=', plan.id)
    .executeTakeFirst();
  const windows: SubscriptionWindows = {
    start,
    end,
    mainReset: normalizeResetPeriod(plan.quota_reset_period),
    mainCustomSeconds: Number(plan.quota_reset_custom_seconds ?? 0),
    rollingSeconds: Number(limits?.rolling_seconds ?? 0),
    limits: {
      main: Number(plan.total_amount),
      rolling: Number(limits?.rolling_amount ?? 0),
      daily: Number(limits?.daily_amount ?? 0),
      weekly: Number(limits?.weekly_amount ?? 0),
      monthly: Number(limits?.monthly_amount ?? 0),
    },
  };
  const zone = zoneOrLocal(ctx.options.get('UsageLimitTimeZone'));
  const nextReset = newApiNextResetTime(slotEnd('main', windows, start, zone), windows);

  const upgrade = (plan.upgrade_group ?? '').trim();
  let prevGroup = '';
  let upgradedTo = '';
  if (upgrade) {
    const user = await trx.selectFrom('users').select('group').where('id', '=', userId).executeTakeFirstOrThrow();
    prevGroup = await groupToRestore(trx, userId, user.group, upgrade, now);
    if (user.group !== upgrade) {
      await trx.updateTable('users').set({ group: upgrade }).where('id', '=', userId).execute();
      upgradedTo = upgrade;
    }
  }

  const subscriptionId = await insertSubscription(ctx, trx, {
    user_id: userId,
    plan_id: plan.id,
    amount_total: windows.limits.main,
    amount_used: 0,
    start_time: start,
    end_time: end,
    status: 'active',
    source: args.source,
    last_reset_time: nextReset > 0 ? start : 0,
    next_reset_time: nextReset,
    upgrade_group: upgrade,
    prev_user_group: prevGroup,
    created_at: now,
    updated_at: now,
  });
  // every window's period end 0: "an earlier period", so the first charge starts each one at zero (windows.ts)
  await trx
    .insertInto('subscription_usage')
    .values({
      user_subscription_id: subscriptionId,
      user_id: userId,
      main_limit: windows.limits.main,
      rolling_limit: windows.limits.rolling,
      daily_limit: windows.limits.daily,
      weekly_limit: windows.limits.weekly,
      monthly_limit: windows.limits.monthly,
      rolling_seconds: windows.rollingSeconds,
    })
    .execute();
  return { subscriptionId, start, end, upgradedTo };
}

/**
 * After a subscription ends (expiry, invalidation, deletion): the user's group goes back to what it was before the
 * chain of upgrades, unless another running subscription still upgrades, or the user was moved to another group in
 * the meantime. `ended`: the subscriptions that just ended, latest first wins. Answers the group restored, or ''.
 */
export async function restoreGroupTx(
  trx: Kysely<Database>,
  userId: number,
  ended: Array<{ id: number; upgrade_group: string | null; prev_user_group: string | null; end_time: number | null }>,
  now: number,
): Promise<string> {
  const upgrading = ended.filter((s) => (s.upgrade_group ?? '').trim() && (s.prev_user_group ?? '').trim());
  if (upgrading.length === 0) return '';
  const other = await trx
    .selectFrom('user_subscriptions')
    .select('id')
    .where('user_id', '=', userId)
    .where('status', '=', 'active')
    .where('end_time', '>', now)
    .where('upgrade_group', '<>', '')
    .where(
      'id',
      'not in',
      ended.map((s) => s.id),
    )
    .limit(1)
    .executeTakeFirst();
  if (other) return '';
  const user = await trx.selectFrom('users').select('group').where('id', '=', userId).executeTakeFirst();
  if (!user) return '';
  const sub = [...upgrading]
    .sort((a, b) => Number(b.end_time) - Number(a.end_time))
    .find((s) => s.upgrade_group!.trim() === user.group);
  const target = sub?.prev_user_group?.trim() ?? '';
  if (!target || target === user.group) return '';
  // conditional on the group read: an admin's change in between is kept
  const r = await trx
    .updateTable('users')
    .set({ group: target })
    .where('id', '=', userId)
    .where('group', '=', user.group)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1 ? target : '';
}
