import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import type { TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { addUser, recordChanges, startConsole } from '../channels/fixture.js';
import { redemptionPageParams } from '../../src/services/redemptions.js';

describe('redemption page params', () => {
  it('treats p as 1-based and never yields a negative offset', () => {
    expect(redemptionPageParams({ p: '0', page_size: '5' })).toEqual({ page: 1, pageSize: 5 });
    expect(redemptionPageParams({ p: '-3' })).toEqual({ page: 1, pageSize: 10 });
    expect(redemptionPageParams({ p: '4', page_size: '0' })).toEqual({ page: 4, pageSize: 10 });
    expect(redemptionPageParams({ p: 'x', page_size: '1000' })).toEqual({ page: 1, pageSize: 100 });
  });
});

await describeEachDb('redemption codes', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let rootId: number;

  beforeAll(async () => {
    ({ server, root } = await startConsole(kind));
    rootId = root.userId!;
  });
  afterAll(async () => {
    await server?.close();
  });

  const row = (id: number) =>
    server.ctx.db.selectFrom('redemptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const rowByKey = (key: string) =>
    server.ctx.db.selectFrom('redemptions').selectAll().where('key', '=', key).executeTakeFirstOrThrow();
  const count = async () =>
    Number(
      (
        await server.ctx.db
          .selectFrom('redemptions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const quotaOf = async (id: number) =>
    Number(
      (await server.ctx.db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow()).quota,
    );
  const topupLogs = async (userId: number) =>
    server.ctx.logDb
      .selectFrom('logs')
      .select(['content', 'quota', 'username'])
      .where('user_id', '=', userId)
      .where('type', '=', 1)
      .execute();

  async function create(body: Record<string, unknown>): Promise<string[]> {
    const res = await root.post('/api/redemption/', body);
    expect(res.body.success, JSON.stringify(res.body)).toBe(true);
    return res.body.data;
  }

  it('creates codes with validated fields and 32-hex keys, all or nothing', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: '', quota: 100, count: 1 }, '兑换码名称长度必须在1-20之间'],
      [{ name: '   ', quota: 100, count: 1 }, '兑换码名称长度必须在1-20之间'],
      [{ name: '码'.repeat(21), quota: 100, count: 1 }, '兑换码名称长度必须在1-20之间'],
      [{ name: 'n', quota: -1, count: 1 }, '兑换码额度必须是正整数'],
      [{ name: 'n', quota: 1.5, count: 1 }, '兑换码额度必须是正整数'],
      [{ name: 'n', quota: 'abc', count: 1 }, '兑换码额度必须是正整数'],
      [{ name: 'n', quota: 100, count: 0 }, '兑换码个数必须大于0'],
      [{ name: 'n', quota: 100, count: 101 }, '一次兑换码批量生成的个数不能大于 100'],
    ];
    for (const [body, message] of cases)
      expect((await root.post('/api/redemption/', body)).body, JSON.stringify(body)).toEqual({
        success: false,
        message,
      });
    expect(await count()).toBe(0);

    const keys = await create({ name: '码'.repeat(20), quota: 100000, count: 3 });
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(3);
    for (const k of keys) {
      expect(k).toMatch(/^[0-9a-f]{32}$/);
      const r = await rowByKey(k);
      expect(r).toMatchObject({
        name: '码'.repeat(20),
        quota: 100000,
        status: 1,
        used_user_id: 0,
        redeemed_time: 0,
        user_id: rootId,
        deleted_at: null,
      });
      expect(Math.abs(Number(r.created_time) - Date.now() / 1000)).toBeLessThan(60);
    }
    // count defaults to 1; the route also answers without the trailing slash
    const one = await root.post('/api/redemption', { name: 'single', quota: '42' });
    expect(one.body.success).toBe(true);
    expect(one.body.data).toHaveLength(1);
    expect((await rowByKey(one.body.data[0])).quota).toBe(42);
    expect(await count()).toBe(4);
  });

  it('is admin only', async () => {
    const user = await addUser(server);
    for (const [method, path] of [
      ['GET', '/api/redemption/'],
      ['POST', '/api/redemption/'],
      ['PUT', '/api/redemption/'],
      ['DELETE', '/api/redemption/1'],
      ['GET', '/api/redemption/search?keyword=a'],
    ] as const) {
      const res = await user.client.request(
        method,
        path,
        method === 'GET' || method === 'DELETE' ? undefined : { name: 'x', quota: 1, count: 1 },
      );
      expect(res.body, `${method} ${path}`).toEqual({ success: false, message: '无权进行此操作，权限不足' });
    }
    expect(await count()).toBe(4);
  });

  it('lists newest first with 1-based pages, clamps p=0, and searches by id or name prefix', async () => {
    await create({ name: 'batch-a', quota: 1000, count: 8 }); // 12 codes in total now
    const p1 = await root.get('/api/redemption/?p=1&page_size=5');
    expect(p1.body.success).toBe(true);
    expect(p1.body.data).toMatchObject({ total: 12, page: 1, page_size: 5 });
    expect(p1.body.data.items).toHaveLength(5);
    const ids: number[] = p1.body.data.items.map((r: { id: number }) => r.id);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
    expect(p1.body.data.items[0]).toMatchObject({ name: 'batch-a', quota: 1000, status: 1, count: 0 });
    expect(p1.body.data.items[0].key).toMatch(/^[0-9a-f]{32}$/);
    expect(p1.body.data.items[0]).not.toHaveProperty('deleted_at');

    const p3 = await root.get('/api/redemption/?p=3&page_size=5');
    expect(p3.body.data.items).toHaveLength(2);
    expect(p3.body.data.total).toBe(12);
    // new-api turned p=0 into a negative offset; here it is the first page
    const p0 = await root.get('/api/redemption/?p=0&page_size=5');
    expect(p0.body.success).toBe(true);
    expect(p0.body.data.items.map((r: { id: number }) => r.id)).toEqual(ids);
    expect(p0.body.data.page).toBe(1);
    const dflt = await root.get('/api/redemption/?page_size=0');
    expect(dflt.body.data).toMatchObject({ page: 1, page_size: 10, total: 12 });
    expect(dflt.body.data.items).toHaveLength(10);

    const byName = await root.get('/api/redemption/search?keyword=batch&p=1&page_size=3');
    expect(byName.body.data).toMatchObject({ total: 8, page: 1, page_size: 3 });
    expect(byName.body.data.items.every((r: { name: string }) => r.name === 'batch-a')).toBe(true);
    const single = (await root.get('/api/redemption/search?keyword=sin')).body.data;
    expect(single.total).toBe(1);
    const byId = await root.get(`/api/redemption/search?keyword=${single.items[0].id}`);
    expect(byId.body.data.items.map((r: { id: number }) => r.id)).toEqual([single.items[0].id]);
    expect((await root.get('/api/redemption/search?keyword=nomatch')).body.data).toEqual({
      items: [],
      total: 0,
      page: 1,
      page_size: 10,
    });

    const one = await root.get(`/api/redemption/${single.items[0].id}`);
    expect(one.body.data).toMatchObject({ id: single.items[0].id, name: 'single', quota: 42, status: 1 });
    expect((await root.get('/api/redemption/999999')).body).toEqual({ success: false, message: '兑换码不存在' });
  });

  it('redeems a code once, crediting the user, logging and publishing a user change', async () => {
    const user = await addUser(server);
    const [key] = await create({ name: 'gift', quota: 100000, count: 1 });
    const { id } = await rowByKey(key);
    const before = await quotaOf(user.id);
    const changes = recordChanges(server);
    try {
      expect((await user.client.post('/api/user/topup', { key: '' })).body).toEqual({
        success: false,
        message: '未提供兑换码',
      });
      expect((await user.client.post('/api/user/topup', { key: 'f'.repeat(32) })).body).toEqual({
        success: false,
        message: '无效的兑换码',
      });
      const res = await user.client.post('/api/user/topup', { key: ` ${key} ` });
      expect(res.body).toEqual({ success: true, message: '', data: 100000 });
      expect(changes.take()).toContainEqual({ kind: 'user', id: user.id });
    } finally {
      changes.stop();
    }
    expect(await quotaOf(user.id)).toBe(before + 100000);
    const r = await row(id);
    expect(r).toMatchObject({ status: 3, used_user_id: user.id });
    expect(Math.abs(Number(r.redeemed_time) - Date.now() / 1000)).toBeLessThan(60);
    expect(await topupLogs(user.id)).toEqual([
      { content: `通过兑换码充值 ＄0.200000 额度，兑换码ID ${id}`, quota: 0, username: user.username },
    ]);
    expect((await user.client.post('/api/user/topup', { key })).body).toEqual({
      success: false,
      message: '该兑换码已被使用',
    });
    expect(await quotaOf(user.id)).toBe(before + 100000);
  });

  it('lets exactly one of 10 concurrent requests redeem a code', async () => {
    const users = await Promise.all(Array.from({ length: 5 }, () => addUser(server)));
    const [key] = await create({ name: 'race', quota: 777777, count: 1 });
    const { id } = await rowByKey(key);
    const before = await Promise.all(users.map((u) => quotaOf(u.id)));
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => users[i % 5].client.post('/api/user/topup', { key })),
    );
    const wins = results.filter((r) => r.body.success);
    expect(wins).toHaveLength(1);
    expect(wins[0].body.data).toBe(777777);
    for (const r of results.filter((x) => !x.body.success))
      expect(r.body).toEqual({ success: false, message: '该兑换码已被使用' });
    const after = await Promise.all(users.map((u) => quotaOf(u.id)));
    const gained = after.map((q, i) => q - before[i]);
    expect(gained.reduce((a, b) => a + b, 0)).toBe(777777);
    const winner = users[gained.findIndex((g) => g === 777777)];
    expect((await row(id)).used_user_id).toBe(winner.id);
    let logs = 0;
    for (const u of users) logs += (await topupLogs(u.id)).filter((l) => l.content.endsWith(`兑换码ID ${id}`)).length;
    expect(logs).toBe(1);
  });

  it('enforces the status rules: a used code cannot be enabled, only an unused code can be edited', async () => {
    const user = await addUser(server);
    const [key] = await create({ name: 'rules', quota: 500, count: 1 });
    const { id } = await rowByKey(key);

    const edited = await root.put('/api/redemption/', { id, name: 'renamed', quota: 600 });
    expect(edited.body).toMatchObject({ success: true, data: { id, name: 'renamed', quota: 600, status: 1 } });
    expect((await root.put('/api/redemption/', { id, name: '', quota: 600 })).body).toEqual({
      success: false,
      message: '兑换码名称长度必须在1-20之间',
    });
    expect((await root.put('/api/redemption/', { id, name: 'x', quota: 0 })).body).toEqual({
      success: false,
      message: '兑换码额度必须是正整数',
    });
    expect((await root.put('/api/redemption/?status_only=true', { id, status: 3 })).body).toEqual({
      success: false,
      message: '无效的兑换码状态',
    });
    expect((await root.put('/api/redemption/', { id: 999999, name: 'x', quota: 1 })).body).toEqual({
      success: false,
      message: '兑换码不存在',
    });

    // status_only changes only the status, even when other fields are sent
    const off = await root.put('/api/redemption/?status_only=true', { id, status: 2, name: 'ignored', quota: 1 });
    expect(off.body).toMatchObject({ success: true, data: { status: 2, name: 'renamed', quota: 600 } });
    expect((await root.put('/api/redemption/', { id, name: 'again', quota: 1 })).body).toEqual({
      success: false,
      message: '只能编辑未使用的兑换码',
    });
    expect((await user.client.post('/api/user/topup', { key })).body).toEqual({
      success: false,
      message: '该兑换码已被使用',
    });
    expect((await row(id)).status).toBe(2);

    expect((await root.put('/api/redemption/?status_only=true', { id, status: 1 })).body).toMatchObject({
      success: true,
      data: { status: 1 },
    });
    expect((await user.client.post('/api/user/topup', { key })).body).toEqual({
      success: true,
      message: '',
      data: 600,
    });

    expect((await root.put('/api/redemption/?status_only=true', { id, status: 1 })).body).toEqual({
      success: false,
      message: '该兑换码已被使用，无法修改',
    });
    expect((await root.put('/api/redemption/?status_only=true', { id, status: 2 })).body).toEqual({
      success: false,
      message: '该兑换码已被使用，无法修改',
    });
    expect((await root.put('/api/redemption/', { id, name: 'late', quota: 99999 })).body).toEqual({
      success: false,
      message: '该兑换码已被使用，无法修改',
    });
    expect(await row(id)).toMatchObject({ status: 3, name: 'renamed', quota: 600, used_user_id: user.id });
  });

  it('soft deletes: the row stays, lists and redemption no longer see it', async () => {
    const user = await addUser(server);
    const [key] = await create({ name: 'doomed', quota: 5, count: 1 });
    const { id } = await rowByKey(key);
    const totalBefore = (await root.get('/api/redemption/')).body.data.total;
    expect((await root.delete(`/api/redemption/${id}/`)).body).toEqual({ success: true, message: '' });
    expect((await root.delete(`/api/redemption/${id}`)).body).toEqual({ success: false, message: '兑换码不存在' });
    expect((await row(id)).deleted_at).not.toBeNull();
    expect((await root.get(`/api/redemption/${id}`)).body).toEqual({ success: false, message: '兑换码不存在' });
    expect((await root.get('/api/redemption/')).body.data.total).toBe(totalBefore - 1);
    expect((await root.get('/api/redemption/search?keyword=doomed')).body.data.total).toBe(0);
    expect((await root.put('/api/redemption/?status_only=true', { id, status: 2 })).body).toEqual({
      success: false,
      message: '兑换码不存在',
    });
    const before = await quotaOf(user.id);
    expect((await user.client.post('/api/user/topup', { key })).body).toEqual({
      success: false,
      message: '无效的兑换码',
    });
    expect(await quotaOf(user.id)).toBe(before);
    expect((await row(id)).status).toBe(1);
  });
});
