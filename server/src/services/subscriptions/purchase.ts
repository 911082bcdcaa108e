// POST /api/subscription/balance/pay (docs/decisions/0015-subscription-plans.md): a plan bought with the wallet. One
// transaction debits the wallet with a conditional UPDATE (never below zero; it also locks the user's row, so one
// user's concurrent purchases are serialised), writes the order as pending and activates it as every paid order is
// (orders.ts activateOrder: max_purchase_per_user checked behind that lock, the subscription and its windows, the
// group upgrade and new-api's zero-amount top_ups row); any refusal rolls all of it back. new-api's log row follows
// the commit (logs may live in their own database). payablePlan is the gateways' check before they take an order.
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { quotaPerUnit, TOPUP_PENDING } from '../topup.js';
import { UserFacingError } from '../users.js';
import { lockUserTx, PLAN_NOT_FOUND, purchaseLimitReached, PURCHASE_LIMIT_REACHED, type PlanRow } from './grant.js';
import { activateOrder, afterActivation } from './orders.js';

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

/**
 * The plan a payment gateway may be asked to sell to the user: enabled, and the user's max_purchase_per_user not
 * reached yet (as new-api checks before a gateway order; activation checks again, behind the user's lock).
 */
export async function payablePlan(ctx: AppContext, userId: number, planId: number): Promise<PlanRow> {
  const plan = await purchasablePlan(ctx, planId);
  if (await purchaseLimitReached(ctx.db, userId, plan)) throw new UserFacingError(PURCHASE_LIMIT_REACHED);
  return plan;
}

/** The request's plan_id: a positive integer, else new-api's 参数错误. */
export function planIdOf(body: Record<string, unknown>): number {
  const id = body.plan_id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) throw new UserFacingError('参数错误');
  return id;
}

export interface BalancePurchase {
  /** 0 when answered from an earlier purchase of the same request_id */
  subscriptionId: number;
  tradeNo: string;
  cost: number;
}

/**
 * The request's optional request_id (ours; new-api's console sends none): the same id names the same purchase, so a
 * click retried after a lost answer buys once. 1–64 letters, digits, `-` or `_`; anything else is 参数错误.
 */
export function requestIdOf(body: Record<string, unknown>): string | null {
  const id = body.request_id;
  if (id === undefined || id === null || id === '') return null;
  if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw new UserFacingError('参数错误');
  return id;
}

/** The earlier purchase of the same request: its order, once it succeeded. */
async function sameRequest(ctx: AppContext, userId: number, tradeNo: string): Promise<BalancePurchase | null> {
  const order = await ctx.db
    .selectFrom('subscription_orders')
    .select(['status', 'provider_payload'])
    .where('trade_no', '=', tradeNo)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (!order || order.status !== 'success') return null;
  const cost = Number(/charged_quota=(\d+)/.exec(order.provider_payload ?? '')?.[1] ?? 0);
  return { subscriptionId: 0, tradeNo, cost };
}

/**
 * Buys the plan with the wallet; throws UserFacingError (and changes nothing) on any refusal. With a `requestId`, a
 * purchase already made under it answers its result and charges nothing again: its trade number is derived from the
 * id, and the order's unique index turns a concurrent second attempt away (its transaction, debit included, rolls
 * back).
 */
export async function purchaseWithBalance(
  ctx: AppContext,
  userId: number,
  planId: number,
  now = Math.floor(Date.now() / 1000),
  requestId: string | null = null,
): Promise<BalancePurchase> {
  if (requestId) {
    const done = await sameRequest(ctx, userId, `SUBBALUSR${userId}REQ${requestId}`);
    if (done) return done;
  }
  try {
    return await purchaseOnce(ctx, userId, planId, now, requestId);
  } catch (err) {
    const done = requestId ? await sameRequest(ctx, userId, `SUBBALUSR${userId}REQ${requestId}`) : null;
    if (done) return done;
    throw err;
  }
}

async function purchaseOnce(
  ctx: AppContext,
  userId: number,
  planId: number,
  now: number,
  requestId: string | null,
): Promise<BalancePurchase> {
  // read before the transaction: on MySQL the first read of a transaction fixes its snapshot, and the counts
  // behind the user's lock must see the purchases committed while this one waited for it
  const plan = await purchasablePlan(ctx, planId);
  const cost = balanceCost(ctx, Number(plan.price_amount));
  const money = Number(plan.price_amount);
  const tradeNo = requestId ? `SUBBALUSR${userId}REQ${requestId}` : balanceTradeNo(userId);
  const result = await ctx.db.transaction().execute(async (trx) => {
    if (!(await lockUserTx(trx, userId, cost))) throw new UserFacingError(INSUFFICIENT_BALANCE);
    const order = {
      user_id: userId,
      plan_id: plan.id,
      money,
      trade_no: tradeNo,
      payment_method: 'balance',
      payment_provider: 'balance',
      status: TOPUP_PENDING,
      create_time: now,
      complete_time: 0,
      provider_payload: `charged_quota=${cost}`,
    };
    await trx.insertInto('subscription_orders').values(order).execute();
    return activateOrder(ctx, trx, order, plan, { now });
  });
  await afterActivation(
    ctx,
    result,
    `使用余额购买订阅成功，套餐: ${plan.title}，支付金额: ${money.toFixed(2)}，扣除额度: ${cost}`,
  );
  return { subscriptionId: result.subscriptionId, tradeNo, cost };
}
