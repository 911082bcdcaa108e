// new-api's subscription routes beyond the plans (docs/decisions/0015-subscription-plans.md, step 4): the balance
// purchase (one transaction: wallet debit never below zero, order, subscription, windows, top-up row; the log row),
// concurrent purchases that never overdraw nor pass max_purchase_per_user, the queued renewal, the user's own
// subscriptions with their windows, the billing preference, and the admin's bind, invalidate and delete.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { registerAndLogin, setOption, setupAndLoginRoot } from './fixtures.js';

const PAY = '/api/subscription/balance/pay';
const UNIT = 500_000; // QuotaPerUnit's default

/** The next midnight in Asia/Shanghai (UTC+8, no daylight saving) after `t`, in unix seconds. */
const shanghaiMidnightAfter = (t: number) => (Math.floor((t + 8 * 3600) / 86400) + 1) * 86400 - 8 * 3600;

await describeEachDb('subscription purchase and management routes', (kind) => {
  let s: TestServer;
  let root: ConsoleClient;

  beforeAll(async () => {
    // 20 purchases at once from one address: the critical rate limit (20 per 20 minutes) is not what is tested here
    s = await startTestServer({ kind, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false' } });
    root = await setupAndLoginRoot(s);
    await setOption(root, 'UsageLimitTimeZone', 'Asia/Shanghai');
  });
  afterAll(async () => {
    await s?.close();
  });

  async function createPlan(plan: Record<string, unknown>, limits?: Record<string, unknown>): Promise<number> {
    const res = await root.post('/api/subscription/admin/plans', { plan: { duration_unit: 'day', ...plan }, limits });
    expect(res.body.success, JSON.stringify(res.body)).toBe(true);
    return res.body.data.id;
  }

  async function userWithQuota(quota: number) {
    const u = await registerAndLogin(s);
    await s.ctx.db.updateTable('users').set({ quota }).where('id', '=', u.id).execute();
    return u;
  }

  const quotaOf = async (id: number) =>
    Number((await s.ctx.db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow()).quota);
  const groupOf = async (id: number) =>
    (await s.ctx.db.selectFrom('users').select('group').where('id', '=', id).executeTakeFirstOrThrow()).group;
  const subsOf = (userId: number) =>
    s.ctx.db.selectFrom('user_subscriptions').selectAll().where('user_id', '=', userId).orderBy('id').execute();

  /** Everything a purchase writes, for "bad input changes nothing". */
  async function footprint(userId: number) {
    const count = async (table: 'subscription_orders' | 'top_ups' | 'user_subscriptions') =>
      Number(
        (
          await s.ctx.db
            .selectFrom(table)
            .select((eb) => eb.fn.countAll().as('n'))
            .where('user_id', '=', userId)
            .executeTakeFirstOrThrow()
        ).n,
      );
    return {
      quota: await quotaOf(userId),
      group: await groupOf(userId),
      orders: await count('subscription_orders'),
      topUps: await count('top_ups'),
      subs: await count('user_subscriptions'),
      usage: (await s.ctx.db.selectFrom('subscription_usage').select('user_id').where('user_id', '=', userId).execute())
        .length,
    };
  }

  it('buys a plan with the balance: wallet debited to the unit, order, subscription, windows, top-up and log rows', async () => {
    const planId = await createPlan(
      { title: 'Pro', price_amount: 2.5, duration_value: 30, total_amount: 1000, quota_reset_period: 'daily' },
      { daily_amount: 500, weekly_amount: 0 },
    );
    const u = await userWithQuota(3 * UNIT);
    const before = Math.floor(Date.now() / 1000);
    const res = await u.client.post(PAY, { plan_id: planId });
    expect(res.body).toEqual({ success: true, message: '', data: null });
    const cost = 2.5 * UNIT;
    expect(await quotaOf(u.id)).toBe(3 * UNIT - cost);

    const [sub] = await subsOf(u.id);
    expect(sub).toMatchObject({
      plan_id: planId,
      amount_total: 1000,
      amount_used: 0,
      status: 'active',
      source: 'order',
    });
    const start = Number(sub.start_time);
    expect(start).toBeGreaterThanOrEqual(before);
    expect(Number(sub.end_time)).toBe(start + 30 * 86400);
    expect(Number(sub.next_reset_time)).toBe(shanghaiMidnightAfter(start));
    expect(Number(sub.last_reset_time)).toBe(start);

    const usage = await s.ctx.db
      .selectFrom('subscription_usage')
      .selectAll()
      .where('user_subscription_id', '=', sub.id)
      .executeTakeFirstOrThrow();
    expect(usage).toMatchObject({ user_id: u.id, main_limit: 1000, daily_limit: 500, weekly_limit: 0, main_used: 0 });

    const order = await s.ctx.db
      .selectFrom('subscription_orders')
      .selectAll()
      .where('user_id', '=', u.id)
      .executeTakeFirstOrThrow();
    expect(order).toMatchObject({
      plan_id: planId,
      money: 2.5,
      payment_method: 'balance',
      payment_provider: 'balance',
      status: 'success',
      provider_payload: `charged_quota=${cost}`,
    });
    expect(order.trade_no).toMatch(new RegExp(`^SUBBALUSR${u.id}NO`));
    const topUp = await s.ctx.db
      .selectFrom('top_ups')
      .selectAll()
      .where('user_id', '=', u.id)
      .executeTakeFirstOrThrow();
    expect(topUp).toMatchObject({ amount: 0, money: 2.5, trade_no: order.trade_no, status: 'success' });

    const logs = await s.ctx.logDb.selectFrom('logs').select(['type', 'content']).where('user_id', '=', u.id).execute();
    expect(logs).toContainEqual({
      type: 1,
      content: `使用余额购买订阅成功，套餐: Pro，支付金额: 2.50，扣除额度: ${cost}`,
    });
  });

  it('answers the user’s own subscriptions with each window’s use, what is left and when it resets', async () => {
    const planId = await createPlan(
      { title: 'Windows', price_amount: 1, duration_value: 30, total_amount: 1000, quota_reset_period: 'daily' },
      { daily_amount: 500, monthly_amount: 800 },
    );
    const u = await userWithQuota(UNIT);
    expect((await u.client.post(PAY, { plan_id: planId })).body.success).toBe(true);
    const [sub] = await subsOf(u.id);
    const now = Math.floor(Date.now() / 1000);
    const midnight = shanghaiMidnightAfter(now);
    // use in the current daily period, and a monthly use left from a period that already ended
    await s.ctx.db
      .updateTable('subscription_usage')
      .set({
        main_used: 300,
        main_end: midnight,
        daily_used: 200,
        daily_end: midnight,
        monthly_used: 700,
        monthly_end: 1,
      })
      .where('user_subscription_id', '=', sub.id)
      .execute();

    const res = await u.client.get('/api/subscription/self');
    expect(res.body.success).toBe(true);
    const { billing_preference, subscriptions, all_subscriptions } = res.body.data;
    expect(billing_preference).toBe('subscription_first');
    expect(subscriptions).toHaveLength(1);
    expect(all_subscriptions).toEqual(subscriptions);
    expect(subscriptions[0].subscription).toEqual({
      id: sub.id,
      user_id: u.id,
      plan_id: planId,
      amount_total: 1000,
      amount_used: 0,
      start_time: Number(sub.start_time),
      end_time: Number(sub.end_time),
      status: 'active',
      source: 'order',
      last_reset_time: Number(sub.start_time),
      next_reset_time: shanghaiMidnightAfter(Number(sub.start_time)),
      upgrade_group: '',
      prev_user_group: '',
      created_at: Number(sub.created_at),
      updated_at: Number(sub.updated_at),
    });
    const windows = subscriptions[0].windows;
    expect(windows.slice(0, 2)).toEqual([
      { slot: 'main', limit: 1000, used: 300, remaining: 700, resets_at: midnight },
      { slot: 'daily', limit: 500, used: 200, remaining: 300, resets_at: midnight },
    ]);
    expect(windows[2]).toMatchObject({ slot: 'monthly', limit: 800, used: 0, remaining: 800 });
    expect(windows).toHaveLength(3);

    // another user sees none of it
    const other = await registerAndLogin(s);
    const theirs = await other.client.get('/api/subscription/self');
    expect(theirs.body.data).toEqual({
      billing_preference: 'subscription_first',
      subscriptions: [],
      all_subscriptions: [],
    });
  });

  it('refuses bad purchases with new-api’s texts and changes nothing', async () => {
    const planId = await createPlan({ title: 'Refused', price_amount: 1 });
    const disabledId = await createPlan({ title: 'Off', price_amount: 0, enabled: false });
    const u = await userWithQuota(UNIT - 1);
    const before = await footprint(u.id);
    const cases: Array<[unknown, string]> = [
      [{}, '参数错误'],
      [{ plan_id: String(planId) }, '参数错误'],
      [{ plan_id: 0 }, '参数错误'],
      [{ plan_id: 1.5 }, '参数错误'],
      [{ plan_id: 987654 }, '套餐不存在'],
      [{ plan_id: disabledId }, '套餐未启用'],
      // one quota unit short of the price
      [{ plan_id: planId }, '余额不足'],
    ];
    for (const [body, message] of cases) {
      const res = await u.client.post(PAY, body);
      expect({ body, answer: res.body }).toEqual({ body, answer: { success: false, message } });
    }
    expect(await footprint(u.id)).toEqual(before);
    const anon = await fetch(`${s.url}${PAY}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ plan_id: planId }),
    });
    expect(((await anon.json()) as { success: boolean }).success).toBe(false);
  });

  it('20 purchases at once with the balance for 3: exactly 3 subscriptions, queued one after another, wallet never below zero', async () => {
    const planId = await createPlan({ title: 'Race', price_amount: 1, duration_unit: 'hour', duration_value: 2 });
    const u = await userWithQuota(3 * UNIT + UNIT - 1);
    const answers = await Promise.all(Array.from({ length: 20 }, () => u.client.post(PAY, { plan_id: planId })));
    const messages = answers.map((a) => (a.body.success ? 'ok' : a.body.message));
    expect(messages.filter((m) => m === 'ok')).toHaveLength(3);
    expect(messages.filter((m) => m === '余额不足')).toHaveLength(17);
    expect(await quotaOf(u.id)).toBe(UNIT - 1);
    const f = await footprint(u.id);
    expect(f).toMatchObject({ orders: 3, topUps: 3, subs: 3, usage: 3 });
    // the same plan bought again while one runs is queued: each starts when the previous ends
    const subs = await subsOf(u.id);
    for (let i = 1; i < subs.length; i++) {
      expect(Number(subs[i].start_time)).toBe(Number(subs[i - 1].end_time));
      expect(Number(subs[i].end_time)).toBe(Number(subs[i].start_time) + 7200);
    }
    // all three running (the queued ones included) in the user's view
    const self = await u.client.get('/api/subscription/self');
    expect(self.body.data.subscriptions).toHaveLength(3);
  });

  it('max_purchase_per_user holds under concurrency, and a refused purchase debits nothing', async () => {
    const planId = await createPlan({ title: 'Twice', price_amount: 0.01, max_purchase_per_user: 2 });
    const u = await userWithQuota(100 * UNIT);
    const answers = await Promise.all(Array.from({ length: 10 }, () => u.client.post(PAY, { plan_id: planId })));
    const messages = answers.map((a) => (a.body.success ? 'ok' : a.body.message));
    expect(messages.filter((m) => m === 'ok')).toHaveLength(2);
    expect(messages.filter((m) => m === '已达到该套餐购买上限')).toHaveLength(8);
    expect(await quotaOf(u.id)).toBe(100 * UNIT - 2 * 0.01 * UNIT);
    expect(await footprint(u.id)).toMatchObject({ orders: 2, subs: 2 });
  });

  it('stores the billing preference in users.setting beside the other settings, normalised; bad input changes nothing', async () => {
    const u = await registerAndLogin(s);
    await s.ctx.db
      .updateTable('users')
      .set({ setting: JSON.stringify({ notify_type: 'email', quota_warning_threshold: 7 }) })
      .where('id', '=', u.id)
      .execute();
    const put = await u.client.put('/api/subscription/self/preference', { billing_preference: 'wallet_first' });
    expect(put.body).toEqual({ success: true, message: '', data: { billing_preference: 'wallet_first' } });
    expect((await u.client.get('/api/subscription/self')).body.data.billing_preference).toBe('wallet_first');
    const settingOf = async () =>
      JSON.parse(
        (await s.ctx.db.selectFrom('users').select('setting').where('id', '=', u.id).executeTakeFirstOrThrow()).setting,
      );
    expect(await settingOf()).toEqual({
      notify_type: 'email',
      quota_warning_threshold: 7,
      billing_preference: 'wallet_first',
    });

    for (const body of [{ billing_preference: 5 }, { billing_preference: ['wallet_only'] }, ['wallet_only']]) {
      const res = await u.client.put('/api/subscription/self/preference', body);
      expect(res.body).toEqual({ success: false, message: '参数错误' });
    }
    expect((await settingOf()).billing_preference).toBe('wallet_first');

    // new-api's NormalizeBillingPreference: an unknown value is the default
    const odd = await u.client.put('/api/subscription/self/preference', { billing_preference: 'cheapest' });
    expect(odd.body.data).toEqual({ billing_preference: 'subscription_first' });
    const only = await u.client.put('/api/subscription/self/preference', { billing_preference: 'subscription_only' });
    expect(only.body.data).toEqual({ billing_preference: 'subscription_only' });
    expect((await settingOf()).billing_preference).toBe('subscription_only');

    // saving the notification settings keeps the preference
    const notify = await u.client.put('/api/user/setting', { notify_type: 'email', quota_warning_threshold: 9 });
    expect(notify.body.success).toBe(true);
    expect(await settingOf()).toMatchObject({ quota_warning_threshold: 9, billing_preference: 'subscription_only' });
  });

  it('a retried click with the same request_id buys once, even five at once; a new id buys again; a bad id changes nothing', async () => {
    const planId = await createPlan({ title: 'Retry', price_amount: 1, duration_value: 1, total_amount: 100 });
    const u = await userWithQuota(5 * UNIT);
    const before = await footprint(u.id);
    const answers = await Promise.all(
      Array.from({ length: 5 }, () => u.client.post(PAY, { plan_id: planId, request_id: 'click-1' })),
    );
    expect(answers.map((a) => a.body.success)).toEqual([true, true, true, true, true]);
    const once = await footprint(u.id);
    expect(once).toMatchObject({ quota: 4 * UNIT, subs: 1, orders: before.orders + 1, topUps: before.topUps + 1 });
    expect((await u.client.post(PAY, { plan_id: planId, request_id: 'click-1' })).body.success).toBe(true);
    expect(await footprint(u.id)).toEqual(once);
    expect((await u.client.post(PAY, { plan_id: planId, request_id: 'click-2' })).body.success).toBe(true);
    expect(await footprint(u.id)).toMatchObject({ quota: 3 * UNIT, subs: 2 });
    const bad = await u.client.post(PAY, { plan_id: planId, request_id: 'no spaces allowed' });
    expect(bad.body).toMatchObject({ success: false, message: '参数错误' });
    expect(await footprint(u.id)).toMatchObject({ quota: 3 * UNIT, subs: 2 });
  });
});
