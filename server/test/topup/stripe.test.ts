import Stripe from 'stripe';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import type { TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { addUser, startConsole } from '../channels/fixture.js';
import { setOption } from '../console/fixtures.js';
import { startStripeMock, type StripeMock } from './stripe-mock.js';
import { orderProbe } from './orders.js';

const API_SECRET = 'sk_test_gateway_0123456789';
const WEBHOOK_SECRET = 'whsec_test_0123456789abcdef';
const PRICE = 'price_1Units';
/** the Stripe price's unit amount, in cents */
const UNIT_CENTS = 800;
const QUOTA_PER_UNIT = 500000;

let eventSeq = 0;
function sessionEvent(type: string, session: Record<string, unknown>) {
  eventSeq += 1;
  return JSON.stringify({
    id: `evt_test_${eventSeq}`,
    object: 'event',
    api_version: '2025-01-27.acacia',
    created: Math.floor(Date.now() / 1000),
    livemode: false,
    type,
    data: { object: { object: 'checkout.session', currency: 'usd', ...session } },
  });
}

const signed = (payload: string, secret = WEBHOOK_SECRET) =>
  Stripe.webhooks.generateTestHeaderString({ payload, secret });

await describeEachDb('Stripe top-up', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let mock: StripeMock;
  let alice: { client: ConsoleClient; id: number; username: string };

  beforeAll(async () => {
    mock = await startStripeMock(API_SECRET, { [PRICE]: UNIT_CENTS });
    ({ server, root } = await startConsole(kind, { STRIPE_API_URL: mock.url }));
    alice = await addUser(server);
  });
  afterAll(async () => {
    await server?.close();
    await mock?.close();
  });

  const { quotaOf, order, orderCount, topupLogs } = orderProbe(() => server);

  async function webhook(payload: string, signature: string | null) {
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
    if (signature !== null) headers['stripe-signature'] = signature;
    const res = await fetch(`${server.url}/api/stripe/webhook`, { method: 'POST', headers, body: payload });
    return res.status;
  }

  /** Starts a Stripe top-up of `amount` for alice; answers the order's trade number. */
  async function pay(amount: number): Promise<string> {
    const res = await alice.client.post('/api/user/stripe/pay', { amount, payment_method: 'stripe' });
    expect(res.body.message, JSON.stringify(res.body)).toBe('success');
    const session = mock.sessions.at(-1)!;
    expect(res.body.data).toEqual({ pay_link: session.url });
    expect((await order(session.client_reference_id)).payment_method).toBe('stripe');
    return session.client_reference_id;
  }

  const completed = (tradeNo: string, cents: number, extra: Record<string, unknown> = {}) =>
    sessionEvent('checkout.session.completed', {
      id: `cs_test_${tradeNo.slice(4, 12)}`,
      client_reference_id: tradeNo,
      status: 'complete',
      payment_status: 'paid',
      amount_subtotal: cents,
      amount_total: cents,
      ...extra,
    });

  it('is off until the secret, the webhook secret and the price are set', async () => {
    expect((await root.get('/api/status')).body.data).toMatchObject({ enable_stripe_topup: false });
    expect((await alice.client.post('/api/user/stripe/pay', { amount: 5, payment_method: 'stripe' })).body).toEqual({
      message: 'error',
      data: 'Stripe 支付未启用',
    });
    expect(await orderCount()).toBe(0);
    // without a webhook secret nothing can be verified
    const payload = completed('ref_x', 800);
    expect(await webhook(payload, signed(payload))).toBe(400);

    const refused = async (key: string, value: string) =>
      (await root.put('/api/option/', { key, value })).body as { success: boolean; message: string };
    expect(await refused('StripeApiSecret', 'pk_test_publishable')).toEqual({
      success: false,
      message: '无效的Stripe API密钥',
    });
    expect((await refused('StripeWebhookSecret', 'sk_test_x')).message).toBe('无效的Stripe Webhook签名密钥');
    expect((await refused('StripePriceId', 'prod_123')).message).toBe('无效的Stripe价格ID');
    expect((await refused('StripeUnitPrice', '0')).message).toBe('StripeUnitPrice 的值必须大于 0');
    expect((await refused('StripeMinTopUp', '1.5')).message).toBe('StripeMinTopUp 的值必须是正整数');

    await setOption(root, 'ServerAddress', 'https://gw.example.com/');
    await setOption(root, 'StripeApiSecret', API_SECRET);
    await setOption(root, 'StripeWebhookSecret', WEBHOOK_SECRET);
    expect((await root.get('/api/status')).body.data.enable_stripe_topup).toBe(false);
    await setOption(root, 'StripePriceId', PRICE);
    await setOption(root, 'StripeUnitPrice', '8');
    await setOption(root, 'StripeMinTopUp', '2');
    expect((await root.get('/api/status')).body.data).toMatchObject({
      enable_stripe_topup: true,
      stripe_unit_price: 8,
      stripe_min_topup: 2,
    });
    // the secrets are never read back
    const options = (await root.get('/api/option/')).body.data as Array<{ key: string }>;
    expect(options.map((o) => o.key)).toContain('StripePriceId');
    expect(options.map((o) => o.key)).not.toContain('StripeApiSecret');
    expect(options.map((o) => o.key)).not.toContain('StripeWebhookSecret');
  });

  it('quotes units × StripeUnitPrice within the limits', async () => {
    const amount = async (body: unknown) => (await alice.client.post('/api/user/stripe/amount', body)).body;
    expect(await amount({ amount: 1 })).toEqual({ message: 'error', data: '充值数量不能小于 2' });
    expect(await amount({ amount: 5 })).toEqual({ message: 'success', data: '40.00' });
    expect(await amount({ amount: 10001 })).toEqual({ message: 'error', data: '充值数量不能大于 10000' });
    expect(await amount({ amount: 'x' })).toEqual({ message: 'error', data: '参数错误' });
  });

  it('opens a Checkout session for a pending order', async () => {
    expect((await alice.client.post('/api/user/stripe/pay', { amount: 5, payment_method: 'zfb' })).body).toEqual({
      message: 'error',
      data: '不支持的支付渠道',
    });
    expect((await alice.client.post('/api/user/stripe/pay', { amount: 1, payment_method: 'stripe' })).body).toEqual({
      message: 'error',
      data: '充值数量不能小于 2',
    });
    expect(await orderCount()).toBe(0);

    const tradeNo = await pay(5);
    expect(tradeNo).toMatch(/^ref_[0-9a-f]{40}$/);
    expect(mock.sessions.at(-1)!.form).toMatchObject({
      mode: 'payment',
      client_reference_id: tradeNo,
      success_url: 'https://gw.example.com/log',
      cancel_url: 'https://gw.example.com/topup',
      'line_items[0][price]': PRICE,
      'line_items[0][quantity]': '5',
      allow_promotion_codes: 'false',
      customer_creation: 'always',
    });
    const row = await order(tradeNo);
    expect(row).toMatchObject({ user_id: alice.id, amount: 5, status: 'pending' });
    expect(Number(row.money)).toBeCloseTo(40, 6);
  });

  it('leaves no order when Stripe refuses the session', async () => {
    const before = await orderCount();
    await setOption(root, 'StripeApiSecret', 'sk_test_wrong_key');
    expect((await alice.client.post('/api/user/stripe/pay', { amount: 3, payment_method: 'stripe' })).body).toEqual({
      message: 'error',
      data: '拉起支付失败',
    });
    await setOption(root, 'StripeApiSecret', API_SECRET);
    await setOption(root, 'StripePriceId', 'price_unknown');
    expect((await alice.client.post('/api/user/stripe/pay', { amount: 3, payment_method: 'stripe' })).body.data).toBe(
      '拉起支付失败',
    );
    await setOption(root, 'StripePriceId', PRICE);
    expect(await orderCount()).toBe(before);
  });

  it('credits a completed session once, replays included', async () => {
    const tradeNo = await pay(3);
    const before = await quotaOf(alice.id);
    const logsBefore = (await topupLogs(alice.id)).length;
    const payload = completed(tradeNo, 3 * UNIT_CENTS);
    const header = signed(payload);
    expect(await webhook(payload, header)).toBe(200);
    expect(await quotaOf(alice.id)).toBe(before + 3 * QUOTA_PER_UNIT);
    expect((await order(tradeNo)).status).toBe('success');
    // the same delivery again, and a second event for the same session
    expect(await webhook(payload, header)).toBe(200);
    const again = completed(tradeNo, 3 * UNIT_CENTS);
    expect(await webhook(again, signed(again))).toBe(200);
    expect(await quotaOf(alice.id)).toBe(before + 3 * QUOTA_PER_UNIT);
    const logs = await topupLogs(alice.id);
    expect(logs.length).toBe(logsBefore + 1);
    expect(logs.some((l) => l.content.includes('使用在线充值成功') && l.content.includes('24.00 USD'))).toBe(true);
  });

  it('credits ten concurrent duplicates of one event once', async () => {
    const tradeNo = await pay(7);
    const before = await quotaOf(alice.id);
    const payload = completed(tradeNo, 7 * UNIT_CENTS);
    const header = signed(payload);
    const statuses = await Promise.all(Array.from({ length: 10 }, () => webhook(payload, header)));
    expect(statuses).toEqual(Array(10).fill(200));
    expect(await quotaOf(alice.id)).toBe(before + 7 * QUOTA_PER_UNIT);
    expect((await order(tradeNo)).status).toBe('success');
  });

  it('refuses a tampered body or a foreign signature, and credits nothing', async () => {
    const tradeNo = await pay(2);
    const before = await quotaOf(alice.id);
    const payload = completed(tradeNo, 2 * UNIT_CENTS);
    const header = signed(payload);
    const tampered = payload.replace(`"amount_subtotal":${2 * UNIT_CENTS}`, `"amount_subtotal":${2 * UNIT_CENTS}0`);
    expect(tampered).not.toBe(payload);
    expect(await webhook(tampered, header)).toBe(400);
    expect(await webhook(payload, signed(payload, 'whsec_someone_else'))).toBe(400);
    expect(await webhook(payload, null)).toBe(400);
    expect(await webhook(payload, 't=1,v1=00')).toBe(400);
    expect(await quotaOf(alice.id)).toBe(before);
    expect((await order(tradeNo)).status).toBe('pending');
  });

  it('credits nothing for a wrong amount, an unpaid session or an unknown one', async () => {
    const tradeNo = await pay(4);
    const before = await quotaOf(alice.id);
    const wrong = completed(tradeNo, 4 * UNIT_CENTS - 1);
    expect(await webhook(wrong, signed(wrong))).toBe(200);
    const unpaid = completed(tradeNo, 4 * UNIT_CENTS, { payment_status: 'unpaid' });
    expect(await webhook(unpaid, signed(unpaid))).toBe(200);
    const unknown = completed('ref_0000000000000000000000000000000000000000', 4 * UNIT_CENTS);
    expect(await webhook(unknown, signed(unknown))).toBe(200);
    expect(await quotaOf(alice.id)).toBe(before);
    expect((await order(tradeNo)).status).toBe('pending');
    // a delayed payment method settles through its own event, with the promotion code's discount in the total only
    const later = sessionEvent('checkout.session.async_payment_succeeded', {
      client_reference_id: tradeNo,
      status: 'complete',
      payment_status: 'paid',
      amount_subtotal: 4 * UNIT_CENTS,
      amount_total: 4 * UNIT_CENTS - 500,
    });
    expect(await webhook(later, signed(later))).toBe(200);
    expect(await quotaOf(alice.id)).toBe(before + 4 * QUOTA_PER_UNIT);
  });

  it('marks an expired session expired, and never credits it afterwards', async () => {
    const tradeNo = await pay(2);
    const before = await quotaOf(alice.id);
    const expired = sessionEvent('checkout.session.expired', {
      client_reference_id: tradeNo,
      status: 'expired',
      payment_status: 'unpaid',
      amount_subtotal: 2 * UNIT_CENTS,
    });
    expect(await webhook(expired, signed(expired))).toBe(200);
    expect((await order(tradeNo)).status).toBe('expired');
    const late = completed(tradeNo, 2 * UNIT_CENTS);
    expect(await webhook(late, signed(late))).toBe(200);
    expect(await quotaOf(alice.id)).toBe(before);
    expect((await order(tradeNo)).status).toBe('expired');
    // an expiry after the credit leaves the order credited
    const paid = await pay(2);
    const ok = completed(paid, 2 * UNIT_CENTS);
    expect(await webhook(ok, signed(ok))).toBe(200);
    const gone = sessionEvent('checkout.session.expired', { client_reference_id: paid, status: 'expired' });
    expect(await webhook(gone, signed(gone))).toBe(200);
    expect((await order(paid)).status).toBe('success');
  });

  it('lets an admin complete a pending order by hand, once, logged', async () => {
    const tradeNo = await pay(6);
    const before = await quotaOf(alice.id);
    const complete = (client: ConsoleClient, trade_no: unknown) =>
      client.post('/api/user/topup/complete', { trade_no });
    expect((await complete(alice.client, tradeNo)).body.success).not.toBe(true);
    expect(await quotaOf(alice.id)).toBe(before);
    expect((await complete(root, '')).body).toMatchObject({ success: false, message: '参数错误' });
    expect((await complete(root, 'ref_missing')).body).toMatchObject({ success: false, message: '充值订单不存在' });
    expect((await complete(root, tradeNo)).body).toMatchObject({ success: true });
    expect(await quotaOf(alice.id)).toBe(before + 6 * QUOTA_PER_UNIT);
    expect((await order(tradeNo)).status).toBe('success');
    const logs = await topupLogs(alice.id);
    expect(logs.filter((l) => l.content.startsWith('管理员补单成功')).length).toBe(1);
    // again (refused), and the webhook after it: still one credit
    expect((await complete(root, tradeNo)).body).toMatchObject({
      success: false,
      message: '订单状态不是待支付，无法补单',
    });
    const late = completed(tradeNo, 6 * UNIT_CENTS);
    expect(await webhook(late, signed(late))).toBe(200);
    expect(await quotaOf(alice.id)).toBe(before + 6 * QUOTA_PER_UNIT);
    // an expired order is not completed
    const lapsed = await pay(2);
    const expired = sessionEvent('checkout.session.expired', { client_reference_id: lapsed, status: 'expired' });
    expect(await webhook(expired, signed(expired))).toBe(200);
    expect((await complete(root, lapsed)).body).toMatchObject({
      success: false,
      message: '订单状态不是待支付，无法补单',
    });
    expect(await quotaOf(alice.id)).toBe(before + 6 * QUOTA_PER_UNIT);
  });
});
