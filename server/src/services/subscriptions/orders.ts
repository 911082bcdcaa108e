// Plan orders completed (docs/decisions/0015-subscription-plans.md, "Purchases and idempotency"): every way a plan is
// paid for (the wallet, EPay, Stripe, Creem) ends in activateOrder, inside the caller's transaction. Its first
// statement is the conditional pending → success flip of the order, so replayed or concurrent notifications for one
// trade_no grant one subscription: the losers update no row and answer success without granting again. The
// gateways' callbacks are checked here against the order before anything is granted: the provider that created the
// order, the amount paid and its currency (new-api compared neither: bug 6 of the decision).
import type { Kysely, Selectable } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../db/schema.js';
import type { SubscriptionOrdersTable } from '../../db/schema-subscriptions.js';
import type { LineLog } from '../../lib/request-log.js';
import { nowSec } from '../../lib/time.js';
import { EPAY_TRADE_SUCCESS, epayVerify } from '../epay.js';
import { epayConfig, TOPUP_EXPIRED, TOPUP_PENDING, TOPUP_SUCCESS } from '../topup.js';
import { LOG_TYPE_TOPUP, recordUserLog } from '../user-logs.js';
import { UserFacingError } from '../users.js';
import { grantPlanTx, lockUserTx, type PlanRow } from './grant.js';

export type PlanOrder = Selectable<SubscriptionOrdersTable>;

/** new-api's payment_provider values */
export const PROVIDER_EPAY = 'epay';
export const PROVIDER_STRIPE = 'stripe';
export const PROVIDER_CREEM = 'creem';

/** What an order must be paid, in the currency's minor units, snapshot when the order was created. */
export interface OrderPrice {
  amount: number;
  currency: string;
}

export interface Activation {
  /** false: the order was no longer pending (already activated, or expired): nothing was granted */
  activated: boolean;
  subscriptionId: number;
  userId: number;
}

/**
 * Activates a pending order in the caller's transaction: flips it to success (with the method the payment really
 * used and the provider's payload, when given), locks the user, grants the plan (subscription, windows, group
 * upgrade; max_purchase_per_user checked again behind the lock, so two paid orders cannot pass it) and writes
 * new-api's zero-amount top_ups row under the same trade_no. Throws UserFacingError when the plan cannot be granted,
 * which rolls the flip back. The caller publishes the `user` change and writes the log row after the commit
 * (afterActivation).
 */
export async function activateOrder(
  ctx: AppContext,
  trx: Kysely<Database>,
  order: Pick<PlanOrder, 'trade_no' | 'user_id' | 'money' | 'payment_method' | 'create_time'>,
  plan: PlanRow,
  opts: { now: number; paymentMethod?: string; payload?: string },
): Promise<Activation> {
  const tradeNo = order.trade_no ?? '';
  const userId = Number(order.user_id);
  const method = opts.paymentMethod || order.payment_method || '';
  const flip = await trx
    .updateTable('subscription_orders')
    .set({
      status: TOPUP_SUCCESS,
      complete_time: opts.now,
      payment_method: method,
      ...(opts.payload !== undefined ? { provider_payload: opts.payload } : {}),
    })
    .where('trade_no', '=', tradeNo)
    .where('status', '=', TOPUP_PENDING)
    .executeTakeFirst();
  if (Number(flip.numUpdatedRows) !== 1) return { activated: false, subscriptionId: 0, userId };
  if (!(await lockUserTx(trx, userId, 0))) throw new UserFacingError('用户不存在');
  const granted = await grantPlanTx(ctx, trx, { userId, plan, source: 'order', now: opts.now, enforceLimit: true });
  // new-api lists plan purchases beside the top-ups (amount 0: no quota credited); a row it left pending is reused
  const money = Number(order.money ?? 0);
  const existing = await trx.selectFrom('top_ups').select('id').where('trade_no', '=', tradeNo).executeTakeFirst();
  if (existing) {
    await trx
      .updateTable('top_ups')
      .set({ amount: 0, money, payment_method: method, status: TOPUP_SUCCESS })
      .where('id', '=', existing.id)
      .execute();
  } else {
    await trx
      .insertInto('top_ups')
      .values({
        user_id: userId,
        amount: 0,
        money,
        trade_no: tradeNo,
        payment_method: method,
        create_time: Number(order.create_time ?? opts.now),
        status: TOPUP_SUCCESS,
      })
      .execute();
  }
  return { activated: true, subscriptionId: granted.subscriptionId, userId };
}

/** After the commit of an activation: other nodes drop the user (group, subscriptions), then the log row. */
export async function afterActivation(ctx: AppContext, result: Activation, logText: string): Promise<void> {
  if (!result.activated) return;
  ctx.changes.publish({ kind: 'user', id: result.userId });
  await recordUserLog(ctx, result.userId, LOG_TYPE_TOPUP, logText);
}

export type Completion = 'activated' | 'already' | 'refused';

/**
 * Completes a paid order in its own transaction. 'refused': the plan is gone, or the user reached the plan's
 * max_purchase_per_user since ordering; the order stays pending and the error log names it (the money was taken:
 * an admin refunds or binds by hand).
 */
export async function completePlanOrder(
  ctx: AppContext,
  order: PlanOrder,
  opts: { paymentMethod?: string; payload: string; paid: string },
  log: LineLog,
): Promise<Completion> {
  const plan = await planOf(ctx, order);
  if (!plan) {
    log.error({ tradeNo: order.trade_no, planId: order.plan_id }, 'paid plan order for a plan that no longer exists');
    return 'refused';
  }
  const now = nowSec();
  let result: Activation;
  try {
    result = await ctx.db.transaction().execute((trx) => activateOrder(ctx, trx, order, plan, { now, ...opts }));
  } catch (err) {
    if (!(err instanceof UserFacingError)) throw err;
    log.error({ tradeNo: order.trade_no, reason: err.message }, 'paid plan order refused at activation');
    return 'refused';
  }
  const method = opts.paymentMethod || order.payment_method || '';
  await afterActivation(
    ctx,
    result,
    `在线购买订阅成功，套餐: ${plan.title}，支付金额: ${opts.paid}，支付方式: ${method}`,
  );
  return result.activated ? 'activated' : 'already';
}

const planOf = (ctx: AppContext, order: PlanOrder) =>
  ctx.db.selectFrom('subscription_plans').selectAll().where('id', '=', Number(order.plan_id)).executeTakeFirst();

/** The plan order of a gateway's reference, if it is one (top-up orders live in top_ups). */
export async function findPlanOrder(ctx: AppContext, tradeNo: unknown): Promise<PlanOrder | undefined> {
  if (typeof tradeNo !== 'string' || tradeNo === '') return undefined;
  return ctx.db.selectFrom('subscription_orders').selectAll().where('trade_no', '=', tradeNo).executeTakeFirst();
}

/**
 * The price snapshot of a Stripe or Creem order (provider_payload while pending). An order written without one
 * (new-api's) is expected to be paid the order's money in the plan's currency.
 */
async function expectedPrice(ctx: AppContext, order: PlanOrder): Promise<OrderPrice | null> {
  if (order.status === TOPUP_PENDING && order.provider_payload) {
    try {
      const p = JSON.parse(order.provider_payload) as Partial<OrderPrice>;
      if (Number.isSafeInteger(p.amount) && typeof p.currency === 'string') {
        return { amount: p.amount!, currency: p.currency.toUpperCase() };
      }
    } catch {
      // not ours: fall back to the order and the plan
    }
  }
  const plan = await planOf(ctx, order);
  if (!plan) return null;
  return { amount: Math.round(Number(order.money) * 100), currency: plan.currency.toUpperCase() };
}

/** Whether a paid amount in minor units and its currency are the order's; logs the mismatch. */
async function priceMatches(ctx: AppContext, order: PlanOrder, amount: unknown, currency: unknown, log: LineLog) {
  const expected = await expectedPrice(ctx, order);
  const paidCurrency = typeof currency === 'string' ? currency.toUpperCase() : '';
  if (expected && amount === expected.amount && paidCurrency === expected.currency) return true;
  log.error(
    { tradeNo: order.trade_no, paid: amount, currency: paidCurrency, expected },
    'plan order payment does not match the order',
  );
  return false;
}

function fromProvider(order: PlanOrder, provider: string, log: LineLog): boolean {
  if (order.payment_provider === provider) return true;
  log.warn(
    { tradeNo: order.trade_no, provider: order.payment_provider, via: provider },
    'plan order of another provider',
  );
  return false;
}

type Json = Record<string, unknown>;

/** A paid Stripe Checkout session whose client_reference_id is a plan order (the webhook checked the signature). */
export async function planStripeSessionPaid(ctx: AppContext, order: PlanOrder, session: Json, log: LineLog) {
  if (!fromProvider(order, PROVIDER_STRIPE, log)) return;
  if (!(await priceMatches(ctx, order, session.amount_subtotal, session.currency, log))) return;
  const currency = String(session.currency).toUpperCase();
  const total = typeof session.amount_total === 'number' ? session.amount_total : Number(session.amount_subtotal);
  const payload = { session: session.id, amount_subtotal: session.amount_subtotal, amount_total: total, currency };
  await completePlanOrder(
    ctx,
    order,
    { payload: JSON.stringify(payload), paid: `${(total / minorPerUnit(currency)).toFixed(2)} ${currency}` },
    log,
  );
}

/** An expired Checkout session: only a pending order expires, a late expiry never undoes an activation. */
export async function planStripeSessionExpired(ctx: AppContext, order: PlanOrder, log: LineLog): Promise<void> {
  if (!fromProvider(order, PROVIDER_STRIPE, log)) return;
  await ctx.db
    .updateTable('subscription_orders')
    .set({ status: TOPUP_EXPIRED, complete_time: nowSec() })
    .where('trade_no', '=', order.trade_no)
    .where('status', '=', TOPUP_PENDING)
    .execute();
}

/** A paid Creem checkout whose request_id is a plan order (the webhook checked the signature). */
export async function planCreemPaid(ctx: AppContext, order: PlanOrder, checkout: Json, paid: Json, log: LineLog) {
  if (!fromProvider(order, PROVIDER_CREEM, log)) return;
  if (!(await priceMatches(ctx, order, paid.amount, paid.currency, log))) return;
  const currency = String(paid.currency).toUpperCase();
  const cents = typeof paid.amount_paid === 'number' ? paid.amount_paid : Number(paid.amount);
  const payload = { checkout: checkout.id, order: paid.id, amount: paid.amount, amount_paid: cents, currency };
  await completePlanOrder(
    ctx,
    order,
    { payload: JSON.stringify(payload), paid: `${(cents / 100).toFixed(2)} ${currency}` },
    log,
  );
}

export type EpayOutcome = Completion | 'unpaid' | 'invalid';

/**
 * GET/POST /api/subscription/epay/notify and /return: EPay's signed parameters. The signature, the order's provider
 * and the money paid (the order's, converted when it was created) are checked before the order is activated; the
 * method EPay reports (`type`) becomes the order's payment_method, as new-api.
 */
export async function handlePlanEpayCallback(
  ctx: AppContext,
  params: Record<string, string>,
  log: LineLog,
): Promise<EpayOutcome> {
  const cfg = epayConfig(ctx);
  if (!cfg || !epayVerify(params, cfg.key)) return 'invalid';
  if (params.trade_status !== EPAY_TRADE_SUCCESS) return 'unpaid';
  const order = await findPlanOrder(ctx, params.out_trade_no);
  if (!order) {
    log.warn({ tradeNo: params.out_trade_no }, 'epay notify for an unknown plan order');
    return 'invalid';
  }
  if (!fromProvider(order, PROVIDER_EPAY, log)) return 'invalid';
  const paid = Number(params.money);
  if (!Number.isFinite(paid) || Math.abs(paid - Number(order.money)) > 0.005) {
    log.error({ tradeNo: order.trade_no, paid: params.money, expected: order.money }, 'epay plan payment mismatch');
    return 'invalid';
  }
  const { sign: _sign, ...payload } = params;
  const type = /^[A-Za-z0-9_-]{1,50}$/.test(params.type ?? '') ? params.type : undefined;
  return completePlanOrder(
    ctx,
    order,
    { paymentMethod: type, payload: JSON.stringify(payload), paid: Number(order.money).toFixed(2) },
    log,
  );
}

/** Stripe's zero-decimal currencies: amounts are whole units, not hundredths. */
const ZERO_DECIMAL = new Set(
  'BIF CLP DJF GNF JPY KMF KRW MGA PYG RWF UGX VND VUV XAF XOF XPF'.split(' ').map((c) => c.toUpperCase()),
);

/** Minor units in one unit of a currency, as Stripe counts them. */
export function minorPerUnit(currency: string): number {
  return ZERO_DECIMAL.has(currency.toUpperCase()) ? 1 : 100;
}
