// Stripe top-up (new-api-compat.md §29): a Checkout session per order and the signed webhook that settles it; the
// webhook also completes plan orders (services/subscriptions/orders.ts), whose reference it looks up first.
// The `stripe` package is imported on first use, so a gateway that never sells through Stripe never loads it.
// The order's money is the session's own subtotal (the Stripe price × quantity, before promotion codes), and the
// webhook credits only when the completed session shows that same subtotal; the credit itself goes through
// settleTopUp, so a replayed or concurrent event credits once.
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../context.js';
import type { LineLog } from '../lib/request-log.js';
import { intInput } from '../lib/input.js';
import { nowSec } from '../lib/time.js';
import { logQuota } from './user-logs.js';
import { findPlanOrder, planStripeSessionExpired, planStripeSessionPaid } from './subscriptions/orders.js';
import { TOPUP_EXPIRED, TOPUP_PENDING, quotaPerUnit, settleTopUp, unitsOfAmount, type PayAnswer } from './topup.js';

type StripeModule = typeof import('stripe');
type StripeClient = InstanceType<StripeModule['default']>;

export const STRIPE_DISABLED = 'Stripe 支付未启用';
/** new-api's ceiling on one order, in units */
const MAX_UNITS = 10000;

const error = (data: string): PayAnswer => ({ message: 'error', data });
const trimSlash = (s: string) => s.replace(/\/+$/, '');

let stripeModule: Promise<StripeModule> | undefined;
const loadStripe = () => (stripeModule ??= import('stripe'));

/** On as new-api: the API secret, the webhook secret and the price id are all set. */
export function stripeEnabled(ctx: AppContext): boolean {
  const o = ctx.options;
  return (
    o.get('StripeApiSecret').trim() !== '' &&
    o.get('StripeWebhookSecret').trim() !== '' &&
    o.get('StripePriceId').trim() !== ''
  );
}

/** StripeMinTopUp in the unit `amount` is sent in: dollars with currency display, quota points without. */
function stripeMinTopUp(ctx: AppContext): number {
  const min = ctx.options.num('StripeMinTopUp', 1);
  return ctx.options.bool('DisplayInCurrencyEnabled') ? min : Math.trunc(min * quotaPerUnit(ctx));
}

/** The units (whole dollars credited) an amount buys, or the message refusing it. */
function unitsOf(ctx: AppContext, raw: unknown): number | string {
  const amount = intInput(raw);
  if (amount === null) return '参数错误';
  const units = unitsOfAmount(ctx, amount, stripeMinTopUp(ctx));
  if (typeof units === 'string') return units;
  if (units > MAX_UNITS) return `充值数量不能大于 ${MAX_UNITS}`;
  return units;
}

/** POST /api/user/stripe/amount: units × StripeUnitPrice, the price the Stripe price id is meant to carry. */
export function requestStripeAmount(ctx: AppContext, body: Record<string, unknown>): PayAnswer {
  const units = unitsOf(ctx, body.amount);
  if (typeof units === 'string') return error(units);
  const money = Math.round(units * ctx.options.num('StripeUnitPrice', 8) * 100) / 100;
  if (money < 0.01) return error('充值金额过低');
  return { message: 'success', data: money.toFixed(2) };
}

export async function stripeClient(ctx: AppContext): Promise<StripeClient> {
  const { default: Stripe } = await loadStripe();
  const config: ConstructorParameters<typeof Stripe>[1] = { maxNetworkRetries: 1 };
  if (ctx.config.stripeApiUrl) {
    const url = new URL(ctx.config.stripeApiUrl);
    config.host = url.hostname;
    config.port = url.port || (url.protocol === 'http:' ? 80 : 443);
    config.protocol = url.protocol === 'http:' ? 'http' : 'https';
  }
  return new Stripe(ctx.options.get('StripeApiSecret').trim(), config);
}

/** POST /api/user/stripe/pay: a pending order, then its Checkout session; answers the session's URL. */
export async function requestStripePay(
  ctx: AppContext,
  user: { id: number; email: string },
  body: Record<string, unknown>,
  log: LineLog,
): Promise<PayAnswer> {
  if (body.payment_method !== 'stripe') return error('不支持的支付渠道');
  if (!stripeEnabled(ctx)) return error(STRIPE_DISABLED);
  const units = unitsOf(ctx, body.amount);
  if (typeof units === 'string') return error(units);
  const tradeNo = `ref_${randomBytes(20).toString('hex')}`;
  // The order exists before the session, so a payment can never arrive for an order the gateway does not know.
  try {
    await ctx.db
      .insertInto('top_ups')
      .values({
        user_id: user.id,
        amount: units,
        money: 0,
        trade_no: tradeNo,
        payment_method: 'stripe',
        create_time: nowSec(),
        status: TOPUP_PENDING,
      })
      .execute();
  } catch (err) {
    log.error({ err, tradeNo }, 'creating a stripe top-up order failed');
    return error('创建订单失败');
  }
  const serverAddress = trimSlash(ctx.options.get('ServerAddress'));
  let session: { url: string | null; amount_subtotal: number | null };
  try {
    const stripe = await stripeClient(ctx);
    session = await stripe.checkout.sessions.create({
      mode: 'payment',
      client_reference_id: tradeNo,
      success_url: `${serverAddress}/log`,
      cancel_url: `${serverAddress}/topup`,
      line_items: [{ price: ctx.options.get('StripePriceId').trim(), quantity: units }],
      allow_promotion_codes: ctx.options.bool('StripePromotionCodesEnabled'),
      customer_creation: 'always',
      ...(user.email ? { customer_email: user.email } : {}),
    });
  } catch (err) {
    log.error({ err, tradeNo }, 'creating a stripe checkout session failed');
    await ctx.db.deleteFrom('top_ups').where('trade_no', '=', tradeNo).execute();
    return error('拉起支付失败');
  }
  if (!session.url || typeof session.amount_subtotal !== 'number') {
    log.error({ tradeNo }, 'the stripe checkout session has no url or subtotal');
    await ctx.db.deleteFrom('top_ups').where('trade_no', '=', tradeNo).execute();
    return error('拉起支付失败');
  }
  await ctx.db
    .updateTable('top_ups')
    .set({ money: session.amount_subtotal / 100 })
    .where('trade_no', '=', tradeNo)
    .execute();
  return { message: 'success', data: { pay_link: session.url } };
}

type SessionObject = Record<string, unknown>;

/**
 * POST /api/stripe/webhook with the raw body. Answers the HTTP status: 400 when the signature does not verify,
 * 200 once the event is handled or deliberately ignored (an unknown session, a mismatched amount: a retry would not
 * change them); a database failure throws, so Stripe retries.
 */
export async function handleStripeWebhook(
  ctx: AppContext,
  raw: Buffer,
  signature: string | undefined,
  log: LineLog,
): Promise<number> {
  const secret = ctx.options.get('StripeWebhookSecret').trim();
  if (!secret || !signature) return 400;
  const { default: Stripe } = await loadStripe();
  let event: { type: string; data: { object: unknown } };
  try {
    event = Stripe.webhooks.constructEvent(raw, signature, secret);
  } catch (err) {
    log.warn({ err }, 'stripe webhook signature refused');
    return 400;
  }
  const session = event.data.object as SessionObject;
  switch (event.type) {
    case 'checkout.session.completed':
    case 'checkout.session.async_payment_succeeded':
      await sessionPaid(ctx, session, log);
      break;
    case 'checkout.session.expired':
      await sessionExpired(ctx, session, log);
      break;
    default:
      log.info({ type: event.type }, 'stripe webhook event ignored');
  }
  return 200;
}

async function orderOf(ctx: AppContext, session: SessionObject) {
  const tradeNo = typeof session.client_reference_id === 'string' ? session.client_reference_id : '';
  if (!tradeNo) return undefined;
  return ctx.db.selectFrom('top_ups').selectAll().where('trade_no', '=', tradeNo).executeTakeFirst();
}

async function sessionPaid(ctx: AppContext, session: SessionObject, log: LineLog): Promise<void> {
  // A delayed payment method completes the session unpaid; its async_payment_succeeded event settles it later.
  if (session.status !== 'complete' || session.payment_status !== 'paid') {
    log.info({ id: session.id, status: session.status, payment: session.payment_status }, 'stripe session not paid');
    return;
  }
  // a plan order first, as new-api: its reference never names a top-up
  const planOrder = await findPlanOrder(ctx, session.client_reference_id);
  if (planOrder) return planStripeSessionPaid(ctx, planOrder, session, log);
  const order = await orderOf(ctx, session);
  if (!order) {
    log.warn({ ref: session.client_reference_id }, 'stripe webhook for an unknown order');
    return;
  }
  const expected = Math.round(Number(order.money) * 100);
  if (session.amount_subtotal !== expected) {
    log.error(
      { tradeNo: order.trade_no, paid: session.amount_subtotal, expected },
      'stripe session amount does not match the order',
    );
    return;
  }
  const paid = typeof session.amount_total === 'number' ? session.amount_total / 100 : Number(order.money);
  const currency = typeof session.currency === 'string' ? session.currency.toUpperCase() : '';
  const paidText = `${paid.toFixed(2)} ${currency}`.trim();
  await settleTopUp(
    ctx,
    order,
    (quota) => `使用在线充值成功，充值金额: ${logQuota(ctx, quota)}，支付金额：${paidText}`,
  );
}

async function sessionExpired(ctx: AppContext, session: SessionObject, log: LineLog): Promise<void> {
  if (session.status !== 'expired') return;
  const planOrder = await findPlanOrder(ctx, session.client_reference_id);
  if (planOrder) return planStripeSessionExpired(ctx, planOrder, log);
  const order = await orderOf(ctx, session);
  if (!order) {
    log.warn({ ref: session.client_reference_id }, 'stripe expiry for an unknown order');
    return;
  }
  // only a pending order expires: a late expiry never undoes a credited one
  await ctx.db
    .updateTable('top_ups')
    .set({ status: TOPUP_EXPIRED })
    .where('trade_no', '=', order.trade_no)
    .where('status', '=', TOPUP_PENDING)
    .execute();
}
