// Creem top-up: the checkout at (a mock of) Creem's API and the webhook signed as Creem signs it (hex HMAC-SHA256 of
// the raw body with the webhook secret, computed here independently of the code under test): replayed, duplicated,
// reordered, tampered and wrong-amount events credit one product's quota at most once, to the unit.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import type { TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { addUser, startConsole } from '../channels/fixture.js';
import { setOption } from '../console/fixtures.js';
import { startCreemMock, type CreemMock } from './creem-mock.js';
import { orderProbe } from './orders.js';

const API_KEY = 'creem_test_key_0123456789';
const WEBHOOK_SECRET = 'whsec_creem_test_0123456789';
const STARTER = { productId: 'prod_starter', name: 'Starter', price: 9.5, currency: 'USD', quota: 1_000_000 };
const PRO = { productId: 'prod_pro', name: 'Pro', price: 20, currency: 'USD', quota: 2_500_000 };

const sign = (payload: string, secret = WEBHOOK_SECRET) => createHmac('sha256', secret).update(payload).digest('hex');

let eventSeq = 0;
/** A checkout.completed event as Creem sends it, for the order `tradeNo`, paid `cents` for `product`. */
function completed(tradeNo: string, cents: number, product = STARTER, order: Record<string, unknown> = {}) {
  eventSeq += 1;
  return JSON.stringify({
    id: `evt_test_${eventSeq}`,
    eventType: 'checkout.completed',
    created_at: Date.now(),
    object: {
      id: `ch_test_${eventSeq}`,
      object: 'checkout',
      request_id: tradeNo,
      order: {
        object: 'order',
        id: `ord_test_${eventSeq}`,
        customer: 'cust_test_1',
        product: product.productId,
        amount: cents,
        currency: 'USD',
        sub_total: cents,
        tax_amount: 0,
        amount_due: cents,
        amount_paid: cents,
        status: 'paid',
        type: 'onetime',
        mode: 'test',
        ...order,
      },
      product: { id: product.productId, object: 'product', name: product.name, price: cents, currency: 'USD' },
      units: 1,
      customer: { id: 'cust_test_1', object: 'customer', email: 'alice@example.com', name: 'Alice' },
      status: 'completed',
      metadata: { reference_id: tradeNo },
      mode: 'test',
    },
  });
}

await describeEachDb('Creem top-up', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let mock: CreemMock;
  let alice: { client: ConsoleClient; id: number; username: string };
  const { quotaOf, order, orderCount, topupLogs } = orderProbe(() => server);

  beforeAll(async () => {
    mock = await startCreemMock(API_KEY, [STARTER.productId, PRO.productId]);
    ({ server, root } = await startConsole(kind, { CREEM_API_URL: mock.url }));
    alice = await addUser(server);
    await server.ctx.db.updateTable('users').set({ email: 'alice@example.com' }).where('id', '=', alice.id).execute();
  });
  afterAll(async () => {
    await server?.close();
    await mock?.close();
  });

  async function webhook(payload: string, signature: string | null) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (signature !== null) headers['creem-signature'] = signature;
    const res = await fetch(`${server.url}/api/creem/webhook`, { method: 'POST', headers, body: payload });
    return res.status;
  }

  /** Starts a Creem top-up of `product` for alice; answers the order's trade number. */
  async function pay(product = STARTER): Promise<string> {
    const res = await alice.client.post('/api/user/creem/pay', {
      product_id: product.productId,
      payment_method: 'creem',
    });
    expect(res.body.message, JSON.stringify(res.body)).toBe('success');
    const checkout = mock.checkouts.at(-1)!;
    expect(res.body.data).toEqual({ checkout_url: checkout.checkout_url, order_id: checkout.request_id });
    return checkout.request_id;
  }

  it('is off until the key, the webhook secret and a product are set', async () => {
    expect((await root.get('/api/status')).body.data).toMatchObject({ enable_creem_topup: false, creem_products: [] });
    const refused = await alice.client.post('/api/user/creem/pay', {
      product_id: 'prod_starter',
      payment_method: 'creem',
    });
    expect(refused.body).toEqual({ message: 'error', data: 'Creem 支付未启用' });
    expect(await orderCount()).toBe(0);
    // without a webhook secret nothing verifies, whatever the signature
    const payload = completed('ref_x', 950);
    expect(await webhook(payload, sign(payload, ''))).toBe(401);
    expect(mock.checkouts).toHaveLength(0);
  });

  it('refuses malformed products on save and shows the saved ones in /api/status', async () => {
    const save = (value: string) => root.put('/api/option/', { key: 'CreemProducts', value });
    expect((await save('{oops')).body).toMatchObject({ success: false });
    expect((await save('{"productId":"x"}')).body).toMatchObject({ success: false });
    expect((await save(JSON.stringify([{ ...STARTER, price: 0 }]))).body).toMatchObject({ success: false });
    expect((await save(JSON.stringify([{ ...STARTER, quota: 1.5 }]))).body).toMatchObject({ success: false });
    expect((await save(JSON.stringify([STARTER, STARTER]))).body).toMatchObject({ success: false });
    await setOption(root, 'CreemProducts', JSON.stringify([STARTER, PRO]));
    await setOption(root, 'CreemApiKey', API_KEY);
    expect((await root.get('/api/status')).body.data.enable_creem_topup).toBe(false);
    await setOption(root, 'CreemWebhookSecret', WEBHOOK_SECRET);
    await setOption(root, 'ServerAddress', 'https://gw.example.com');
    const status = (await root.get('/api/status')).body.data;
    expect(status).toMatchObject({ enable_creem_topup: true, creem_products: [STARTER, PRO] });
    // the secrets are never read back
    const options = (await root.get('/api/option/')).body.data as Array<{ key: string }>;
    expect(options.map((o) => o.key)).not.toContain('CreemApiKey');
    expect(options.map((o) => o.key)).not.toContain('CreemWebhookSecret');
  });

  it('creates a pending order, then a checkout at Creem with the key and the order as request_id', async () => {
    const bad = (body: Record<string, unknown>) => alice.client.post('/api/user/creem/pay', body);
    expect((await bad({ product_id: STARTER.productId, payment_method: 'stripe' })).body.data).toBe('不支持的支付渠道');
    expect((await bad({ payment_method: 'creem' })).body.data).toBe('请选择产品');
    expect((await bad({ product_id: 'prod_gone', payment_method: 'creem' })).body.data).toBe('产品不存在');
    expect(await orderCount()).toBe(0);

    const tradeNo = await pay(STARTER);
    expect(tradeNo).toMatch(/^ref_[0-9a-f]{40}$/);
    expect(mock.checkouts.at(-1)!.body).toEqual({
      product_id: STARTER.productId,
      request_id: tradeNo,
      customer: { email: 'alice@example.com' },
      metadata: { username: alice.username, reference_id: tradeNo, product_name: 'Starter', quota: '1000000' },
    });
    const row = await order(tradeNo);
    expect(row).toMatchObject({ user_id: alice.id, payment_method: 'creem', status: 'pending' });
    expect(Number(row.amount)).toBe(STARTER.quota);
    expect(Number(row.money)).toBeCloseTo(9.5, 6);
  });

  it('removes the order when Creem refuses the checkout', async () => {
    const before = await orderCount();
    await setOption(root, 'CreemApiKey', 'creem_wrong_key');
    expect(
      (await alice.client.post('/api/user/creem/pay', { product_id: 'prod_pro', payment_method: 'creem' })).body,
    ).toEqual({
      message: 'error',
      data: '拉起支付失败',
    });
    expect(await orderCount()).toBe(before);
    await setOption(root, 'CreemApiKey', API_KEY);
  });

  it('credits the product quota once for a verified event, however often it comes', async () => {
    const tradeNo = await pay(STARTER);
    const before = await quotaOf(alice.id);
    const payload = completed(tradeNo, 950);

    // tampered, wrongly signed, unsigned: 401 and nothing credited
    expect(await webhook(payload.replace('"amount_paid":950', '"amount_paid":1'), sign(payload))).toBe(401);
    expect(await webhook(payload, sign(payload, 'whsec_other'))).toBe(401);
    expect(await webhook(payload, null)).toBe(401);
    expect(await quotaOf(alice.id)).toBe(before);
    expect((await order(tradeNo)).status).toBe('pending');

    // five copies at once, then a replay: one credit
    const statuses = await Promise.all([1, 2, 3, 4, 5].map(() => webhook(payload, sign(payload))));
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(await webhook(payload, sign(payload))).toBe(200);
    expect(await quotaOf(alice.id)).toBe(before + STARTER.quota);
    expect((await order(tradeNo)).status).toBe('success');
    const logs = (await topupLogs(alice.id)).filter((l) => l.content.includes('9.50 USD'));
    expect(logs).toHaveLength(1);
  });

  it('credits nothing for a wrong amount, an unpaid order, another event type or a non-Creem order', async () => {
    const tradeNo = await pay(PRO);
    const before = await quotaOf(alice.id);
    const send = (payload: string) => webhook(payload, sign(payload));
    // the Starter price paid for a Pro order
    expect(await send(completed(tradeNo, 950, STARTER))).toBe(200);
    expect(await send(completed(tradeNo, 2000, PRO, { status: 'pending' }))).toBe(200);
    const refund = JSON.stringify({ id: 'evt_r', eventType: 'refund.created', object: { request_id: tradeNo } });
    expect(await send(refund)).toBe(200);
    expect(await quotaOf(alice.id)).toBe(before);
    expect((await order(tradeNo)).status).toBe('pending');
    // an order of another method is never settled by a Creem event
    await server.ctx.db
      .insertInto('top_ups')
      .values({
        user_id: alice.id,
        amount: 3,
        money: 20,
        trade_no: 'USR1NOepay001',
        payment_method: 'alipay',
        create_time: 1,
        status: 'pending',
      })
      .execute();
    expect(await send(completed('USR1NOepay001', 2000, PRO))).toBe(200);
    expect((await order('USR1NOepay001')).status).toBe('pending');
    expect(await quotaOf(alice.id)).toBe(before);
    // the right amount at last credits once
    expect(await send(completed(tradeNo, 2000, PRO))).toBe(200);
    expect(await quotaOf(alice.id)).toBe(before + PRO.quota);
  });

  it('settles reordered events of two orders each once', async () => {
    const first = await pay(STARTER);
    const second = await pay(PRO);
    const before = await quotaOf(alice.id);
    const a = completed(first, 950);
    const b = completed(second, 2000, PRO);
    for (const payload of [b, a, b, a]) expect(await webhook(payload, sign(payload))).toBe(200);
    expect(await quotaOf(alice.id)).toBe(before + STARTER.quota + PRO.quota);
  });

  it("lets an admin complete a Creem order with the product's quota, once", async () => {
    const tradeNo = await pay(STARTER);
    const before = await quotaOf(alice.id);
    expect((await root.post('/api/user/topup/complete', { trade_no: tradeNo })).body).toMatchObject({ success: true });
    expect(await quotaOf(alice.id)).toBe(before + STARTER.quota);
    const late = completed(tradeNo, 950);
    expect(await webhook(late, sign(late))).toBe(200);
    expect(await quotaOf(alice.id)).toBe(before + STARTER.quota);
    const mine = (await alice.client.get(`/api/user/topup/self?keyword=${tradeNo}`)).body.data.items;
    expect(mine).toEqual([expect.objectContaining({ payment_method: 'creem', status: 'success', amount: 1_000_000 })]);
  });
});
