// The top-up history (new-api's GET /api/user/topup/self and the admin's GET /api/user/topup), the order's
// payment_method as each path writes it, and the admin's completion of a pending order from that list.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import type { TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { addUser, startConsole } from '../channels/fixture.js';
import { setOption } from '../console/fixtures.js';

const QUOTA_PER_UNIT = 500000;
const NOT_PENDING = '订单状态不是待支付，无法补单';

type User = { client: ConsoleClient; id: number; username: string };

await describeEachDb('top-up history and admin completion', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let alice: User;
  let bob: User;
  let admin: User;
  /** alice's orders, oldest first: [alipay 10, wxpay 3]; bob's: [alipay 5] */
  const aliceOrders: string[] = [];
  let bobOrder = '';

  beforeAll(async () => {
    ({ server, root } = await startConsole(kind));
    alice = await addUser(server);
    bob = await addUser(server);
    admin = await addUser(server, { role: 10 });
    await setOption(root, 'ServerAddress', 'https://gw.example.com');
    await setOption(root, 'PayAddress', 'https://pay.example.com/');
    await setOption(root, 'EpayId', '1001');
    await setOption(root, 'EpayKey', 'merchant-secret-key');
    await setOption(root, 'Price', '7.3');
    await setOption(root, 'MinTopUp', '1');
    const pay = async (u: User, amount: number, method: string) => {
      const res = await u.client.post('/api/user/pay', { amount, payment_method: method });
      expect(res.body.message, JSON.stringify(res.body)).toBe('success');
      return (res.body.data as Record<string, string>).out_trade_no;
    };
    aliceOrders.push(await pay(alice, 10, 'zfb'));
    bobOrder = await pay(bob, 5, 'zfb');
    aliceOrders.push(await pay(alice, 3, 'wx'));
  });
  afterAll(async () => {
    await server?.close();
  });

  const quotaOf = async (id: number) =>
    Number(
      (await server.ctx.db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow()).quota,
    );
  const statusOf = async (tradeNo: string) =>
    (
      await server.ctx.db
        .selectFrom('top_ups')
        .select('status')
        .where('trade_no', '=', tradeNo)
        .executeTakeFirstOrThrow()
    ).status;
  const adminLogs = (userId: number) =>
    server.ctx.logDb
      .selectFrom('logs')
      .select(['content', 'type'])
      .where('user_id', '=', userId)
      .where('type', '=', 1)
      .execute();

  it("answers the user's own orders, newest first, in new-api's page object with each order's method", async () => {
    const res = await alice.client.get('/api/user/topup/self');
    expect(res.body.success).toBe(true);
    const { items, ...page } = res.body.data;
    expect(page).toEqual({ page: 1, page_size: 10, total: 2 });
    expect(items).toHaveLength(2);
    expect(items[0]).toEqual({
      id: expect.any(Number),
      user_id: alice.id,
      amount: 3,
      money: 21.9,
      trade_no: aliceOrders[1],
      payment_method: 'wxpay',
      create_time: expect.any(Number),
      status: 'pending',
    });
    expect(items[1]).toMatchObject({ trade_no: aliceOrders[0], payment_method: 'alipay', amount: 10, money: 73 });
    expect(Math.abs(items[0].create_time - Date.now() / 1000)).toBeLessThan(60);
  });

  it("never shows another user's orders, even searched by their trade number", async () => {
    const bobs = (await bob.client.get('/api/user/topup/self')).body.data;
    expect(bobs.total).toBe(1);
    expect(bobs.items.map((o: { trade_no: string }) => o.trade_no)).toEqual([bobOrder]);
    const searched = await alice.client.get(`/api/user/topup/self?keyword=${encodeURIComponent(bobOrder)}`);
    expect(searched.body.data).toMatchObject({ total: 0, items: [] });
    // a user_id in the query changes nothing
    const forged = await alice.client.get(`/api/user/topup/self?user_id=${bob.id}`);
    expect(forged.body.data.items.map((o: { user_id: number }) => o.user_id)).toEqual([alice.id, alice.id]);
  });

  it('searches by trade number and pages with p and page_size', async () => {
    const byKeyword = await alice.client.get(`/api/user/topup/self?keyword=${aliceOrders[0].slice(-12)}`);
    expect(byKeyword.body.data.items.map((o: { trade_no: string }) => o.trade_no)).toEqual([aliceOrders[0]]);
    // LIKE wildcards match themselves
    expect((await alice.client.get('/api/user/topup/self?keyword=%25')).body.data.total).toBe(0);
    const second = await alice.client.get('/api/user/topup/self?p=2&page_size=1');
    expect(second.body.data).toMatchObject({ page: 2, page_size: 1, total: 2 });
    expect(second.body.data.items.map((o: { trade_no: string }) => o.trade_no)).toEqual([aliceOrders[0]]);
  });

  it("lists every user's orders for an admin only", async () => {
    const refused = await alice.client.get('/api/user/topup');
    expect(refused.body.success).not.toBe(true);
    expect(refused.body.data?.items).toBeUndefined();
    const all = await admin.client.get('/api/user/topup');
    expect(all.body.success).toBe(true);
    expect(all.body.data.total).toBe(3);
    expect(all.body.data.items.map((o: { trade_no: string }) => o.trade_no)).toEqual([
      aliceOrders[1],
      bobOrder,
      aliceOrders[0],
    ]);
    const searched = await admin.client.get(`/api/user/topup?keyword=${encodeURIComponent(bobOrder)}`);
    expect(searched.body.data.items).toEqual([expect.objectContaining({ user_id: bob.id, trade_no: bobOrder })]);
  });

  it('lets an admin complete a pending order once, logged with the admin, and refuses anyone else', async () => {
    const tradeNo = aliceOrders[0];
    const before = await quotaOf(alice.id);
    const complete = (client: ConsoleClient) => client.post('/api/user/topup/complete', { trade_no: tradeNo });

    // the order's owner is no admin
    expect((await complete(alice.client)).body.success).not.toBe(true);
    expect(await quotaOf(alice.id)).toBe(before);
    expect(await statusOf(tradeNo)).toBe('pending');

    // five completions at once: one credits, the others are refused
    const answers = await Promise.all([1, 2, 3, 4, 5].map(() => complete(admin.client)));
    expect(answers.filter((a) => a.body.success === true)).toHaveLength(1);
    for (const a of answers.filter((x) => x.body.success !== true)) {
      expect(a.body).toMatchObject({ success: false, message: NOT_PENDING });
    }
    expect(await quotaOf(alice.id)).toBe(before + 10 * QUOTA_PER_UNIT);
    expect(await statusOf(tradeNo)).toBe('success');
    const logs = (await adminLogs(alice.id)).filter((l) => l.content.startsWith('管理员补单成功'));
    expect(logs).toHaveLength(1);
    expect(logs[0].content).toContain(`管理员ID ${admin.id}`);

    // once more: refused, nothing credited
    expect((await complete(admin.client)).body).toMatchObject({ success: false, message: NOT_PENDING });
    expect(await quotaOf(alice.id)).toBe(before + 10 * QUOTA_PER_UNIT);
    // the history shows the new state
    const mine = (await alice.client.get('/api/user/topup/self')).body.data.items;
    expect(mine.find((o: { trade_no: string }) => o.trade_no === tradeNo).status).toBe('success');
    // bob's order is untouched
    expect(await statusOf(bobOrder)).toBe('pending');
  });
});
