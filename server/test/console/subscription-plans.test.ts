// new-api's subscription plan routes (docs/decisions/0015-subscription-plans.md): the admin's list, create, update
// and enabled switch, the user's list of enabled plans; new-api's shapes and texts, our windows beside each plan as
// `limits`, bad input changing nothing, and every node's copy of the plans reloading on a change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDb, redisAvailable, REDIS_URL } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { registerAndLogin, setupAndLoginRoot } from './fixtures.js';
import { planCache } from '../../src/services/subscriptions/plans.js';
import { waitFor } from '../relay/fixtures.js';

const ADMIN_PLANS = '/api/subscription/admin/plans';

/** Every new-api field of a plan, as its console sends them. */
const PRO = {
  title: 'Pro',
  subtitle: 'for heavy users',
  price_amount: 19.123456,
  currency: 'CNY',
  duration_unit: 'day',
  duration_value: 30,
  custom_seconds: 0,
  enabled: true,
  sort_order: 7,
  stripe_price_id: 'price_pro',
  creem_product_id: 'prod_pro',
  max_purchase_per_user: 3,
  upgrade_group: 'vip',
  total_amount: 50_000_000,
  quota_reset_period: 'weekly',
  quota_reset_custom_seconds: 0,
};

const LIMITS = {
  rolling_seconds: 5 * 3600,
  rolling_amount: 1_000_000,
  daily_amount: 2_000_000,
  weekly_amount: 0,
  monthly_amount: 20_000_000,
  models: ['gpt-4o', 'claude-sonnet'],
  groups: ['vip'],
};

async function planRows(s: TestServer) {
  const plans = await s.ctx.db.selectFrom('subscription_plans').selectAll().orderBy('id').execute();
  const limits = await s.ctx.db.selectFrom('subscription_plan_limits').selectAll().orderBy('plan_id').execute();
  return { plans, limits };
}

await describeEachDb('subscription plan routes', (kind) => {
  let s: TestServer;
  let root: ConsoleClient;
  let user: ConsoleClient;
  let proId: number;

  beforeAll(async () => {
    s = await startTestServer({ kind });
    root = await setupAndLoginRoot(s);
    user = (await registerAndLogin(s)).client;
  });
  afterAll(async () => {
    await s?.close();
  });

  it('creates a plan with every new-api field and answers it as new-api does', async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await root.post(ADMIN_PLANS, { plan: { ...PRO, id: 999, created_at: 1 } });
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    const plan = res.body.data;
    proId = plan.id;
    expect(proId).not.toBe(999);
    // new-api sells in USD whatever is sent
    expect(plan).toEqual({
      ...PRO,
      currency: 'USD',
      id: proId,
      created_at: plan.created_at,
      updated_at: plan.created_at,
    });
    expect(plan.created_at).toBeGreaterThanOrEqual(before);

    const list = await root.get(ADMIN_PLANS);
    expect(list.body).toEqual({ success: true, message: '', data: [{ plan, limits: null }] });
    const { plans, limits } = await planRows(s);
    expect(plans).toHaveLength(1);
    expect({ ...plans[0], enabled: !!plans[0].enabled }).toEqual(plan);
    expect(limits).toEqual([]);
  });

  it('stores our windows beside the plan and lists them with it; the user sees enabled plans only, in new-api’s order', async () => {
    const res = await root.post(ADMIN_PLANS, {
      plan: { title: 'Windows', price_amount: 5, sort_order: 7 },
      limits: { ...LIMITS, models: ['gpt-4o', 'gpt-4o', 'claude-sonnet'] },
    });
    expect(res.body.success).toBe(true);
    const windowsId = res.body.data.id;
    // new-api's defaults for what was left out
    expect(res.body.data).toMatchObject({
      subtitle: '',
      currency: 'USD',
      duration_unit: 'month',
      duration_value: 1,
      enabled: true,
      total_amount: 0,
      quota_reset_period: 'never',
      max_purchase_per_user: 0,
    });
    const hidden = await root.post(ADMIN_PLANS, { plan: { title: 'Hidden', enabled: false, sort_order: 9 } });
    expect(hidden.body.data.enabled).toBe(false);

    const { limits } = await planRows(s);
    expect(limits).toEqual([{ plan_id: windowsId, ...LIMITS, models: 'gpt-4o,claude-sonnet', groups: 'vip' }]);

    const admin = await root.get(ADMIN_PLANS);
    // sort_order desc, then id desc
    expect(admin.body.data.map((v: any) => [v.plan.title, v.limits])).toEqual([
      ['Hidden', null],
      ['Windows', LIMITS],
      ['Pro', null],
    ]);
    const mine = await user.get('/api/subscription/plans');
    expect(mine.body.success).toBe(true);
    expect(mine.body.data.map((v: any) => [v.plan.id, v.limits])).toEqual([
      [windowsId, LIMITS],
      [proId, null],
    ]);
    expect(mine.body.data[1].plan).toEqual(admin.body.data[2].plan);
  });

  it('refuses bad plans with new-api’s texts and writes nothing', async () => {
    const before = await planRows(s);
    const cases: Array<[unknown, string]> = [
      [{}, '参数错误'],
      [{ plan: 'Pro' }, '参数错误'],
      [{ plan: { ...PRO, title: '   ' } }, '套餐标题不能为空'],
      [{ plan: { ...PRO, title: 'x'.repeat(129) } }, '参数错误'],
      [{ plan: { ...PRO, price_amount: -1 } }, '价格不能为负数'],
      [{ plan: { ...PRO, price_amount: 10000 } }, '价格不能超过9999'],
      [{ plan: { ...PRO, price_amount: '9.9' } }, '参数错误'],
      [{ plan: { ...PRO, duration_value: 1.5 } }, '参数错误'],
      [{ plan: { ...PRO, duration_unit: 'week' } }, '订阅时长配置无效'],
      [{ plan: { ...PRO, duration_unit: 'custom', custom_seconds: 0 } }, '订阅时长配置无效'],
      [{ plan: { ...PRO, max_purchase_per_user: -1 } }, '购买上限不能为负数'],
      [{ plan: { ...PRO, total_amount: -5 } }, '总额度不能为负数'],
      [{ plan: { ...PRO, upgrade_group: 'nope' } }, '升级分组不存在'],
      [{ plan: { ...PRO, quota_reset_period: 'custom', quota_reset_custom_seconds: 0 } }, '自定义重置周期需大于0秒'],
      [{ plan: { ...PRO, enabled: 'yes' } }, '参数错误'],
      [{ plan: PRO, limits: { daily_amount: -1 } }, '窗口额度不能为负数'],
      [{ plan: PRO, limits: { rolling_amount: 10 } }, '滚动窗口需大于0秒'],
      [{ plan: PRO, limits: { groups: ['nope'] } }, '分组不存在'],
      [{ plan: PRO, limits: { models: ['a,b'] } }, '参数错误'],
      [{ plan: PRO, limits: { daily_amount: 1.5 } }, '参数错误'],
      // beyond 2^53: refused before any route by the app's input check (lib/input.ts)
      [{ plan: PRO, limits: { daily_amount: 2 ** 60 } }, '数值超出范围'],
    ];
    for (const [body, message] of cases) {
      const res = await root.post(ADMIN_PLANS, body);
      expect({ body, answer: res.body }).toEqual({ body, answer: { success: false, message } });
      const put = await root.put(`${ADMIN_PLANS}/${proId}`, body);
      expect({ body, answer: put.body }).toEqual({ body, answer: { success: false, message } });
    }
    expect(await planRows(s)).toEqual(before);
  });

  it('replaces a plan’s fields on PUT, keeping its windows unless they are sent', async () => {
    const edited = { ...PRO, title: 'Pro 2', subtitle: '', price_amount: 0.5, total_amount: 0, sort_order: 1 };
    const res = await root.put(`${ADMIN_PLANS}/${proId}`, { plan: edited });
    expect(res.body).toEqual({ success: true, message: '', data: null });
    const row = () => root.get(ADMIN_PLANS).then((r) => r.body.data.find((v: any) => v.plan.id === proId));
    const after = await row();
    expect(after.plan).toMatchObject({ ...edited, currency: 'USD', id: proId });
    expect(after.limits).toBeNull();

    await root.put(`${ADMIN_PLANS}/${proId}`, { plan: edited, limits: { daily_amount: 300 } });
    expect((await row()).limits).toEqual({
      rolling_seconds: 0,
      rolling_amount: 0,
      daily_amount: 300,
      weekly_amount: 0,
      monthly_amount: 0,
      models: [],
      groups: [],
    });
    // new-api's console sends the plan alone: the windows stay
    await root.put(`${ADMIN_PLANS}/${proId}`, { plan: { ...edited, title: 'Pro 3' } });
    expect(await row()).toMatchObject({ plan: { title: 'Pro 3' }, limits: { daily_amount: 300 } });
    // null removes them (new-api's single window again); all zero is the same
    await root.put(`${ADMIN_PLANS}/${proId}`, { plan: edited, limits: null });
    expect((await row()).limits).toBeNull();
  });

  it('answers new-api’s texts for a bad or unknown id', async () => {
    const before = await planRows(s);
    expect((await root.put(`${ADMIN_PLANS}/0`, { plan: PRO })).body).toEqual({ success: false, message: '无效的ID' });
    expect((await root.put(`${ADMIN_PLANS}/abc`, { plan: PRO })).body).toEqual({ success: false, message: '无效的ID' });
    expect((await root.put(`${ADMIN_PLANS}/99999`, { plan: PRO })).body).toEqual({
      success: false,
      message: '套餐不存在',
    });
    const patch = (id: string, body: unknown) => root.request('PATCH', `${ADMIN_PLANS}/${id}`, body);
    expect((await patch('-1', { enabled: true })).body).toEqual({ success: false, message: '无效的ID' });
    expect((await patch('99999', { enabled: true })).body).toEqual({ success: false, message: '套餐不存在' });
    expect((await patch(String(proId), {})).body).toEqual({ success: false, message: '参数错误' });
    expect((await patch(String(proId), { enabled: 'false' })).body).toEqual({ success: false, message: '参数错误' });
    expect(await planRows(s)).toEqual(before);
  });

  it('switches a plan off and on with PATCH {enabled}', async () => {
    const patch = (enabled: boolean) => root.request('PATCH', `${ADMIN_PLANS}/${proId}`, { enabled });
    const visible = async () => (await user.get('/api/subscription/plans')).body.data.map((v: any) => v.plan.id);
    expect(await visible()).toContain(proId);
    expect((await patch(false)).body).toEqual({ success: true, message: '', data: null });
    expect(await visible()).not.toContain(proId);
    // unchanged switch still succeeds (MySQL reports 0 changed rows)
    expect((await patch(false)).body).toEqual({ success: true, message: '', data: null });
    expect((await patch(true)).body.success).toBe(true);
    expect(await visible()).toContain(proId);
  });

  it('refuses the admin routes to a common user and to the anonymous, and changes nothing', async () => {
    const before = await planRows(s);
    const anon = new ConsoleClient(s.url);
    for (const c of [user, anon]) {
      const answers = [
        await c.get(ADMIN_PLANS),
        await c.post(ADMIN_PLANS, { plan: PRO }),
        await c.put(`${ADMIN_PLANS}/${proId}`, { plan: { ...PRO, title: 'hacked' } }),
        await c.request('PATCH', `${ADMIN_PLANS}/${proId}`, { enabled: false }),
      ];
      for (const a of answers) {
        expect(a.body.success).toBe(false);
        expect(a.body).not.toHaveProperty('data');
      }
    }
    const anonList = await anon.get('/api/subscription/plans');
    expect(anonList.body.success).toBe(false);
    expect(anonList.body).not.toHaveProperty('data');
    expect(await planRows(s)).toEqual(before);
  });

  it('reloads this node’s copy of the plans before answering a change', async () => {
    const cache = planCache(s.ctx);
    await cache.ready;
    await root.put(`${ADMIN_PLANS}/${proId}`, { plan: { ...PRO, title: 'Cached' }, limits: { weekly_amount: 9 } });
    expect(cache.get(proId)).toMatchObject({ plan: { title: 'Cached' }, limits: { weekly_amount: 9 } });
    await root.request('PATCH', `${ADMIN_PLANS}/${proId}`, { enabled: false });
    expect(cache.get(proId)?.plan.enabled).toBe(false);
  });
});

const withRedis = await redisAvailable();

describe.skipIf(!withRedis)('subscription plans across two nodes (Redis)', () => {
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    a = await startTestServer({ env: { REDIS_CONN_STRING: REDIS_URL } });
    b = await startTestServer({
      database: a.database,
      redisPrefix: a.ctx.redisPrefix,
      env: { REDIS_CONN_STRING: REDIS_URL },
    });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it('a plan written on one node reloads the other’s copy', async () => {
    const other = planCache(b.ctx);
    await other.ready;
    const root = await setupAndLoginRoot(a);
    const res = await root.post(ADMIN_PLANS, { plan: { title: 'Shared' }, limits: { daily_amount: 42 } });
    const id = res.body.data.id;
    await waitFor(() => other.get(id) !== undefined);
    expect(other.get(id)).toMatchObject({ plan: { title: 'Shared', enabled: true }, limits: { daily_amount: 42 } });
    await root.request('PATCH', `${ADMIN_PLANS}/${id}`, { enabled: false });
    await waitFor(() => other.get(id)?.plan.enabled === false);
  });
});
