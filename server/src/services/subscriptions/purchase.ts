// POST /api/subscription/balance/pay (docs/decisions/0015-subscription-plans.md): a plan bought with the wallet. One
// transaction debits the wallet with a conditional UPDATE (never below zero; it also locks the user's row, so one
// user's concurrent purchases are serialised), checks max_purchase_per_user behind that lock, writes the order, the
// subscription and its windows, the group upgrade and new-api's zero-amount top_ups row; any refusal rolls all of it
// back. new-api's log row follows the commit (logs may live in their own database).
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { quotaPerUnit } from '../topup.js';
import { LOG_TYPE_TOPUP, recordUserLog } from '../user-logs.js';
import { UserFacingError } from '../users.js';
import { grantPlanTx, lockUserTx, PLAN_NOT_FOUND, type PlanRow } from './grant.js';

export const PLAN_DISABLED = '套餐未启用';
export const INSUFFICIENT_BALANCE = '余额不足';

/** new-api's calcSubscriptionBalanceQuota: price × QuotaPerUnit rounded up, computed on the price's 6 decimals. */
export function balanceCost(ctx: AppContext, price: number): number {
  if (!(price > 0)) return 0;
  const micro = Math.round(price * 1e6);
  return Math.ceil(Math.round(micro * quotaPerUnit(ctx)) / 1e6);
}

/** new-api's trade number for a balance order: SUBBALUSR<user>NO<6 random><nanoseconds>. */
function balanceTradeNo(userId: number): string {
  const nanos = BigInt(Date.now()) * 1_000_000n + (process.hrtime.bigint() % 1_000_000n);
  return `SUBBALUSR${userId}NO${randomBytes(3).toString('hex')}${nanos}`;
}

/** The plan a user may buy: it exists and is enabled. */
async function purchasablePlan(ctx: AppContext, planId: number): Promise<PlanRow> {
  const plan = await ctx.db.selectFrom('subscription_plans').selectAll().where('id', '=', planId).executeTakeFirst();
  if (!plan) throw new UserFacingError(PLAN_NOT_FOUND);
  if (!plan.enabled) throw new UserFacingError(PLAN_DISABLED);
  return plan;
}

/** The request's plan_id: a positive integer, else new-api's 参数错误. */
export function planIdOf(body: Record<string, unknown>): number {
  const id = body.plan_id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) throw new UserFacingError('参数错误');
  return id;
}

export interface BalancePurchase {
  subscriptionId: number;
  tradeNo: string;
  cost: number;
}

/** Buys the plan with the wallet; throws UserFacingError (and changes nothing) on any refusal. */
export async function purchaseWithBalance(
  ctx: AppContext,
  userId: number,
  planId: number,
  now = Math.floor(Date.now() / 1000),
): Promise<BalancePurchase> {
  // read before the transaction: on MySQL the first read of a transaction fixes its snapshot, and the counts
  // behind the user's lock must see the purchases committed while this one waited for it
  const plan = await purchasablePlan(ctx, planId);
  const cost = balanceCost(ctx, Number(plan.price_amount));
  const money = Number(plan.price_amount);
  const tradeNo = balanceTradeNo(userId);
  const result = await ctx.db.transaction().execute(async (trx) => {
    if (!(await lockUserTx(trx, userId, cost))) throw new UserFacingError(INSUFFICIENT_BALANCE);
    const granted = await grantPlanTx(ctx, trx, { userId, plan, source: 'order', now, enforceLimit: true });
    await trx
      .insertInto('subscription_orders')
      .values({
        user_id: userId,
        plan_id: plan.id,
        money,
        trade_no: tradeNo,
        payment_method: 'balance',
        payment_provider: 'balance',
        status: 'success',
        create_time: now,
        complete_time: now,
        provider_payload: `charged_quota=${cost}`,
      })
      .execute();
    // new-api lists subscription purchases beside the top-ups (amount 0: no quota credited)
    await trx
      .insertInto('top_ups')
      .values({
        user_id: userId,
        amount: 0,
        money,
        trade_no: tradeNo,
        payment_method: 'balance',
        create_time: now,
        status: 'success',
      })
      .execute();
    return { subscriptionId: granted.subscriptionId, tradeNo, cost };
  });
  ctx.changes.publish({ kind: 'user', id: userId });
  await recordUserLog(
    ctx,
    userId,
    LOG_TYPE_TOPUP,
    `使用余额购买订阅成功，套餐: ${plan.title}，支付金额: ${money.toFixed(2)}，扣除额度: ${cost}`,
  );
  return result;
}
