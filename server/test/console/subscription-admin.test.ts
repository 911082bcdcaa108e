// The admin's routes on users' subscriptions and the expiry sweep (docs/decisions/0015-subscription-plans.md, step 4):
// bind, list, invalidate and delete with new-api's shapes and texts; the group upgrade and its restoration through an
// overlapping chain of upgrades (to the group from before the first, not new-api's previous link); the sweep run with
// the test's clock; the admin routes refused to a common user.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { registerAndLogin, setupAndLoginRoot } from './fixtures.js';
import { expireDueSubscriptions } from '../../src/services/subscriptions/expiry.js';
import { tickTasks } from '../../src/services/tasks/poller.js';

const ADMIN = '/api/subscription/admin';

await describeEachDb('subscription admin routes and expiry', (kind) => {
  let s: TestServer;
  let root: ConsoleClient;
  let vipPlan: number;
  let svipPlan: number;

  beforeAll(async () => {
    s = await startTestServer({ kind });
    root = await setupAndLoginRoot(s);
    const create = async (plan: Record<string, unknown>) => {
      const res = await root.post(`${ADMIN}/plans`, { plan: { duration_unit: 'hour', ...plan } });
      expect(res.body.success).toBe(true);
      return res.body.data.id as number;
    };
    vipPlan = await create({ title: 'VIP', duration_value: 1, upgrade_group: 'vip', total_amount: 100 });
    svipPlan = await create({ title: 'SVIP', duration_value: 2, upgrade_group: 'svip', max_purchase_per_user: 1 });
  });
  afterAll(async () => {
    await s?.close();
  });

  const groupOf = async (id: number) =>
    (await s.ctx.db.selectFrom('users').select('group').where('id', '=', id).executeTakeFirstOrThrow()).group;
  const subsOf = (userId: number) =>
    s.ctx.db.selectFrom('user_subscriptions').selectAll().where('user_id', '=', userId).orderBy('id').execute();

  it('binds, lists, invalidates and deletes; the group goes back to the one before the first upgrade', async () => {
    const u = await registerAndLogin(s);
    expect(await groupOf(u.id)).toBe('default');
    const quota = (await s.ctx.db.selectFrom('users').select('quota').where('id', '=', u.id).executeTakeFirstOrThrow())
      .quota;

    const bind = await root.post(`${ADMIN}/bind`, { user_id: u.id, plan_id: vipPlan });
    expect(bind.body).toEqual({ success: true, message: '', data: { message: '用户分组将升级到 vip' } });
    expect(await groupOf(u.id)).toBe('vip');
    const second = await root.post(`${ADMIN}/users/${u.id}/subscriptions`, { plan_id: svipPlan });
    expect(second.body).toEqual({ success: true, message: '', data: { message: '用户分组将升级到 svip' } });
    expect(await groupOf(u.id)).toBe('svip');

    const [vip, svip] = await subsOf(u.id);
    expect(vip).toMatchObject({ source: 'admin', upgrade_group: 'vip', prev_user_group: 'default', amount_total: 100 });
    // the chain's origin is carried on: new-api would remember 'vip' here
    expect(svip).toMatchObject({ source: 'admin', upgrade_group: 'svip', prev_user_group: 'default' });
    // a bind is free: the wallet is untouched
    expect(
      (await s.ctx.db.selectFrom('users').select('quota').where('id', '=', u.id).executeTakeFirstOrThrow()).quota,
    ).toBe(quota);

    // newest end first, new-api's summaries
    const list = await root.get(`${ADMIN}/users/${u.id}/subscriptions`);
    expect(list.body.success).toBe(true);
    expect(list.body.data.map((x: any) => x.subscription.id)).toEqual([svip.id, vip.id]);
    expect(list.body.data[1].subscription).toMatchObject({ plan_id: vipPlan, status: 'active', user_id: u.id });

    // max_purchase_per_user binds too
    const third = await root.post(`${ADMIN}/bind`, { user_id: u.id, plan_id: svipPlan });
    expect(third.body).toEqual({ success: false, message: '已达到该套餐购买上限' });
    expect(await subsOf(u.id)).toHaveLength(2);

    // invalidating the first: the other still upgrades, the group stays
    const before = Math.floor(Date.now() / 1000);
    const inv = await root.post(`${ADMIN}/user_subscriptions/${vip.id}/invalidate`);
    expect(inv.body).toEqual({ success: true, message: '', data: null });
    const cancelled = (await subsOf(u.id))[0];
    expect(cancelled.status).toBe('cancelled');
    expect(Number(cancelled.end_time)).toBeGreaterThanOrEqual(before);
    expect(Number(cancelled.end_time)).toBeLessThan(Number(vip.end_time));
    expect(await groupOf(u.id)).toBe('svip');

    // deleting the last upgrading one gives back the group from before the chain
    const del = await root.delete(`${ADMIN}/user_subscriptions/${svip.id}`);
    expect(del.body).toEqual({ success: true, message: '', data: { message: '用户分组将回退到 default' } });
    expect(await groupOf(u.id)).toBe('default');
    expect((await subsOf(u.id)).map((x) => x.id)).toEqual([vip.id]);
    expect(
      await s.ctx.db
        .selectFrom('subscription_usage')
        .select('user_subscription_id')
        .where('user_id', '=', u.id)
        .execute(),
    ).toEqual([{ user_subscription_id: vip.id }]);
  });

  it('refuses bad admin input with new-api’s texts and writes nothing', async () => {
    const u = await registerAndLogin(s);
    const cases: Array<[string, string, unknown, string]> = [
      ['POST', `${ADMIN}/bind`, { user_id: 'x', plan_id: vipPlan }, '参数错误'],
      ['POST', `${ADMIN}/bind`, { user_id: u.id }, '参数错误'],
      ['POST', `${ADMIN}/bind`, { user_id: 987654, plan_id: vipPlan }, '用户不存在'],
      ['POST', `${ADMIN}/bind`, { user_id: u.id, plan_id: 987654 }, '套餐不存在'],
      ['GET', `${ADMIN}/users/abc/subscriptions`, undefined, '无效的用户ID'],
      ['POST', `${ADMIN}/users/0/subscriptions`, { plan_id: vipPlan }, '无效的用户ID'],
      ['POST', `${ADMIN}/user_subscriptions/x/invalidate`, {}, '无效的订阅ID'],
      ['POST', `${ADMIN}/user_subscriptions/987654/invalidate`, {}, '订阅不存在'],
      ['DELETE', `${ADMIN}/user_subscriptions/987654`, undefined, '订阅不存在'],
    ];
    for (const [method, path, body, message] of cases) {
      const res = await root.request(method, path, body);
      expect({ path, body, answer: res.body }).toEqual({ path, body, answer: { success: false, message } });
    }
    expect(await subsOf(u.id)).toEqual([]);
    expect(
      await s.ctx.db.selectFrom('user_subscriptions').select('id').where('user_id', '=', 987654).execute(),
    ).toEqual([]);
    expect(await groupOf(u.id)).toBe('default');
  });

  it('refuses the admin routes to a common user, who cannot see nor end another user’s subscription', async () => {
    const owner = await registerAndLogin(s);
    await root.post(`${ADMIN}/bind`, { user_id: owner.id, plan_id: vipPlan });
    const [sub] = await subsOf(owner.id);
    const intruder = await registerAndLogin(s);
    const answers = [
      await intruder.client.post(`${ADMIN}/bind`, { user_id: intruder.id, plan_id: vipPlan }),
      await intruder.client.get(`${ADMIN}/users/${owner.id}/subscriptions`),
      await intruder.client.post(`${ADMIN}/users/${intruder.id}/subscriptions`, { plan_id: vipPlan }),
      await intruder.client.post(`${ADMIN}/user_subscriptions/${sub.id}/invalidate`),
      await intruder.client.delete(`${ADMIN}/user_subscriptions/${sub.id}`),
    ];
    for (const a of answers) {
      expect(a.body.success).toBe(false);
      expect(a.body).not.toHaveProperty('data');
    }
    expect(await subsOf(owner.id)).toEqual([sub]);
    expect(await subsOf(intruder.id)).toEqual([]);
    expect(await groupOf(intruder.id)).toBe('default');
    const own = await intruder.client.get('/api/subscription/self');
    expect(own.body.data.all_subscriptions).toEqual([]);
  });

  it('the expiry sweep ends what is past its end and restores the group once the last upgrade ends', async () => {
    const u = await registerAndLogin(s);
    await root.post(`${ADMIN}/bind`, { user_id: u.id, plan_id: vipPlan });
    await root.post(`${ADMIN}/bind`, { user_id: u.id, plan_id: svipPlan });
    const [vip, svip] = await subsOf(u.id);
    expect(await groupOf(u.id)).toBe('svip');

    // a second before the first ends: nothing of this user's
    await expireDueSubscriptions(s.ctx, Number(vip.end_time) - 1);
    expect((await subsOf(u.id)).map((x) => x.status)).toEqual(['active', 'active']);

    // the first ends; the second still upgrades: the group stays
    const first = await expireDueSubscriptions(s.ctx, Number(vip.end_time));
    expect(first.expired).toBeGreaterThanOrEqual(1);
    expect((await subsOf(u.id)).map((x) => x.status)).toEqual(['expired', 'active']);
    expect(await groupOf(u.id)).toBe('svip');

    // the second ends: back to the group from before the first (new-api would restore 'vip')
    await expireDueSubscriptions(s.ctx, Number(svip.end_time));
    expect((await subsOf(u.id)).map((x) => x.status)).toEqual(['expired', 'expired']);
    expect(await groupOf(u.id)).toBe('default');
    const self = await u.client.get('/api/subscription/self');
    expect(self.body.data.subscriptions).toEqual([]);
    expect(self.body.data.all_subscriptions.map((x: any) => x.subscription.status)).toEqual(['expired', 'expired']);

    // a second sweep finds nothing more
    expect((await expireDueSubscriptions(s.ctx, Number(svip.end_time))).expired).toBe(0);
  });

  it('the sweep runs in the task poller’s tick and leaves a group the admin changed in the meantime', async () => {
    const u = await registerAndLogin(s);
    await root.post(`${ADMIN}/bind`, { user_id: u.id, plan_id: vipPlan });
    const [vip] = await subsOf(u.id);
    await s.ctx.db.updateTable('users').set({ group: 'svip' }).where('id', '=', u.id).execute();
    expect((await tickTasks(s.ctx, Number(vip.end_time))).leased).toBe(true);
    expect((await subsOf(u.id))[0].status).toBe('expired');
    expect(await groupOf(u.id)).toBe('svip');
  });
});
