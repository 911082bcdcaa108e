import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import type { TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { addUser, recordChanges, startConsole } from '../channels/fixture.js';
import { normalizeAllowIps } from '../../src/services/tokens.js';
import { compileIpAllowList, ipAllowed as matches } from '../../src/lib/ip-match.js';

/** The relay's check: an empty list lets everyone through. */
const ipAllowed = (list: string, ip: string) => {
  const m = compileIpAllowList(list);
  return !m || matches(m, ip);
};

describe('allow_ips helpers', () => {
  it('accepts IPs and CIDR ranges, rejects anything else', () => {
    expect(normalizeAllowIps(' 10.0.0.1\n\n192.168.0.0/16\n::1\n2001:db8::/32\n10.0.0.1 ')).toBe(
      '10.0.0.1\n192.168.0.0/16\n::1\n2001:db8::/32',
    );
    for (const bad of ['10.0.0.256', '10.0.0.0/33', 'example.com', '1.2.3.4/8/1', '::/129', '10.0.0.0/x']) {
      expect(() => normalizeAllowIps(bad), bad).toThrow(/IP 白名单格式错误/);
    }
    expect(ipAllowed('', '1.2.3.4')).toBe(true);
    expect(ipAllowed('10.0.0.1\n192.168.0.0/16', '192.168.44.3')).toBe(true);
    expect(ipAllowed('10.0.0.1\n192.168.0.0/16', '::ffff:10.0.0.1')).toBe(true);
    expect(ipAllowed('10.0.0.1\n192.168.0.0/16', '10.0.0.2')).toBe(false);
    expect(ipAllowed('2001:db8::/32', '2001:db8::5')).toBe(true);
  });
});

await describeEachDb('token console API', (kind) => {
  let server: TestServer;
  let alice: { client: ConsoleClient; id: number };
  let bob: { client: ConsoleClient; id: number };
  let changes: ReturnType<typeof recordChanges>;

  beforeAll(async () => {
    ({ server } = await startConsole(kind));
    alice = await addUser(server, { group: 'svip' });
    bob = await addUser(server);
    changes = recordChanges(server);
  });
  afterAll(async () => {
    changes?.stop();
    await server?.close();
  });

  const tokenRow = (id: number) =>
    server.ctx.db.selectFrom('tokens').selectAll().where('id', '=', id).executeTakeFirst();
  const tokenCount = async () =>
    Number(
      (
        await server.ctx.db
          .selectFrom('tokens')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  async function create(c: ConsoleClient, body: Record<string, unknown>) {
    const res = await c.post('/api/token/', body);
    expect(res.body.success, JSON.stringify(res.body)).toBe(true);
    return res.body.data;
  }

  it('creates a token with a server-side key and validated fields, and publishes a token change', async () => {
    const before = await tokenCount();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, '令牌名称不能为空'],
      [{ name: '   ' }, '令牌名称不能为空'],
      [{ name: 'x'.repeat(31) }, '令牌名称过长'],
      [{ name: 'n', allow_ips: '1.2.3.4\nnot-an-ip' }, 'IP 白名单格式错误：not-an-ip（每行一个 IP 地址或 CIDR 网段）'],
      [{ name: 'n', group: 'premium' }, '无权使用指定的分组'],
      [{ name: 'n', remain_quota: -5 }, '额度必须是非负整数'],
      [{ name: 'n', expired_time: 'soon' }, '过期时间格式错误！'],
    ];
    for (const [body, message] of cases)
      expect((await alice.client.post('/api/token/', body)).body).toEqual({ success: false, message });
    expect(await tokenCount()).toBe(before);
    expect(changes.take()).toEqual([]);

    const t = await create(alice.client, {
      name: 'x'.repeat(30),
      remain_quota: 500000,
      expired_time: -1,
      unlimited_quota: false,
      model_limits_enabled: true,
      model_limits: ['gpt-4o', 'gpt-4o-mini'],
      allow_ips: '10.0.0.1\n192.168.0.0/24',
      group: 'svip', // alice's own group is usable
      key: 'attacker-chosen-key',
    });
    expect(t.key).toMatch(/^[0-9A-Za-z]{48}$/);
    expect(t).toMatchObject({ model_limits_enabled: true, unlimited_quota: false });
    const row = (await tokenRow(t.id))!;
    expect(row).toMatchObject({
      user_id: alice.id,
      key: t.key,
      status: 1,
      remain_quota: 500000,
      expired_time: -1,
      model_limits: 'gpt-4o,gpt-4o-mini',
      allow_ips: '10.0.0.1\n192.168.0.0/24',
      group: 'svip',
    });
    expect(!!row.model_limits_enabled).toBe(true);
    expect(!!row.unlimited_quota).toBe(false);
    expect(changes.take()).toEqual([{ kind: 'token', id: t.id, key: t.key, userId: alice.id }]);
    // vip comes from UserUsableGroups; bob (default group) may not use svip.
    expect((await create(bob.client, { name: 'bv', group: 'vip' })).group).toBe('vip');
    expect((await bob.client.post('/api/token/', { name: 'bs', group: 'svip' })).body).toEqual({
      success: false,
      message: '无权使用指定的分组',
    });
  });

  it("lists 0-based pages with size 1..100, searches, and only ever shows the caller's tokens", async () => {
    const mine: any[] = [];
    for (let i = 0; i < 4; i++) mine.push(await create(bob.client, { name: `page${i}` }));
    const all = (await bob.client.get('/api/token/?p=0&size=100')).body.data as any[];
    expect(all.every((t) => t.user_id === bob.id)).toBe(true);
    const p0 = await bob.client.get('/api/token/?p=0&size=2');
    expect(p0.body.success).toBe(true);
    expect(p0.body.data.map((t: any) => t.id)).toEqual([mine[3].id, mine[2].id]);
    expect(p0.body.data[0].key).toBe(mine[3].key);
    const p1 = await bob.client.get('/api/token/?p=1&size=2');
    expect(p1.body.data.map((t: any) => t.id)).toEqual([mine[1].id, mine[0].id]);
    expect((await bob.client.get('/api/token/?p=0&size=0')).body.data.length).toBe(Math.min(10, all.length));
    expect((await bob.client.get('/api/token?p=0&size=1000')).body.data.length).toBe(all.length);

    const byName = await bob.client.get('/api/token/search?keyword=page2');
    expect(byName.body.data.map((t: any) => t.id)).toEqual([mine[2].id]);
    const byKey = await bob.client.get(`/api/token/search?token=sk-${mine[1].key.slice(0, 10)}`);
    expect(byKey.body.data.map((t: any) => t.id)).toEqual([mine[1].id]);
    expect((await alice.client.get(`/api/token/search?token=${mine[1].key}`)).body.data).toEqual([]);
    expect((await alice.client.get('/api/token/search?keyword=page')).body.data).toEqual([]);
  });

  it("refuses to read, edit or delete another user's token", async () => {
    const t = await create(alice.client, { name: 'private', remain_quota: 10 });
    changes.take();
    expect((await bob.client.get(`/api/token/${t.id}`)).body).toEqual({ success: false, message: '令牌不存在' });
    expect((await bob.client.put('/api/token/', { id: t.id, name: 'stolen', remain_quota: 999 })).body).toEqual({
      success: false,
      message: '令牌不存在',
    });
    expect((await bob.client.put('/api/token/?status_only=true', { id: t.id, status: 2 })).body).toEqual({
      success: false,
      message: '令牌不存在',
    });
    expect((await bob.client.delete(`/api/token/${t.id}/`)).body).toEqual({ success: false, message: '令牌不存在' });
    expect(await tokenRow(t.id)).toMatchObject({ name: 'private', remain_quota: 10, status: 1, deleted_at: null });
    expect(changes.take()).toEqual([]);
    const own = await alice.client.get(`/api/token/${t.id}`);
    expect(own.body.data).toMatchObject({ id: t.id, name: 'private', key: t.key });
  });

  it('updates fully, toggles status and applies the expired / exhausted re-enable rules', async () => {
    const t = await create(alice.client, { name: 'rules', remain_quota: 100 });
    changes.take();
    const upd = await alice.client.put('/api/token/', {
      id: t.id,
      name: 'renamed',
      remain_quota: 200,
      allow_ips: '::1',
      model_limits: 'a,b',
    });
    expect(upd.body.success).toBe(true);
    expect(upd.body.data).toMatchObject({
      id: t.id,
      name: 'renamed',
      remain_quota: 200,
      allow_ips: '::1',
      model_limits: 'a,b',
      key: t.key,
      expired_time: -1,
    });
    expect(changes.take()).toEqual([{ kind: 'token', id: t.id, key: t.key, userId: alice.id }]);
    expect((await alice.client.put('/api/token/', { id: t.id, allow_ips: '1.1.1.1/40' })).body.success).toBe(false);
    expect((await alice.client.put('/api/token/', { id: t.id, name: 'y'.repeat(31) })).body).toEqual({
      success: false,
      message: '令牌名称过长',
    });
    expect((await tokenRow(t.id))!.name).toBe('renamed');

    expect((await alice.client.put('/api/token/?status_only=true', { id: t.id, status: 2 })).body.success).toBe(true);
    expect((await tokenRow(t.id))!.status).toBe(2);
    expect((await alice.client.put('/api/token/?status_only=true', { id: t.id, status: 4 })).body).toEqual({
      success: false,
      message: '无效的令牌状态',
    });

    // Expired: cannot re-enable until the expiry moves.
    const past = Math.floor(Date.now() / 1000) - 60;
    await server.ctx.db.updateTable('tokens').set({ status: 3, expired_time: past }).where('id', '=', t.id).execute();
    changes.take();
    expect((await alice.client.put('/api/token/?status_only=true', { id: t.id, status: 1 })).body).toEqual({
      success: false,
      message: '令牌已过期，无法启用，请先修改令牌过期时间，或者设置为永不过期',
    });
    expect((await tokenRow(t.id))!.status).toBe(3);
    expect(changes.take()).toEqual([]);
    expect((await alice.client.put('/api/token/', { id: t.id, expired_time: past + 3600 * 24 })).body.success).toBe(
      true,
    );
    expect((await alice.client.put('/api/token/?status_only=true', { id: t.id, status: 1 })).body.success).toBe(true);
    expect((await tokenRow(t.id))!.status).toBe(1);

    // Exhausted: cannot re-enable until quota is raised or unlimited.
    await server.ctx.db.updateTable('tokens').set({ status: 4, remain_quota: 0 }).where('id', '=', t.id).execute();
    expect((await alice.client.put('/api/token/?status_only=1', { id: t.id, status: 1 })).body).toEqual({
      success: false,
      message: '令牌可用额度已用尽，无法启用，请先修改令牌剩余额度，或者设置为无限额度',
    });
    expect((await alice.client.put('/api/token/', { id: t.id, unlimited_quota: true })).body.success).toBe(true);
    expect((await alice.client.put('/api/token/?status_only=1', { id: t.id, status: 1 })).body.success).toBe(true);
    await server.ctx.db
      .updateTable('tokens')
      .set({ status: 4, remain_quota: 0, unlimited_quota: false })
      .where('id', '=', t.id)
      .execute();
    expect((await alice.client.put('/api/token/', { id: t.id, remain_quota: 50 })).body.success).toBe(true);
    expect((await alice.client.put('/api/token/?status_only=1', { id: t.id, status: 1 })).body.success).toBe(true);
    expect(await tokenRow(t.id)).toMatchObject({ status: 1, remain_quota: 50 });
  });

  it('deletes (soft) and publishes the deleted key', async () => {
    const t = await create(alice.client, { name: 'gone' });
    changes.take();
    expect((await alice.client.delete(`/api/token/${t.id}`)).body.success).toBe(true);
    expect(changes.take()).toEqual([{ kind: 'token', id: t.id, key: t.key, userId: alice.id }]);
    expect((await tokenRow(t.id))!.deleted_at).not.toBeNull();
    expect((await alice.client.get(`/api/token/${t.id}`)).body.success).toBe(false);
    expect(((await alice.client.get('/api/token/?p=0&size=100')).body.data as any[]).some((x) => x.id === t.id)).toBe(
      false,
    );
    expect((await alice.client.delete(`/api/token/${t.id}`)).body.success).toBe(false);
  });
});
