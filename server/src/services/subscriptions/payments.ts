// Plans bought through a payment gateway (docs/decisions/0015-subscription-plans.md, step 7): POST
// /api/subscription/{epay,stripe,creem}/pay with new-api's shapes. Each checks the plan (enabled, the user's purchase
// limit) and the gateway's settings before writing anything, records a pending subscription_orders row with what
// the gateway must be paid, then asks the gateway; a gateway that refuses leaves no order behind. The callbacks that
// activate the order are in orders.ts (EPay) and the top-up webhooks (Stripe, Creem), which look for a plan order
// first.
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.js';
import type { LineLog } from '../../lib/request-log.js';
import { randomAlnum } from '../../lib/random.js';
import { nowSec } from '../../lib/time.js';
import { epayPurchase } from '../epay.js';
import { createCheckout, CREEM_DISABLED } from '../creem-topup.js';
import { STRIPE_DISABLED, stripeClient } from '../stripe-topup.js';
import { epayConfig, ONLINE_TOPUP_DISABLED, TOPUP_PENDING, type PayAnswer } from '../topup.js';
import { UserFacingError } from '../users.js';
import type { PlanRow } from './grant.js';
import { minorPerUnit, PROVIDER_CREEM, PROVIDER_EPAY, PROVIDER_STRIPE, type OrderPrice } from './orders.js';
import { payablePlan, planIdOf } from './purchase.js';

export const PLAN_PRICE_TOO_LOW = '套餐金额过低';
export const PAY_METHOD_UNKNOWN = '支付方式不存在';
export const CREEM_PRODUCT_MISSING = '该套餐未配置 CreemProductId';

const error = (data: string): PayAnswer => ({ message: 'error', data });
const trimSlash = (s: string) => s.replace(/\/+$/, '');
/** new-api's plan references at Stripe and Creem: sub_ref_ and a SHA-1's length of hex */
const gatewayTradeNo = () => `sub_ref_${randomBytes(20).toString('hex')}`;

interface Buyer {
  id: number;
  email: string;
  username: string;
}

async function insertPending(
  ctx: AppContext,
  order: { userId: number; plan: PlanRow; money: number; tradeNo: string; method: string; provider: string },
  price: OrderPrice | null,
  log: LineLog,
): Promise<boolean> {
  try {
    await ctx.db
      .insertInto('subscription_orders')
      .values({
        user_id: order.userId,
        plan_id: order.plan.id,
        money: order.money,
        trade_no: order.tradeNo,
        payment_method: order.method,
        payment_provider: order.provider,
        status: TOPUP_PENDING,
        create_time: nowSec(),
        complete_time: 0,
        provider_payload: price ? JSON.stringify(price) : '',
      })
      .execute();
    return true;
  } catch (err) {
    log.error({ err, tradeNo: order.tradeNo }, 'creating a plan order failed');
    return false;
  }
}

const dropOrder = (ctx: AppContext, tradeNo: string) =>
  ctx.db.deleteFrom('subscription_orders').where('trade_no', '=', tradeNo).execute();

/** The EPay type of the request's payment_method (the console's zfb / wx as the top-up route reads them). */
function epayType(method: unknown): string | null {
  if (method === 'alipay' || method === 'zfb') return 'alipay';
  if (method === 'wxpay' || method === 'wx') return 'wxpay';
  return null;
}

/**
 * What EPay is asked for a plan, in yuan: a USD price × `Price` (the top-ups' yuan per dollar), a CNY price as it
 * is. Any other currency is refused: new-api sent the price as yuan whatever its currency (bug 6 of the decision).
 */
function epayMoney(ctx: AppContext, plan: PlanRow): number {
  const currency = (plan.currency || 'USD').trim().toUpperCase();
  const price = Number(plan.price_amount);
  let yuan: number;
  if (currency === 'USD') yuan = price * ctx.options.num('Price', 7.3);
  else if (currency === 'CNY') yuan = price;
  else throw new UserFacingError(`易支付只支持以 USD 或 CNY 计价的套餐，该套餐的币种是 ${currency}`);
  const money = Math.round(yuan * 100) / 100;
  if (!(money >= 0.01)) throw new UserFacingError(PLAN_PRICE_TOO_LOW);
  return money;
}

/** POST /api/subscription/epay/pay {plan_id, payment_method}: the signed form for the gateway. */
export async function requestPlanEpay(
  ctx: AppContext,
  userId: number,
  body: Record<string, unknown>,
  log: LineLog,
): Promise<PayAnswer> {
  const plan = await payablePlan(ctx, userId, planIdOf(body));
  const type = epayType(body.payment_method);
  if (!type) throw new UserFacingError(PAY_METHOD_UNKNOWN);
  const cfg = epayConfig(ctx);
  if (!cfg) throw new UserFacingError(ONLINE_TOPUP_DISABLED);
  const money = epayMoney(ctx, plan);
  const tradeNo = `SUBUSR${userId}NO${randomAlnum(6)}${nowSec()}`;
  const order = { userId, plan, money, tradeNo, method: type, provider: PROVIDER_EPAY };
  if (!(await insertPending(ctx, order, null, log))) return error('创建订单失败');
  const callback = trimSlash(ctx.options.get('CustomCallbackAddress')) || trimSlash(ctx.options.get('ServerAddress'));
  const { url, params } = epayPurchase(cfg, {
    type,
    tradeNo,
    name: `SUB:${plan.title}`,
    money: money.toFixed(2),
    notifyUrl: `${callback}/api/subscription/epay/notify`,
    returnUrl: `${callback}/api/subscription/epay/return`,
  });
  return { message: 'success', data: params, url };
}

/** On for plans when the API secret and the webhook secret are set (the top-ups' price id is not needed). */
function stripeReady(ctx: AppContext): boolean {
  return ctx.options.get('StripeApiSecret').trim() !== '' && ctx.options.get('StripeWebhookSecret').trim() !== '';
}

/**
 * POST /api/subscription/stripe/pay {plan_id}: a Checkout session for one payment of the plan, with its
 * stripe_price_id, else an inline price from price_amount and currency. The order keeps the session's own subtotal
 * and currency, which the webhook must see paid. Unlike new-api the session is a one-time payment, never a Stripe
 * subscription: renewals are bought again, not charged on their own (a recurring price id is refused by Stripe).
 */
export async function requestPlanStripe(
  ctx: AppContext,
  user: Buyer,
  body: Record<string, unknown>,
  log: LineLog,
): Promise<PayAnswer> {
  const plan = await payablePlan(ctx, user.id, planIdOf(body));
  if (!stripeReady(ctx)) throw new UserFacingError(STRIPE_DISABLED);
  const priceId = (plan.stripe_price_id ?? '').trim();
  const currency = (plan.currency || 'USD').trim().toUpperCase();
  const unitAmount = Math.round(Number(plan.price_amount) * minorPerUnit(currency));
  if (!priceId && !(unitAmount >= 1)) throw new UserFacingError(PLAN_PRICE_TOO_LOW);
  const tradeNo = gatewayTradeNo();
  const order = {
    userId: user.id,
    plan,
    money: Number(plan.price_amount),
    tradeNo,
    method: 'stripe',
    provider: PROVIDER_STRIPE,
  };
  if (!(await insertPending(ctx, order, null, log))) return error('创建订单失败');
  const serverAddress = trimSlash(ctx.options.get('ServerAddress'));
  let session: { url: string | null; amount_subtotal: number | null; currency: string | null };
  try {
    const stripe = await stripeClient(ctx);
    session = await stripe.checkout.sessions.create({
      mode: 'payment',
      client_reference_id: tradeNo,
      success_url: `${serverAddress}/topup`,
      cancel_url: `${serverAddress}/topup`,
      line_items: [
        priceId
          ? { price: priceId, quantity: 1 }
          : {
              price_data: {
                currency: currency.toLowerCase(),
                unit_amount: unitAmount,
                product_data: { name: plan.title },
              },
              quantity: 1,
            },
      ],
      ...(user.email ? { customer_email: user.email } : {}),
    });
  } catch (err) {
    log.error({ err, tradeNo }, 'creating a stripe checkout session for a plan failed');
    await dropOrder(ctx, tradeNo);
    return error('拉起支付失败');
  }
  if (!session.url || typeof session.amount_subtotal !== 'number' || !session.currency) {
    log.error({ tradeNo }, 'the stripe checkout session has no url, subtotal or currency');
    await dropOrder(ctx, tradeNo);
    return error('拉起支付失败');
  }
  const price: OrderPrice = { amount: session.amount_subtotal, currency: session.currency.toUpperCase() };
  await ctx.db
    .updateTable('subscription_orders')
    .set({ money: price.amount / minorPerUnit(price.currency), provider_payload: JSON.stringify(price) })
    .where('trade_no', '=', tradeNo)
    .execute();
  return { message: 'success', data: { pay_link: session.url } };
}

/** On for plans when the API key and the webhook secret are set (the top-ups' product list is not needed). */
function creemReady(ctx: AppContext): boolean {
  return ctx.options.get('CreemApiKey').trim() !== '' && ctx.options.get('CreemWebhookSecret').trim() !== '';
}

/**
 * POST /api/subscription/creem/pay {plan_id}: a checkout of the plan's creem_product_id. The Creem product carries
 * its own price: the order expects the plan's price_amount in the plan's currency, which the webhook must see paid.
 */
export async function requestPlanCreem(
  ctx: AppContext,
  user: Buyer,
  body: Record<string, unknown>,
  log: LineLog,
): Promise<PayAnswer> {
  const plan = await payablePlan(ctx, user.id, planIdOf(body));
  const productId = (plan.creem_product_id ?? '').trim();
  if (!productId) throw new UserFacingError(CREEM_PRODUCT_MISSING);
  if (!creemReady(ctx)) throw new UserFacingError(CREEM_DISABLED);
  const currency = (plan.currency || 'USD').trim().toUpperCase();
  const money = Number(plan.price_amount);
  const tradeNo = gatewayTradeNo();
  const price: OrderPrice = { amount: Math.round(money * 100), currency };
  const order = { userId: user.id, plan, money, tradeNo, method: 'creem', provider: PROVIDER_CREEM };
  if (!(await insertPending(ctx, order, price, log))) return error('创建订单失败');
  const product = { productId, name: plan.title, price: money, currency, quota: 0 };
  const checkoutUrl = await createCheckout(ctx, tradeNo, product, user, log);
  if (!checkoutUrl) {
    await dropOrder(ctx, tradeNo);
    return error('拉起支付失败');
  }
  return { message: 'success', data: { checkout_url: checkoutUrl, order_id: tradeNo } };
}
