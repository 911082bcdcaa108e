// Online top-up through EPay (new-api-compat.md §9.1): price quote, order creation and the payment notify.
// The notify credits the user exactly once: the order's pending → success flip is a conditional UPDATE in the same
// transaction as the credit, so repeated or concurrent notifies for one trade_no add the quota a single time.
import type { AppContext } from '../context.js';
import type { LineLog } from '../lib/request-log.js';
import { randomAlnum } from '../lib/random.js';
import { nowSec } from '../lib/time.js';
import { intInput } from '../lib/input.js';
import { EPAY_TRADE_SUCCESS, epayPurchase, epayVerify, type EpayConfig } from './epay.js';
import { LOG_TYPE_TOPUP, logQuota, recordUserLog } from './user-logs.js';
import { UserFacingError } from './users.js';

export const TOPUP_PENDING = 'pending';
export const TOPUP_SUCCESS = 'success';
export const TOPUP_EXPIRED = 'expired';
export const ONLINE_TOPUP_DISABLED = '管理员未开启在线充值！';
const NOT_PENDING = '订单状态不是待支付，无法补单';

/**
 * Payment endpoints answer `{message:"success"|"error", data, url?}` instead of the usual envelope (new-api-compat.md
 * §3.1).
 */
export type PayAnswer = { message: 'success'; data: unknown; url?: string } | { message: 'error'; data: string };

const error = (data: string): PayAnswer => ({ message: 'error', data });

export function epayConfig(ctx: AppContext): EpayConfig | null {
  const address = ctx.options.get('PayAddress');
  const pid = ctx.options.get('EpayId');
  const key = ctx.options.get('EpayKey');
  return address && pid && key ? { address, pid, key } : null;
}

export function quotaPerUnit(ctx: AppContext): number {
  return ctx.options.num('QuotaPerUnit', 500000) || 500000;
}

/** MinTopUp in the unit `amount` is sent in: dollars with currency display, quota points without. */
export function minTopUp(ctx: AppContext): number {
  const min = ctx.options.num('MinTopUp', 1);
  return ctx.options.bool('DisplayInCurrencyEnabled') ? min : Math.trunc(min * quotaPerUnit(ctx));
}

/** TopupGroupRatio of the group; a missing or 0 ratio counts as 1 (new-api-compat.md §9.1). */
export function topupGroupRatio(ctx: AppContext, group: string): number {
  const ratios = ctx.options.json<Record<string, unknown>>('TopupGroupRatio', {});
  const r = Number(ratios?.[group]);
  return Number.isFinite(r) && r > 0 ? r : 1;
}

const parseAmount = (v: unknown) => intInput(v);

interface Quote {
  /** whole dollars (USD units) that will be credited, the unit of top_ups.amount */
  units: number;
  /** money to pay, rounded to cents */
  money: number;
}

/**
 * The whole units (dollars of quota) a top-up amount stands for, or the message refusing it: an amount is in units
 * when currency display is on, else in quota, which must be a whole number of units (EPay and Stripe alike).
 */
export function unitsOfAmount(ctx: AppContext, amount: number, min: number): number | string {
  if (amount < min) return `充值数量不能小于 ${min}`;
  let units = amount;
  if (!ctx.options.bool('DisplayInCurrencyEnabled')) {
    const perUnit = quotaPerUnit(ctx);
    if (amount % perUnit !== 0) return `充值数量必须是 ${perUnit} 的整数倍`;
    units = amount / perUnit;
  }
  return units <= 0 ? '充值金额过低' : units;
}

/**
 * Validates an amount and prices it. new-api stored `amount / QuotaPerUnit` with integer division when currency
 * display is off, so a user paying for 1.5 units got 1; here such amounts are refused instead of under-credited.
 */
function quote(ctx: AppContext, rawAmount: unknown, group: string): Quote | string {
  const amount = parseAmount(rawAmount);
  if (amount === null) return '参数错误';
  const units = unitsOfAmount(ctx, amount, minTopUp(ctx));
  if (typeof units === 'string') return units;
  const money = Math.round(units * ctx.options.num('Price', 7.3) * topupGroupRatio(ctx, group) * 100) / 100;
  if (money < 0.01) return '充值金额过低';
  return { units, money };
}

/** POST /api/user/amount: the price of an amount for the caller's group. */
export function requestAmount(ctx: AppContext, body: Record<string, unknown>, group: string): PayAnswer {
  const q = quote(ctx, body.amount, group);
  if (typeof q === 'string') return error(q);
  return { message: 'success', data: q.money.toFixed(2) };
}

function paymentType(method: unknown): string {
  if (method === 'zfb' || method === 'alipay') return 'alipay';
  return 'wxpay';
}

const trimSlash = (s: string) => s.replace(/\/+$/, '');

/** POST /api/user/pay: records a pending order and answers the signed gateway form. */
export async function requestPay(
  ctx: AppContext,
  user: { id: number; group: string },
  body: Record<string, unknown>,
  log: LineLog,
): Promise<PayAnswer> {
  const cfg = epayConfig(ctx);
  if (!cfg) return error(ONLINE_TOPUP_DISABLED);
  const q = quote(ctx, body.amount, user.group);
  if (typeof q === 'string') return error(q);
  const serverAddress = trimSlash(ctx.options.get('ServerAddress'));
  const callback = trimSlash(ctx.options.get('CustomCallbackAddress')) || serverAddress;
  const tradeNo = `USR${user.id}NO${randomAlnum(6)}${nowSec()}`;
  const method = paymentType(body.payment_method);
  const { url, params } = epayPurchase(cfg, {
    type: method,
    tradeNo,
    name: `TUC${parseAmount(body.amount)}`,
    money: q.money.toFixed(2),
    notifyUrl: `${callback}/api/user/epay/notify`,
    returnUrl: `${serverAddress}/log`,
  });
  try {
    await ctx.db
      .insertInto('top_ups')
      .values({
        user_id: user.id,
        amount: q.units,
        money: q.money,
        trade_no: tradeNo,
        payment_method: method,
        create_time: nowSec(),
        status: TOPUP_PENDING,
      })
      .execute();
  } catch (err) {
    log.error({ err, tradeNo }, 'creating a top-up order failed');
    return error('创建订单失败');
  }
  return { message: 'success', data: params, url };
}

/**
 * GET/POST /api/user/epay/notify. Answers the plain text `success` or `fail`. Unlike new-api, `success` is sent only
 * after the order was credited (or found already credited), so a database failure makes the gateway retry, and the
 * paid money must match the order.
 */
export async function handleEpayNotify(
  ctx: AppContext,
  params: Record<string, string>,
  log: LineLog,
): Promise<'success' | 'fail'> {
  const cfg = epayConfig(ctx);
  if (!cfg || !epayVerify(params, cfg.key)) return 'fail';
  if (params.trade_status !== EPAY_TRADE_SUCCESS) return 'success';
  const tradeNo = params.out_trade_no ?? '';
  const order = tradeNo
    ? await ctx.db.selectFrom('top_ups').selectAll().where('trade_no', '=', tradeNo).executeTakeFirst()
    : undefined;
  if (!order) {
    log.warn({ tradeNo }, 'epay notify for an unknown order');
    return 'fail';
  }
  const paid = Number(params.money);
  if (!Number.isFinite(paid) || Math.abs(paid - Number(order.money)) > 0.005) {
    log.error({ tradeNo, paid: params.money, expected: order.money }, 'epay notify money does not match the order');
    return 'fail';
  }
  // the method the payer really used (the gateway may offer others than the one asked for), as new-api records it
  const method = /^[A-Za-z0-9_-]{1,50}$/.test(params.type ?? '') ? params.type : undefined;
  await settleTopUp(
    ctx,
    order,
    (quota) => `使用在线充值成功，充值金额: ${logQuota(ctx, quota)}，支付金额：${Number(order.money).toFixed(6)}`,
    method,
  );
  return 'success';
}

type TopUpOrder = { trade_no: string; user_id: number; amount: number; payment_method: string };

/**
 * The quota an order credits: a Creem order's amount is its product's quota (as new-api stores it), every other
 * order's amount is whole units of `QuotaPerUnit`. (new-api's manual completion multiplied a Creem order's quota by
 * QuotaPerUnit again.)
 */
export function orderQuota(ctx: AppContext, order: TopUpOrder): number {
  if (order.payment_method === 'creem') return Math.round(Number(order.amount));
  return Math.round(Number(order.amount) * quotaPerUnit(ctx));
}

/**
 * Completes a pending order: the pending → success flip is a conditional UPDATE in the transaction that credits
 * the order's quota (orderQuota) to the user, so repeated or concurrent completions of one trade_no credit once.
 * Answers whether this call was the one that credited; the type-1 log row is written only then. `paymentMethod`:
 * the method the gateway reports, written with the flip (an order written before the column existed has none).
 */
export async function settleTopUp(
  ctx: AppContext,
  order: TopUpOrder,
  logText: (quota: number) => string,
  paymentMethod?: string,
): Promise<boolean> {
  const quota = orderQuota(ctx, order);
  const userId = Number(order.user_id);
  const credited = await ctx.db.transaction().execute(async (trx) => {
    const flip = await trx
      .updateTable('top_ups')
      .set({ status: TOPUP_SUCCESS, ...(paymentMethod ? { payment_method: paymentMethod } : {}) })
      .where('trade_no', '=', order.trade_no)
      .where('status', '=', TOPUP_PENDING)
      .executeTakeFirst();
    if (Number(flip.numUpdatedRows) !== 1) return false;
    await trx
      .updateTable('users')
      .set((eb) => ({ quota: eb('quota', '+', quota) }))
      .where('id', '=', userId)
      .execute();
    return true;
  });
  if (credited) {
    ctx.changes.publish({ kind: 'user', id: userId });
    await recordUserLog(ctx, userId, LOG_TYPE_TOPUP, logText(quota));
  }
  return credited;
}

/**
 * POST /api/user/topup/complete (admin): completes a pending order by hand, as new-api's 补单. Only a pending order
 * is completed: a second completion (or one racing a webhook that credited first) is refused, where new-api answered
 * success, so the admin sees that this call credited nothing. The type-1 log row names the admin who completed it.
 */
export async function completeTopUpByAdmin(ctx: AppContext, rawTradeNo: unknown, adminId: number): Promise<void> {
  const tradeNo = typeof rawTradeNo === 'string' ? rawTradeNo.trim() : '';
  if (!tradeNo) throw new UserFacingError('参数错误');
  const order = await ctx.db.selectFrom('top_ups').selectAll().where('trade_no', '=', tradeNo).executeTakeFirst();
  if (!order) throw new UserFacingError('充值订单不存在');
  const credited =
    order.status === TOPUP_PENDING &&
    (await settleTopUp(
      ctx,
      order,
      (quota) =>
        `管理员补单成功，充值金额: ${logQuota(ctx, quota)}，支付金额：${Number(order.money).toFixed(6)}，管理员ID ${adminId}`,
    ));
  if (!credited) throw new UserFacingError(NOT_PENDING);
}
