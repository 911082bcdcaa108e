// The admin's hand on users' subscriptions (docs/decisions/0015-subscription-plans.md), new-api's routes and texts:
// bind a plan without payment (its group upgrade, max_purchase_per_user and queueing as a purchase), list a user's
// subscriptions, invalidate one (cancelled, ended now) or delete it; ending one gives the user's group back as the
// expiry does (grant.ts restoreGroupTx). Each answers new-api's notice of the group change, or ''.
import type { AppContext } from '../../context.js';
import { UserFacingError } from '../users.js';
import { grantPlanTx, lockUserTx, PLAN_NOT_FOUND, restoreGroupTx } from './grant.js';
import { subscriptionJson } from './self.js';

export const SUBSCRIPTION_NOT_FOUND = '订阅不存在';

const nowSec = () => Math.floor(Date.now() / 1000);

/** Binds the plan to the user (source `admin`); the notice names the group the user was moved to. */
export async function bindPlan(ctx: AppContext, userId: number, planId: number, now = nowSec()): Promise<string> {
  const plan = await ctx.db.selectFrom('subscription_plans').selectAll().where('id', '=', planId).executeTakeFirst();
  if (!plan) throw new UserFacingError(PLAN_NOT_FOUND);
  const granted = await ctx.db.transaction().execute(async (trx) => {
    if (!(await lockUserTx(trx, userId, 0))) throw new UserFacingError('用户不存在');
    return grantPlanTx(ctx, trx, { userId, plan, source: 'admin', now, enforceLimit: true });
  });
  ctx.changes.publish({ kind: 'user', id: userId });
  return granted.upgradedTo ? `用户分组将升级到 ${granted.upgradedTo}` : '';
}

/** Every subscription of the user, newest end first (new-api's GetAllUserSubscriptions). */
export async function userSubscriptions(ctx: AppContext, userId: number) {
  const rows = await ctx.db
    .selectFrom('user_subscriptions')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('end_time', 'desc')
    .orderBy('id', 'desc')
    .execute();
  return rows.map((r) => ({ subscription: subscriptionJson(r) }));
}

/**
 * Ends a subscription now: `cancel` marks it cancelled with end_time now (new-api's invalidate), otherwise its rows
 * are deleted. The group is restored in the same transaction; the notice names the group given back.
 */
async function endSubscription(ctx: AppContext, id: number, mode: 'cancel' | 'delete', now: number) {
  const owner = await ctx.db.selectFrom('user_subscriptions').select('user_id').where('id', '=', id).executeTakeFirst();
  if (!owner) throw new UserFacingError(SUBSCRIPTION_NOT_FOUND);
  const userId = Number(owner.user_id);
  const result = await ctx.db.transaction().execute(async (trx) => {
    // the user's lock before any read (lockUserTx): a purchase or bind of the same user committed meanwhile is seen
    await lockUserTx(trx, userId, 0);
    const sub = await trx.selectFrom('user_subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
    if (!sub) throw new UserFacingError(SUBSCRIPTION_NOT_FOUND);
    if (mode === 'cancel') {
      await trx
        .updateTable('user_subscriptions')
        .set({ status: 'cancelled', end_time: now, updated_at: now })
        .where('id', '=', id)
        .execute();
    } else {
      await trx.deleteFrom('subscription_usage').where('user_subscription_id', '=', id).execute();
      await trx.deleteFrom('user_subscriptions').where('id', '=', id).execute();
    }
    return { userId, restored: await restoreGroupTx(trx, userId, [{ ...sub, id: Number(sub.id) }], now) };
  });
  ctx.changes.publish({ kind: 'user', id: result.userId });
  return result.restored ? `用户分组将回退到 ${result.restored}` : '';
}

export const invalidateSubscription = (ctx: AppContext, id: number, now = nowSec()) =>
  endSubscription(ctx, id, 'cancel', now);

export const deleteSubscription = (ctx: AppContext, id: number, now = nowSec()) =>
  endSubscription(ctx, id, 'delete', now);
