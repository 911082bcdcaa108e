// Plans bought through EPay, Stripe and Creem (docs/decisions/0015-subscription-plans.md, step 7): each route opens a
// pending order with new-api's answer; the gateways' callbacks, signed here with the test secrets independently of
// the code under test, activate an order exactly once (replayed, duplicated, 5 at once), and never when the
// signature, the amount or the currency is wrong, nor for an order of another kind; max_purchase_per_user holds at
// activation too.
import { createHmac } from 'node:crypto';
import Stripe from 'stripe';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import type { TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { addUser, startConsole } from '../channels/fixture.js';
import { setOption } from './fixtures.js';
import { startStripeMock, type StripeMock } from '../topup/stripe-mock.js';
import { startCreemMock, type CreemMock } from '../topup/creem-mock.js';
import { referenceSign } from '../topup/epay-sign.js';

const EPAY_KEY = 'merchant-secret-key';
const STRIPE_SECRET = 'sk_test_gateway_0123456789';
const STRIPE_WEBHOOK = 'whsec_test_0123456789abcdef';
const CREEM_KEY = 'creem_test_key_0123456789';
const CREEM_WEBHOOK = 'whsec_creem_test_0123456789';
const STRIPE_PRICE = 'price_plan_monthly';

type User = { client: ConsoleClient; id: number; username: string };

await describeEachDb('subscription plans bought through EPay, Stripe and Creem', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let stripe: StripeMock;
  let creem: CreemMock;
  let alice: User;
  /** USD 9.90, Creem product, no Stripe price id (inline price) */
  let pro: number;
  /** USD 12.00 with a Stripe price id */
  let priced: number;
  let disabled: number;
  /** max_purchase_per_user 1 */
  let once: number;

  beforeAll(async () => {
    stripe = await startStripeMock(STRIPE_SECRET, { [STRIPE_PRICE]: 1200 });
    creem = await startCreemMock(CREEM_KEY, ['prod_plan']);
    ({ server, root } = await startConsole(kind, { STRIPE_API_URL: stripe.url, CREEM_API_URL: creem.url }));
    alice = await addUser(server);
    await server.ctx.db.updateTable('users').set({ email: 'alice@example.com' }).where('id', '=', alice.id).execute();
    const plan = async (p: Record<string, unknown>) => {
      const res = await root.post('/api/subscription/admin/plans', {
        plan: { duration_unit: 'day', duration_value: 30, total_amount: 1000, ...p },
      });
      expect(res.body.success, JSON.stringify(res.body)).toBe(true);
      return res.body.data.id as number;
    };
    pro = await plan({ title: 'Pro', price_amount: 9.9, creem_product_id: 'prod_plan' });
    priced = await plan({ title: 'Priced', price_amount: 12, stripe_price_id: STRIPE_PRICE });
    disabled = await plan({ title: 'Off', price_amount: 5, enabled: false, creem_product_id: 'prod_plan' });
    once = await plan({ title: 'Once', price_amount: 1, max_purchase_per_user: 1 });
  });
  afterAll(async () => {
    await server?.close();
    await stripe?.close();
    await creem?.close();
  });

  const db = () => server.ctx.db;
  const count = async (table: 'subscription_orders' | 'top_ups' | 'user_subscriptions', userId: number) =>
    Number(
      (
        await db()
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .where('user_id', '=', userId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const footprint = async (userId: number) => ({
    orders: await count('subscription_orders', userId),
    topUps: await count('top_ups', userId),
    subs: await count('user_subscriptions', userId),
  });
  const planOrder = (tradeNo: string) =>
    db().selectFrom('subscription_orders').selectAll().where('trade_no', '=', tradeNo).executeTakeFirstOrThrow();
  const subsOf = (userId: number, planId: number) =>
    db()
      .selectFrom('user_subscriptions')
      .selectAll()
      .where('user_id', '=', userId)
      .where('plan_id', '=', planId)
      .execute();
  const planLogs = (userId: number) =>
    server.ctx.logDb
      .selectFrom('logs')
      .select('content')
      .where('user_id', '=', userId)
      .where('type', '=', 1)
      .where('content', 'like', '在线购买订阅成功%')
      .execute();

  /** Exactly one subscription of the plan for the order, with its windows row, top-up row and log row. */
  async function expectActivatedOnce(user: User, planId: number, tradeNo: string, method: string, logsBefore: number) {
    const subs = await subsOf(user.id, planId);
    expect(subs.length).toBe(1);
    expect(subs[0]).toMatchObject({ status: 'active', source: 'order', amount_total: 1000 });
    const usage = await db()
      .selectFrom('subscription_usage')
      .selectAll()
      .where('user_subscription_id', '=', subs[0].id)
      .execute();
    expect(usage).toHaveLength(1);
    expect(usage[0]).toMatchObject({ user_id: user.id, main_limit: 1000 });
    const order = await planOrder(tradeNo);
    expect(order).toMatchObject({ status: 'success', payment_method: method });
    expect(Number(order.complete_time)).toBeGreaterThan(0);
    const topUps = await db().selectFrom('top_ups').selectAll().where('trade_no', '=', tradeNo).execute();
    expect(topUps).toHaveLength(1);
    expect(topUps[0]).toMatchObject({ user_id: user.id, amount: 0, status: 'success', payment_method: method });
    expect(Number(topUps[0].money)).toBeCloseTo(Number(order.money), 6);
    expect((await planLogs(user.id)).length).toBe(logsBefore + 1);
  }

  // ---- EPay

  async function epayNotify(params: Record<string, string>, path = 'notify', via: 'GET' | 'POST' = 'GET') {
    const qs = new URLSearchParams(params).toString();
    const url = `${server.url}/api/subscription/epay/${path}`;
    const res =
      via === 'GET'
        ? await fetch(`${url}?${qs}`, { redirect: 'manual' })
        : await fetch(url, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: qs,
            redirect: 'manual',
          });
    return { status: res.status, text: await res.text(), location: res.headers.get('location') };
  }

  function gatewayNotify(tradeNo: string, money: string, overrides: Record<string, string> = {}) {
    const params: Record<string, string> = {
      pid: '1001',
      trade_no: `2026${Math.floor(Math.random() * 1e9)}`,
      out_trade_no: tradeNo,
      type: 'alipay',
      name: 'SUB:Pro',
      money,
      trade_status: 'TRADE_SUCCESS',
      ...overrides,
    };
    return { ...params, sign: referenceSign(params, EPAY_KEY), sign_type: 'MD5' };
  }

  async function epayPay(user: User, planId: number, method = 'zfb'): Promise<{ tradeNo: string; money: string }> {
    const res = await user.client.post('/api/subscription/epay/pay', { plan_id: planId, payment_method: method });
    expect(res.body.message, JSON.stringify(res.body)).toBe('success');
    return { tradeNo: res.body.data.out_trade_no, money: res.body.data.money };
  }

  it('refuses before the gateways are set up, and for a bad plan, writing nothing', async () => {
    const before = await footprint(alice.id);
    const post = async (path: string, body: unknown) => (await alice.client.post(path, body)).body;
    expect(await post('/api/subscription/epay/pay', { plan_id: pro, payment_method: 'zfb' })).toEqual({
      success: false,
      message: '管理员未开启在线充值！',
    });
    expect(await post('/api/subscription/stripe/pay', { plan_id: pro })).toEqual({
      success: false,
      message: 'Stripe 支付未启用',
    });
    expect(await post('/api/subscription/creem/pay', { plan_id: pro })).toEqual({
      success: false,
      message: 'Creem 支付未启用',
    });

    await setOption(root, 'ServerAddress', 'https://gw.example.com/');
    await setOption(root, 'PayAddress', 'https://pay.example.com');
    await setOption(root, 'EpayId', '1001');
    await setOption(root, 'EpayKey', EPAY_KEY);
    await setOption(root, 'Price', '7.3');
    await setOption(root, 'StripeApiSecret', STRIPE_SECRET);
    await setOption(root, 'StripeWebhookSecret', STRIPE_WEBHOOK);
    await setOption(root, 'CreemApiKey', CREEM_KEY);
    await setOption(root, 'CreemWebhookSecret', CREEM_WEBHOOK);

    for (const path of ['/api/subscription/epay/pay', '/api/subscription/stripe/pay', '/api/subscription/creem/pay']) {
      const pay = (plan_id: unknown) => post(path, { plan_id, payment_method: 'zfb' });
      expect(await pay(999999)).toEqual({ success: false, message: '套餐不存在' });
      expect(await pay(disabled)).toEqual({ success: false, message: '套餐未启用' });
      expect(await pay('1')).toEqual({ success: false, message: '参数错误' });
    }
    expect(await post('/api/subscription/epay/pay', { plan_id: pro, payment_method: 'bitcoin' })).toEqual({
      success: false,
      message: '支付方式不存在',
    });
    expect(await post('/api/subscription/creem/pay', { plan_id: priced })).toEqual({
      success: false,
      message: '该套餐未配置 CreemProductId',
    });
    // EPay is paid in yuan: a plan priced in a currency the top-ups' rate does not convert is refused
    await db().updateTable('subscription_plans').set({ currency: 'EUR' }).where('id', '=', priced).execute();
    expect(await post('/api/subscription/epay/pay', { plan_id: priced, payment_method: 'zfb' })).toEqual({
      success: false,
      message: '易支付只支持以 USD 或 CNY 计价的套餐，该套餐的币种是 EUR',
    });
    await db().updateTable('subscription_plans').set({ currency: 'USD' }).where('id', '=', priced).execute();
    expect(await footprint(alice.id)).toEqual(before);
    expect(stripe.sessions).toHaveLength(0);
    expect(creem.checkouts).toHaveLength(0);
  });

  it('EPay: a pending order with the price in yuan and the signed form, in new-api’s shape', async () => {
    const res = await alice.client.post('/api/subscription/epay/pay', { plan_id: pro, payment_method: 'zfb' });
    expect(res.body.message).toBe('success');
    expect(res.body.url).toBe('https://pay.example.com/submit.php');
    const params = res.body.data as Record<string, string>;
    expect(params).toMatchObject({
      pid: '1001',
      type: 'alipay',
      name: 'SUB:Pro',
      money: '72.27', // 9.90 USD × 7.3
      notify_url: 'https://gw.example.com/api/subscription/epay/notify',
      return_url: 'https://gw.example.com/api/subscription/epay/return',
      sign_type: 'MD5',
    });
    expect(params.sign).toBe(referenceSign(params, EPAY_KEY));
    expect(params.out_trade_no).toMatch(new RegExp(`^SUBUSR${alice.id}NO[0-9A-Za-z]{6}\\d+$`));
    const order = await planOrder(params.out_trade_no);
    expect(order).toMatchObject({
      user_id: alice.id,
      plan_id: pro,
      payment_method: 'alipay',
      payment_provider: 'epay',
      status: 'pending',
    });
    expect(Number(order.money)).toBeCloseTo(72.27, 6);
    expect(await count('user_subscriptions', alice.id)).toBe(0);
  });

  it('EPay: tampered, unpaid or underpaid notifications activate nothing; 5 at once activate once', async () => {
    const { tradeNo, money } = await epayPay(alice, pro);
    const good = gatewayNotify(tradeNo, money, { type: 'wxpay' });
    const nothing = async () => {
      expect(await subsOf(alice.id, pro)).toHaveLength(0);
      expect((await planOrder(tradeNo)).status).toBe('pending');
    };
    expect((await epayNotify({ ...good, sign: referenceSign(good, 'wrong-key') })).text).toBe('fail');
    expect((await epayNotify({ ...good, money: '0.01' })).text).toBe('fail'); // the signature no longer matches
    expect((await epayNotify(gatewayNotify(tradeNo, '0.01'))).text).toBe('fail'); // signed, less than the order
    expect((await epayNotify(gatewayNotify(tradeNo, '9.90'))).text).toBe('fail'); // the dollar price, unconverted
    expect((await epayNotify(gatewayNotify(tradeNo, money, { trade_status: 'WAIT_BUYER_PAY' }))).text).toBe('fail');
    await nothing();

    const logsBefore = (await planLogs(alice.id)).length;
    const answers = await Promise.all(Array.from({ length: 5 }, () => epayNotify(good)));
    expect(answers.map((a) => [a.status, a.text])).toEqual(Array(5).fill([200, 'success']));
    // replayed later, as a POST form, and through the browser's return
    expect((await epayNotify(good, 'notify', 'POST')).text).toBe('success');
    const back = await epayNotify(good, 'return');
    expect(back.status).toBe(302);
    expect(back.location).toBe('https://gw.example.com/topup?pay=success');
    // the method the gateway reports is the order's
    await expectActivatedOnce(alice, pro, tradeNo, 'wxpay', logsBefore);
    const [log] = await planLogs(alice.id);
    expect(log.content).toBe('在线购买订阅成功，套餐: Pro，支付金额: 72.27，支付方式: wxpay');
    const stored = JSON.parse((await planOrder(tradeNo)).provider_payload ?? '{}') as Record<string, string>;
    expect(stored).toMatchObject({ out_trade_no: tradeNo, money });
    expect(stored.sign).toBeUndefined();

    const forged = await epayNotify({ ...good, sign: '0'.repeat(32) }, 'return');
    expect(forged.location).toBe('https://gw.example.com/topup?pay=fail');
  });

  it('EPay: a plan order and a top-up order are never taken for each other', async () => {
    // a top-up order at the plan notify
    const topUp = await alice.client.post('/api/user/pay', { amount: 2, payment_method: 'zfb' });
    expect(topUp.body.message).toBe('success');
    const topUpNo = topUp.body.data.out_trade_no as string;
    const quota = async () =>
      Number(
        (await db().selectFrom('users').select('quota').where('id', '=', alice.id).executeTakeFirstOrThrow()).quota,
      );
    const quotaBefore = await quota();
    const subsBefore = await count('user_subscriptions', alice.id);
    expect((await epayNotify(gatewayNotify(topUpNo, topUp.body.data.money))).text).toBe('fail');
    // a plan order at the top-up notify
    const { tradeNo, money } = await epayPay(alice, pro);
    const res = await fetch(`${server.url}/api/user/epay/notify?${new URLSearchParams(gatewayNotify(tradeNo, money))}`);
    expect(await res.text()).toBe('fail');
    expect(await quota()).toBe(quotaBefore);
    expect(await count('user_subscriptions', alice.id)).toBe(subsBefore);
    expect((await planOrder(tradeNo)).status).toBe('pending');
    const topUpRow = await db().selectFrom('top_ups').selectAll().where('trade_no', '=', topUpNo).executeTakeFirst();
    expect(topUpRow?.status).toBe('pending');

    // the top-up's own notify credits it and records the method the payer used
    const paid = await fetch(
      `${server.url}/api/user/epay/notify?${new URLSearchParams(gatewayNotify(topUpNo, topUp.body.data.money, { type: 'wxpay' }))}`,
    );
    expect(await paid.text()).toBe('success');
    expect(
      await db().selectFrom('top_ups').selectAll().where('trade_no', '=', topUpNo).executeTakeFirst(),
    ).toMatchObject({ status: 'success', payment_method: 'wxpay' });
    expect(await quota()).toBe(quotaBefore + 2 * 500_000);
  });

  it('checks max_purchase_per_user when the order is placed and again when it is paid', async () => {
    const bob = await addUser(server);
    const first = await epayPay(bob, once);
    const second = await epayPay(bob, once);
    expect((await epayNotify(gatewayNotify(first.tradeNo, first.money))).text).toBe('success');
    expect(await subsOf(bob.id, once)).toHaveLength(1);
    // the second order was placed before the first was paid: its payment is refused, the order left pending
    expect((await epayNotify(gatewayNotify(second.tradeNo, second.money))).text).toBe('fail');
    expect(await subsOf(bob.id, once)).toHaveLength(1);
    expect((await planOrder(second.tradeNo)).status).toBe('pending');
    expect(await db().selectFrom('top_ups').select('id').where('trade_no', '=', second.tradeNo).execute()).toEqual([]);
    const before = await footprint(bob.id);
    for (const path of ['/api/subscription/epay/pay', '/api/subscription/stripe/pay']) {
      expect((await bob.client.post(path, { plan_id: once, payment_method: 'zfb' })).body).toEqual({
        success: false,
        message: '已达到该套餐购买上限',
      });
    }
    expect(await footprint(bob.id)).toEqual(before);
  });

  // ---- Stripe

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
  const stripeSigned = (payload: string, secret = STRIPE_WEBHOOK) =>
    Stripe.webhooks.generateTestHeaderString({ payload, secret });
  async function stripeWebhook(payload: string, signature: string | null) {
    const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8' };
    if (signature !== null) headers['stripe-signature'] = signature;
    return (await fetch(`${server.url}/api/stripe/webhook`, { method: 'POST', headers, body: payload })).status;
  }
  const sessionPaid = (tradeNo: string, cents: number, extra: Record<string, unknown> = {}) =>
    sessionEvent('checkout.session.completed', {
      id: `cs_test_${tradeNo.slice(8, 16)}`,
      client_reference_id: tradeNo,
      status: 'complete',
      payment_status: 'paid',
      amount_subtotal: cents,
      amount_total: cents,
      ...extra,
    });

  async function stripePay(user: User, planId: number): Promise<string> {
    const res = await user.client.post('/api/subscription/stripe/pay', { plan_id: planId });
    expect(res.body.message, JSON.stringify(res.body)).toBe('success');
    const session = stripe.sessions.at(-1)!;
    expect(res.body).toEqual({ message: 'success', data: { pay_link: session.url } });
    return session.client_reference_id;
  }

  it('Stripe: Checkout with the plan’s price id, else an inline price; the order keeps the session’s amount', async () => {
    const inline = await stripePay(alice, pro);
    expect(inline).toMatch(/^sub_ref_[0-9a-f]{40}$/);
    expect(stripe.sessions.at(-1)!.form).toMatchObject({
      mode: 'payment',
      client_reference_id: inline,
      success_url: 'https://gw.example.com/topup',
      'line_items[0][price_data][currency]': 'usd',
      'line_items[0][price_data][unit_amount]': '990',
      'line_items[0][price_data][product_data][name]': 'Pro',
      'line_items[0][quantity]': '1',
      customer_email: 'alice@example.com',
    });
    expect(await planOrder(inline)).toMatchObject({
      plan_id: pro,
      payment_method: 'stripe',
      payment_provider: 'stripe',
      status: 'pending',
    });
    const byId = await stripePay(alice, priced);
    expect(stripe.sessions.at(-1)!.form).toMatchObject({ 'line_items[0][price]': STRIPE_PRICE });
    expect(Number((await planOrder(byId)).money)).toBeCloseTo(12, 6);
    // Stripe refusing the session leaves no order
    const before = await count('subscription_orders', alice.id);
    await setOption(root, 'StripeApiSecret', 'sk_test_wrong_key');
    expect((await alice.client.post('/api/subscription/stripe/pay', { plan_id: pro })).body).toEqual({
      message: 'error',
      data: '拉起支付失败',
    });
    await setOption(root, 'StripeApiSecret', STRIPE_SECRET);
    expect(await count('subscription_orders', alice.id)).toBe(before);
  });

  it('Stripe: tampered, wrong amount or currency activate nothing; duplicates activate once', async () => {
    const carol = await addUser(server);
    const tradeNo = await stripePay(carol, priced);
    const payload = sessionPaid(tradeNo, 1200);
    const header = stripeSigned(payload);
    expect(await stripeWebhook(payload.replace('"amount_subtotal":1200', '"amount_subtotal":1201'), header)).toBe(400);
    expect(await stripeWebhook(payload, stripeSigned(payload, 'whsec_someone_else'))).toBe(400);
    expect(await stripeWebhook(payload, null)).toBe(400);
    const cheap = sessionPaid(tradeNo, 1199);
    expect(await stripeWebhook(cheap, stripeSigned(cheap))).toBe(200);
    const euros = sessionPaid(tradeNo, 1200, { currency: 'eur' });
    expect(await stripeWebhook(euros, stripeSigned(euros))).toBe(200);
    const unpaid = sessionPaid(tradeNo, 1200, { payment_status: 'unpaid' });
    expect(await stripeWebhook(unpaid, stripeSigned(unpaid))).toBe(200);
    expect(await subsOf(carol.id, priced)).toHaveLength(0);
    expect((await planOrder(tradeNo)).status).toBe('pending');

    const statuses = await Promise.all(Array.from({ length: 5 }, () => stripeWebhook(payload, header)));
    expect(statuses).toEqual(Array(5).fill(200));
    const again = sessionPaid(tradeNo, 1200);
    expect(await stripeWebhook(again, stripeSigned(again))).toBe(200);
    await expectActivatedOnce(carol, priced, tradeNo, 'stripe', 0);
    expect((await planLogs(carol.id))[0].content).toBe(
      '在线购买订阅成功，套餐: Priced，支付金额: 12.00 USD，支付方式: stripe',
    );
    // an expiry after the activation changes nothing
    const gone = sessionEvent('checkout.session.expired', { client_reference_id: tradeNo, status: 'expired' });
    expect(await stripeWebhook(gone, stripeSigned(gone))).toBe(200);
    expect((await planOrder(tradeNo)).status).toBe('success');
  });

  it('Stripe: an expired session’s order is never activated; a top-up reference stays a top-up', async () => {
    const dave = await addUser(server);
    const tradeNo = await stripePay(dave, pro);
    const expired = sessionEvent('checkout.session.expired', { client_reference_id: tradeNo, status: 'expired' });
    expect(await stripeWebhook(expired, stripeSigned(expired))).toBe(200);
    expect((await planOrder(tradeNo)).status).toBe('expired');
    const late = sessionPaid(tradeNo, 990);
    expect(await stripeWebhook(late, stripeSigned(late))).toBe(200);
    expect(await count('user_subscriptions', dave.id)).toBe(0);

    // a pending Stripe top-up: its completed session credits the wallet, no plan
    const ref = `ref_${'a'.repeat(40)}`;
    await db()
      .insertInto('top_ups')
      .values({
        user_id: dave.id,
        amount: 2,
        money: 16,
        trade_no: ref,
        payment_method: 'stripe',
        create_time: 1,
        status: 'pending',
      })
      .execute();
    const topUpPaid = sessionPaid(ref, 1600);
    expect(await stripeWebhook(topUpPaid, stripeSigned(topUpPaid))).toBe(200);
    expect(
      Number(
        (await db().selectFrom('users').select('quota').where('id', '=', dave.id).executeTakeFirstOrThrow()).quota,
      ),
    ).toBe(2 * 500_000);
    expect(await count('user_subscriptions', dave.id)).toBe(0);
    expect(await count('subscription_orders', dave.id)).toBe(1);
  });

  // ---- Creem

  const creemSign = (payload: string, secret = CREEM_WEBHOOK) =>
    createHmac('sha256', secret).update(payload).digest('hex');
  let creemSeq = 0;
  function checkoutCompleted(tradeNo: string, cents: number, order: Record<string, unknown> = {}) {
    creemSeq += 1;
    return JSON.stringify({
      id: `evt_creem_${creemSeq}`,
      eventType: 'checkout.completed',
      created_at: Date.now(),
      object: {
        id: `ch_test_${creemSeq}`,
        object: 'checkout',
        request_id: tradeNo,
        order: {
          object: 'order',
          id: `ord_test_${creemSeq}`,
          product: 'prod_plan',
          amount: cents,
          currency: 'USD',
          amount_paid: cents,
          status: 'paid',
          type: 'onetime',
          ...order,
        },
        product: { id: 'prod_plan', object: 'product', price: cents, currency: 'USD' },
        status: 'completed',
        metadata: { reference_id: tradeNo },
      },
    });
  }
  async function creemWebhook(payload: string, signature: string | null) {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (signature !== null) headers['creem-signature'] = signature;
    return (await fetch(`${server.url}/api/creem/webhook`, { method: 'POST', headers, body: payload })).status;
  }

  it('Creem: a checkout of the plan’s product; only a signed payment of the plan’s price activates, once', async () => {
    const erin = await addUser(server);
    const res = await erin.client.post('/api/subscription/creem/pay', { plan_id: pro });
    const checkout = creem.checkouts.at(-1)!;
    expect(res.body).toEqual({
      message: 'success',
      data: { checkout_url: checkout.checkout_url, order_id: checkout.request_id },
    });
    const tradeNo = checkout.request_id;
    expect(tradeNo).toMatch(/^sub_ref_[0-9a-f]{40}$/);
    expect(checkout.product_id).toBe('prod_plan');
    expect(await planOrder(tradeNo)).toMatchObject({
      payment_method: 'creem',
      payment_provider: 'creem',
      status: 'pending',
    });

    const payload = checkoutCompleted(tradeNo, 990);
    expect(await creemWebhook(payload, creemSign(payload, 'someone-else'))).toBe(401);
    expect(await creemWebhook(payload.replace('"amount":990', '"amount":99'), creemSign(payload))).toBe(401);
    const cheap = checkoutCompleted(tradeNo, 99);
    expect(await creemWebhook(cheap, creemSign(cheap))).toBe(200);
    const euros = checkoutCompleted(tradeNo, 990, { currency: 'EUR' });
    expect(await creemWebhook(euros, creemSign(euros))).toBe(200);
    // the same reference signed by another gateway: not that gateway's order
    const viaStripe = sessionPaid(tradeNo, 990);
    expect(await stripeWebhook(viaStripe, stripeSigned(viaStripe))).toBe(200);
    expect((await epayNotify(gatewayNotify(tradeNo, '9.90'))).text).toBe('fail');
    expect(await count('user_subscriptions', erin.id)).toBe(0);
    expect((await planOrder(tradeNo)).status).toBe('pending');

    const statuses = await Promise.all(Array.from({ length: 5 }, () => creemWebhook(payload, creemSign(payload))));
    expect(statuses).toEqual(Array(5).fill(200));
    const replay = checkoutCompleted(tradeNo, 990);
    expect(await creemWebhook(replay, creemSign(replay))).toBe(200);
    await expectActivatedOnce(erin, pro, tradeNo, 'creem', 0);
    // the plan order's zero-amount top-up row credits nothing either
    expect(
      Number(
        (await db().selectFrom('users').select('quota').where('id', '=', erin.id).executeTakeFirstOrThrow()).quota,
      ),
    ).toBe(0);
  });
});
