// Creem top-up (new-api-compat.md §31): a checkout per product order at Creem's API and the signed webhook that
// settles it. The products come from the CreemProducts option (new-api's JSON: productId, name, price, currency,
// quota); an order's amount is its product's quota and its money the product's price, and the webhook credits only
// when the paid Creem order is for that same price. The credit goes through settleTopUp, so a replayed or
// concurrent event credits once. The webhook also completes plan orders (services/subscriptions/orders.ts), whose
// reference it looks up first.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../context.js';
import type { LineLog } from '../lib/request-log.js';
import { nowSec } from '../lib/time.js';
import { logQuota } from './user-logs.js';
import { settleTopUp, TOPUP_PENDING, type PayAnswer } from './topup.js';
import { findPlanOrder, planCreemPaid } from './subscriptions/orders.js';

export const CREEM_DISABLED = 'Creem 支付未启用';
const CREEM_API = 'https://api.creem.io';
const CREEM_TEST_API = 'https://test-api.creem.io';
const CHECKOUT_TIMEOUT_MS = 30_000;

export interface CreemProduct {
  productId: string;
  name: string;
  /** in the product's currency, as the Creem product is priced */
  price: number;
  currency: string;
  /** quota credited (quota points, not units) */
  quota: number;
}

const error = (data: string): PayAnswer => ({ message: 'error', data });

/** One product of the option, or the reason it is refused (checked when the option is saved). */
function productOf(raw: unknown): CreemProduct | string {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return '产品必须是对象';
  const p = raw as Record<string, unknown>;
  if (typeof p.productId !== 'string' || p.productId.trim() === '') return '产品缺少 productId';
  if (typeof p.price !== 'number' || !Number.isFinite(p.price) || p.price <= 0)
    return `产品 ${p.productId} 的价格必须大于 0`;
  if (typeof p.quota !== 'number' || !Number.isSafeInteger(p.quota) || p.quota <= 0)
    return `产品 ${p.productId} 的额度必须是正整数`;
  return {
    productId: p.productId.trim(),
    name: typeof p.name === 'string' ? p.name : p.productId,
    price: p.price,
    currency: typeof p.currency === 'string' && p.currency.trim() ? p.currency.trim().toUpperCase() : 'USD',
    quota: p.quota,
  };
}

/** Why a CreemProducts value cannot be saved, or null. */
export function creemProductsProblem(value: string): string | null {
  const key = 'CreemProducts';
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return `${key} 不是合法的 JSON 字符串`;
  }
  if (!Array.isArray(parsed)) return 'CreemProducts 必须是 JSON 数组';
  const ids = new Set<string>();
  for (const raw of parsed) {
    const p = productOf(raw);
    if (typeof p === 'string') return p;
    if (ids.has(p.productId)) return `产品 ${p.productId} 重复`;
    ids.add(p.productId);
  }
  return null;
}

/** The configured products; a malformed entry is left out (saving refuses it, a hand-edited row may hold one). */
export function creemProducts(ctx: AppContext): CreemProduct[] {
  const raw = ctx.options.json<unknown>('CreemProducts', []);
  if (!Array.isArray(raw)) return [];
  return raw.map(productOf).filter((p): p is CreemProduct => typeof p !== 'string');
}

/** On when the API key, the webhook secret and at least one product are set (new-api's later rule). */
export function creemEnabled(ctx: AppContext): boolean {
  const o = ctx.options;
  return (
    o.get('CreemApiKey').trim() !== '' && o.get('CreemWebhookSecret').trim() !== '' && creemProducts(ctx).length > 0
  );
}

function creemApiBase(ctx: AppContext): string {
  if (ctx.config.creemApiUrl) return ctx.config.creemApiUrl.replace(/\/+$/, '');
  return ctx.options.bool('CreemTestMode') ? CREEM_TEST_API : CREEM_API;
}

/** POST /api/user/creem/pay {product_id, payment_method:"creem"}: a pending order, then its checkout. */
export async function requestCreemPay(
  ctx: AppContext,
  user: { id: number; email: string; username: string },
  body: Record<string, unknown>,
  log: LineLog,
): Promise<PayAnswer> {
  if (body.payment_method !== 'creem') return error('不支持的支付渠道');
  if (!creemEnabled(ctx)) return error(CREEM_DISABLED);
  if (typeof body.product_id !== 'string' || body.product_id === '') return error('请选择产品');
  const product = creemProducts(ctx).find((p) => p.productId === body.product_id);
  if (!product) return error('产品不存在');
  const tradeNo = `ref_${randomBytes(20).toString('hex')}`;
  // The order exists before the checkout, so a payment can never arrive for an order the gateway does not know.
  try {
    await ctx.db
      .insertInto('top_ups')
      .values({
        user_id: user.id,
        amount: product.quota,
        money: product.price,
        trade_no: tradeNo,
        payment_method: 'creem',
        create_time: nowSec(),
        status: TOPUP_PENDING,
      })
      .execute();
  } catch (err) {
    log.error({ err, tradeNo }, 'creating a creem top-up order failed');
    return error('创建订单失败');
  }
  const checkoutUrl = await createCheckout(ctx, tradeNo, product, user, log);
  if (!checkoutUrl) {
    await ctx.db.deleteFrom('top_ups').where('trade_no', '=', tradeNo).execute();
    return error('拉起支付失败');
  }
  return { message: 'success', data: { checkout_url: checkoutUrl, order_id: tradeNo } };
}

/**
 * POST <Creem API>/v1/checkouts with new-api's body (top-ups and plan orders); answers the checkout URL, or null when
 * Creem refused.
 */
export async function createCheckout(
  ctx: AppContext,
  tradeNo: string,
  product: CreemProduct,
  user: { email: string; username: string },
  log: LineLog,
): Promise<string | null> {
  const body = {
    product_id: product.productId,
    request_id: tradeNo,
    customer: { email: user.email },
    metadata: {
      username: user.username,
      reference_id: tradeNo,
      product_name: product.name,
      quota: String(product.quota),
    },
  };
  try {
    const res = await fetch(`${creemApiBase(ctx)}/v1/checkouts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': ctx.options.get('CreemApiKey').trim() },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(CHECKOUT_TIMEOUT_MS),
    });
    const text = await res.text();
    if (!res.ok) {
      log.error({ tradeNo, status: res.status, body: text.slice(0, 500) }, 'creem refused the checkout');
      return null;
    }
    const answer = JSON.parse(text) as { checkout_url?: unknown };
    if (typeof answer.checkout_url !== 'string' || answer.checkout_url === '') {
      log.error({ tradeNo }, 'the creem checkout has no url');
      return null;
    }
    return answer.checkout_url;
  } catch (err) {
    log.error({ err, tradeNo }, 'creating a creem checkout failed');
    return null;
  }
}

/** Creem's `creem-signature`: the hex HMAC-SHA256 of the raw body with the webhook secret. */
export function creemSignature(raw: Buffer | string, secret: string): string {
  return createHmac('sha256', secret).update(raw).digest('hex');
}

function signatureMatches(raw: Buffer, signature: string, secret: string): boolean {
  const expected = Buffer.from(creemSignature(raw, secret), 'utf8');
  const given = Buffer.from(signature.trim().toLowerCase(), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : {});

/**
 * POST /api/creem/webhook with the raw body. Answers the HTTP status: 401 when the signature is missing or does not
 * verify (as new-api), 400 for a body that is not JSON, 200 once the event is handled or deliberately ignored (an
 * unknown order, a mismatched amount: a retry would not change them); a database failure throws, so Creem retries.
 */
export async function handleCreemWebhook(
  ctx: AppContext,
  raw: Buffer,
  signature: string | undefined,
  log: LineLog,
): Promise<number> {
  const secret = ctx.options.get('CreemWebhookSecret').trim();
  if (!secret || !signature || !signatureMatches(raw, signature, secret)) {
    log.warn('creem webhook signature refused');
    return 401;
  }
  let event: Json;
  try {
    event = obj(JSON.parse(raw.toString('utf8')));
  } catch {
    return 400;
  }
  if (event.eventType !== 'checkout.completed') {
    log.info({ type: event.eventType }, 'creem webhook event ignored');
    return 200;
  }
  await checkoutCompleted(ctx, obj(event.object), log);
  return 200;
}

async function checkoutCompleted(ctx: AppContext, checkout: Json, log: LineLog): Promise<void> {
  const paid = obj(checkout.order);
  if (paid.status !== 'paid') {
    log.info({ id: checkout.id, status: paid.status }, 'creem checkout not paid');
    return;
  }
  const tradeNo = typeof checkout.request_id === 'string' ? checkout.request_id : '';
  // a plan order first, as new-api: its reference never names a top-up
  const planOrder = await findPlanOrder(ctx, tradeNo);
  if (planOrder) return planCreemPaid(ctx, planOrder, checkout, paid, log);
  const order = tradeNo
    ? await ctx.db.selectFrom('top_ups').selectAll().where('trade_no', '=', tradeNo).executeTakeFirst()
    : undefined;
  if (!order || order.payment_method !== 'creem') {
    log.warn({ tradeNo }, 'creem webhook for an unknown order');
    return;
  }
  // the Creem order's amount is the product's price in cents, before tax and discounts (as Stripe's subtotal)
  const expected = Math.round(Number(order.money) * 100);
  if (paid.amount !== expected) {
    log.error({ tradeNo, paid: paid.amount, expected }, 'creem order amount does not match the order');
    return;
  }
  const cents = typeof paid.amount_paid === 'number' ? paid.amount_paid : expected;
  const currency = typeof paid.currency === 'string' ? paid.currency.toUpperCase() : '';
  const paidText = `${(cents / 100).toFixed(2)} ${currency}`.trim();
  await settleTopUp(
    ctx,
    order,
    (quota) => `使用在线充值成功，充值金额: ${logQuota(ctx, quota)}，支付金额：${paidText}`,
  );
}
