import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, dbAvailable, describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { addUser, startConsole } from '../channels/fixture.js';
import type { NewLog } from '../../src/db/schema.js';
import { relayServices } from '../../src/relay/services.js';
import { sql } from 'kysely';

await describeEachDb('log and usage data API', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let alice: { client: ConsoleClient; id: number; username: string };
  let bob: { client: ConsoleClient; id: number; username: string };
  let chId: number;
  const now = Math.floor(Date.now() / 1000);
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    ({ server, root } = await startConsole(kind));
    alice = await addUser(server);
    bob = await addUser(server);
    const ch = await root.post('/api/channel/', { name: 'upstream-one', key: 'k', models: 'gpt-4o' });
    chId = ch.body.data.id;
    const base = { content: '', is_stream: false, token_id: 0, prompt_tokens: 0, completion_tokens: 0, quota: 0, use_time: 1, other: '' };
    const rows: Array<[string, NewLog]> = [
      ['a1', { ...base, user_id: alice.id, username: alice.username, type: 2, model_name: 'gpt-4o', token_name: 'ta', channel_id: chId, group: 'default', quota: 100, prompt_tokens: 10, completion_tokens: 5, created_at: now - 10, other: JSON.stringify({ model_ratio: 2.5, admin_info: { use_channel: [chId] } }) }],
      ['a2', { ...base, user_id: alice.id, username: alice.username, type: 2, model_name: 'gpt-4o-mini', token_name: 'tb', channel_id: 777, group: 'vip', quota: 50, prompt_tokens: 100, completion_tokens: 100, created_at: now - 3600 }],
      ['a3', { ...base, user_id: alice.id, username: alice.username, type: 1, content: '通过兑换码充值 $1', created_at: now - 7200 }],
      ['b1', { ...base, user_id: bob.id, username: bob.username, type: 2, model_name: 'gpt-4o', token_name: 'bt', channel_id: chId, group: 'default', quota: 30, prompt_tokens: 1, completion_tokens: 2, created_at: now - 5 }],
      ['b2', { ...base, user_id: bob.id, username: bob.username, type: 3, content: '管理员将用户额度从 0 修改为 1', created_at: now - 86400 * 40 }],
    ];
    for (const [name, row] of rows) {
      await server.ctx.logDb.insertInto('logs').values(row).execute();
      const got = await server.ctx.logDb.selectFrom('logs').select('id').orderBy('id', 'desc').limit(1).executeTakeFirstOrThrow();
      ids[name] = Number(got.id);
    }
    // A large id shows the user-facing id % 1024.
    await server.ctx.logDb
      .insertInto('logs')
      .values({ ...base, id: 2050, user_id: alice.id, username: alice.username, type: 2, model_name: 'gpt-4o', token_name: 'ta', channel_id: chId, group: 'default', quota: 7, prompt_tokens: 3, completion_tokens: 4, created_at: now - 20, other: '{"admin_info":{"use_channel":[1,2]},"frt":120}' })
      .execute();
    ids.a4 = 2050;
  });
  afterAll(async () => server?.close());

  const itemIds = (body: any) => (body.data.items as any[]).map((r) => r.id);

  it('admin list: 1-based pages, newest first, every filter, channel names from the channels table', async () => {
    const p1 = await root.get('/api/log/?p=1&page_size=2');
    expect(p1.body.success).toBe(true);
    expect(p1.body.data).toMatchObject({ total: 6, page: 1, page_size: 2 });
    expect(itemIds(p1.body)).toEqual([ids.a4, ids.b2]);
    const p2 = await root.get('/api/log?p=2&page_size=2');
    expect(itemIds(p2.body)).toEqual([ids.b1, ids.a3]);
    const p0 = await root.get('/api/log/?p=0&page_size=2');
    expect(p0.body.data.page).toBe(1);

    const first = (await root.get(`/api/log/?p=1&page_size=10&token_name=ta`)).body.data.items as any[];
    expect(first.map((r) => r.id)).toEqual([ids.a4, ids.a1]);
    const a1 = first.find((r) => r.id === ids.a1);
    expect(a1).toMatchObject({ is_stream: false, channel: chId, channel_name: 'upstream-one', username: alice.username, model_name: 'gpt-4o', quota: 100, type: 2 });
    expect(JSON.parse(a1.other).admin_info).toEqual({ use_channel: [chId] });

    const q = async (qs: string) => itemIds((await root.get(`/api/log/?p=1&page_size=50&${qs}`)).body);
    expect(await q('type=2')).toEqual([ids.a4, ids.b1, ids.a2, ids.a1].sort((x, y) => y - x));
    expect(await q('type=0')).toHaveLength(6);
    expect(await q(`username=${bob.username}`)).toEqual([ids.b2, ids.b1].sort((x, y) => y - x));
    expect(await q('model_name=gpt-4o-mini')).toEqual([ids.a2]);
    expect(await q(`channel=${chId}`)).toEqual([ids.a4, ids.b1, ids.a1].sort((x, y) => y - x));
    expect(await q('group=vip')).toEqual([ids.a2]);
    expect(await q(`start_timestamp=${now - 4000}&end_timestamp=${now - 3000}`)).toEqual([ids.a2]);
    expect(await q(`start_timestamp=${now - 15}`)).toEqual([ids.b1, ids.a1]);
    const unknownChannel = ((await root.get(`/api/log/?p=1&page_size=50&group=vip`)).body.data.items as any[])[0];
    expect(unknownChannel.channel_name).toBe('');
  });

  it('self list: only own rows, id % 1024, no channel name, no admin_info, page_size capped at 100', async () => {
    const res = await alice.client.get('/api/log/self/?p=1&page_size=500');
    expect(res.body.data).toMatchObject({ total: 4, page: 1, page_size: 100 });
    const items = res.body.data.items as any[];
    expect(items.map((r) => r.id)).toEqual([2050 % 1024, ids.a3 % 1024, ids.a2 % 1024, ids.a1 % 1024]);
    for (const r of items) {
      expect(r.user_id).toBe(alice.id);
      expect(r.channel_name).toBe('');
      if (r.other) expect(JSON.parse(r.other)).not.toHaveProperty('admin_info');
    }
    expect(JSON.parse(items[0].other)).toEqual({ frt: 120 });
    expect(JSON.parse(items[3].other)).toEqual({ model_ratio: 2.5 });
    // username / channel filters are not available to users: they cannot reach other users' rows.
    const sneaky = await alice.client.get(`/api/log/self?p=1&page_size=10&username=${bob.username}&channel=${chId}`);
    expect(sneaky.body.data.total).toBe(4);
    const typed = await alice.client.get('/api/log/self/?type=1');
    expect(typed.body.data.items.map((r: any) => r.type)).toEqual([1]);
    // A normal user cannot use the admin routes.
    expect((await alice.client.get('/api/log/')).body.success).toBe(false);
    expect((await alice.client.get('/api/log/stat')).body.success).toBe(false);
    expect((await alice.client.delete('/api/log/?target_timestamp=' + now)).body.success).toBe(false);
  });

  it('stat: quota of matching consume logs, rpm/tpm of the last 60 s', async () => {
    const all = await root.get('/api/log/stat');
    expect(all.body).toEqual({ success: true, message: '', data: { quota: 100 + 50 + 30 + 7, rpm: 3, tpm: 15 + 3 + 7 } });
    const filtered = await root.get(`/api/log/stat?username=${alice.username}&start_timestamp=${now - 4000}&end_timestamp=${now - 3000}`);
    // The time range limits quota; rpm/tpm always look at the last minute.
    expect(filtered.body.data).toEqual({ quota: 50, rpm: 2, tpm: 15 + 7 });
    expect((await root.get('/api/log/stat?model_name=gpt-4o-mini')).body.data).toEqual({ quota: 50, rpm: 0, tpm: 0 });
    const self = await bob.client.get('/api/log/self/stat');
    expect(self.body.data).toEqual({ quota: 30, rpm: 1, tpm: 3 });
    const selfToken = await alice.client.get('/api/log/self/stat?token_name=tb');
    expect(selfToken.body.data).toEqual({ quota: 50, rpm: 0, tpm: 0 });
  });

  it('search by type or content prefix, admin and self', async () => {
    const byType = await root.get('/api/log/search?keyword=3');
    expect(byType.body.data.map((r: any) => r.id)).toEqual([ids.b2]);
    const byContent = await root.get(`/api/log/search?keyword=${encodeURIComponent('通过兑换码')}`);
    expect(byContent.body.data.map((r: any) => r.id)).toEqual([ids.a3]);
    expect((await root.get('/api/log/search?keyword=%25')).body.data).toEqual([]);
    const self = await alice.client.get('/api/log/self/search?keyword=2');
    expect(self.body.data.map((r: any) => r.id)).toEqual([2050 % 1024, ids.a2 % 1024, ids.a1 % 1024]);
    expect(self.body.data.every((r: any) => r.channel_name === '')).toBe(true);
    expect((await bob.client.get(`/api/log/self/search?keyword=${encodeURIComponent('通过')}`)).body.data).toEqual([]);
  });

  it('usage data: admin aggregation per model and hour, rows by username, self view bounded to 30 days', async () => {
    const hour = Math.floor(now / 3600) * 3600;
    const qd = [
      { user_id: alice.id, username: alice.username, model_name: 'gpt-4o', created_at: hour, count: 2, quota: 100, token_used: 30 },
      { user_id: bob.id, username: bob.username, model_name: 'gpt-4o', created_at: hour, count: 1, quota: 40, token_used: 5 },
      { user_id: bob.id, username: bob.username, model_name: 'gpt-4o-mini', created_at: hour, count: 4, quota: 8, token_used: 80 },
      { user_id: alice.id, username: alice.username, model_name: 'gpt-4o', created_at: hour - 3600, count: 1, quota: 1, token_used: 1 },
      { user_id: alice.id, username: alice.username, model_name: 'gpt-4o', created_at: hour - 86400 * 60, count: 9, quota: 9, token_used: 9 },
    ];
    await server.ctx.db.insertInto('quota_data').values(qd).execute();
    const agg = await root.get(`/api/data/?start_timestamp=${hour - 7200}&end_timestamp=${hour + 3600}`);
    expect(agg.body.success).toBe(true);
    expect(agg.body.data).toEqual([
      { model_name: 'gpt-4o', created_at: hour - 3600, count: 1, quota: 1, token_used: 1 },
      { model_name: 'gpt-4o', created_at: hour, count: 3, quota: 140, token_used: 35 },
      { model_name: 'gpt-4o-mini', created_at: hour, count: 4, quota: 8, token_used: 80 },
    ]);
    const byUser = await root.get(`/api/data?start_timestamp=${hour - 7200}&end_timestamp=${hour + 3600}&username=${bob.username}`);
    expect(byUser.body.data.map((r: any) => [r.model_name, r.count, r.user_id])).toEqual([
      ['gpt-4o', 1, bob.id],
      ['gpt-4o-mini', 4, bob.id],
    ]);

    const self = await alice.client.get(`/api/data/self?start_timestamp=${hour - 86400}&end_timestamp=${hour + 3600}`);
    expect(self.body.data.map((r: any) => [r.created_at, r.quota])).toEqual([
      [hour - 3600, 1],
      [hour, 100],
    ]);
    expect((await alice.client.get(`/api/data/self?start_timestamp=${hour - 86400 * 31}&end_timestamp=${hour}`)).body).toEqual({ success: false, message: '时间跨度不能超过 1 个月' });
    // as new-api: no range, or an end before the start, is an empty answer rather than an error
    expect((await alice.client.get('/api/data/self')).body).toEqual({ success: true, message: '', data: [] });
    expect((await alice.client.get(`/api/data/self?start_timestamp=${hour}&end_timestamp=${hour - 3600}`)).body).toEqual({ success: true, message: '', data: [] });
    expect((await alice.client.get(`/api/data/self?start_timestamp=${hour - 86400}`)).body).toEqual({ success: true, message: '', data: [] });
    expect((await alice.client.get('/api/data/')).body.success).toBe(false);
  });

  it('usage data includes the buckets not flushed to quota_data yet, each counted once before and after a flush', async () => {
    const qd = relayServices(server.ctx).quotaData;
    const h = Math.floor(now / 3600) * 3600 - 5 * 86400;
    const at = (m: number) => (h + m * 60) * 1000;
    const range = `start_timestamp=${h}&end_timestamp=${h + 1800}`;
    const self = async () =>
      (await alice.client.get(`/api/data/self?${range}`)).body.data.map((r: any) => [r.model_name, r.created_at, r.count, r.quota, r.token_used, r.user_id]);
    const admin = async () => (await root.get(`/api/data/?${range}`)).body.data;
    qd.record(alice.id, alice.username, 'gpt-4o', 40, 400, at(1));
    qd.record(alice.id, alice.username, 'gpt-4o', 2, 20, at(30));
    qd.record(bob.id, bob.username, 'gpt-4o', 5, 50, at(59));
    qd.record(alice.id, alice.username, 'gpt-4o', 1000, 1, at(61)); // the next hour's bucket: outside the range
    expect(await self()).toEqual([['gpt-4o', h, 2, 42, 420, alice.id]]);
    expect(await admin()).toEqual([{ model_name: 'gpt-4o', created_at: h, count: 3, quota: 47, token_used: 470 }]);

    await qd.flush();
    expect(await self()).toEqual([['gpt-4o', h, 2, 42, 420, alice.id]]);
    expect(await admin()).toEqual([{ model_name: 'gpt-4o', created_at: h, count: 3, quota: 47, token_used: 470 }]);

    // unflushed buckets add to the flushed row of the same key, or come as rows of their own
    qd.record(alice.id, alice.username, 'gpt-4o', 8, 80, at(2));
    qd.record(alice.id, alice.username, 'gpt-4o-mini', 1, 10, at(3));
    const both = [
      ['gpt-4o', h, 3, 50, 500, alice.id],
      ['gpt-4o-mini', h, 1, 1, 10, alice.id],
    ];
    expect(await self()).toEqual(both);
    const byName = await root.get(`/api/data?${range}&username=${alice.username}`);
    expect(byName.body.data.map((r: any) => [r.model_name, r.created_at, r.count, r.quota, r.token_used, r.user_id])).toEqual(both);
    expect(await admin()).toEqual([
      { model_name: 'gpt-4o', created_at: h, count: 4, quota: 55, token_used: 550 },
      { model_name: 'gpt-4o-mini', created_at: h, count: 1, quota: 1, token_used: 10 },
    ]);
    await qd.flush();
    expect(await self()).toEqual(both);
    const rows = await server.ctx.db.selectFrom('quota_data').selectAll().where('user_id', '=', alice.id).where('created_at', '=', h).orderBy('model_name').execute();
    expect(rows.map((r) => [r.model_name, Number(r.count), Number(r.quota), Number(r.token_used)])).toEqual([
      ['gpt-4o', 3, 50, 500],
      ['gpt-4o-mini', 1, 1, 10],
    ]);
  });

  it('keeps a bucket whose flush failed for the next flush', async () => {
    const qd = relayServices(server.ctx).quotaData;
    const h = Math.floor(now / 3600) * 3600 - 6 * 86400;
    const rename = (from: string, to: string) => sql`ALTER TABLE ${sql.table(from)} RENAME TO ${sql.table(to)}`.execute(server.ctx.db);
    qd.record(bob.id, bob.username, 'gpt-4o', 9, 90, h * 1000);
    await rename('quota_data', 'quota_data_away');
    try {
      await qd.flush();
    } finally {
      await rename('quota_data_away', 'quota_data');
    }
    const range = `start_timestamp=${h}&end_timestamp=${h + 1800}`;
    expect((await bob.client.get(`/api/data/self?${range}`)).body.data.map((r: any) => [r.count, r.quota])).toEqual([[1, 9]]);
    await qd.flush();
    const rows = await server.ctx.db.selectFrom('quota_data').selectAll().where('user_id', '=', bob.id).where('created_at', '=', h).execute();
    expect(rows.map((r) => [Number(r.count), Number(r.quota), Number(r.token_used)])).toEqual([[1, 9, 90]]);
    expect((await bob.client.get(`/api/data/self?${range}`)).body.data.map((r: any) => [r.count, r.quota])).toEqual([[1, 9]]);
  });

  it('deletes logs older than the target timestamp (root, every type) and reports the count', async () => {
    expect((await root.delete('/api/log/')).body).toEqual({ success: false, message: 'target timestamp is required' });
    // every type: root only; an admin deletes consume and error rows alone (log-cleanup.test.ts)
    const res = await root.delete(`/api/log/?target_timestamp=${now - 3000}&type=0`);
    expect(res.body).toEqual({ success: true, message: '', data: 3 });
    // the deletion's own record (type 4) aside
    const left = await server.ctx.logDb.selectFrom('logs').select('id').where('type', '!=', 4).orderBy('id').execute();
    expect(left.map((r) => Number(r.id)).sort((a, b) => a - b)).toEqual([ids.a1, ids.b1, ids.a4].sort((a, b) => a - b));
  });
});

// LOG_SQL_DSN: the logs table in another database; channel names still come from the main one.
describe.skipIf(!(await dbAvailable('postgres')))('logs in a separate LOG_SQL_DSN database', () => {
  it('reads logs from the log database and names channels from the main database', async () => {
    const logDatabase = await createTestDatabase('postgres');
    const server = await startTestServer({ kind: 'sqlite', env: { LOG_SQL_DSN: logDatabase.dsn, CRITICAL_RATE_LIMIT_ENABLE: 'false' } });
    try {
      expect(server.ctx.logDbKind).toBe('postgres');
      expect(server.ctx.dbKind).toBe('sqlite');
      const root = new ConsoleClient(server.url);
      await root.post('/api/setup', { username: 'root', password: 'rootpass123', confirmPassword: 'rootpass123', SelfUseModeEnabled: false, DemoSiteEnabled: false });
      expect((await root.login('root', 'rootpass123')).body.success).toBe(true);
      const ch = await root.post('/api/channel/', { name: 'main-db-channel', key: 'k', models: 'm' });
      await server.ctx.logDb
        .insertInto('logs')
        .values({ user_id: root.userId!, username: 'root', type: 2, created_at: Math.floor(Date.now() / 1000), channel_id: ch.body.data.id, quota: 5, is_stream: true })
        .execute();
      const res = await root.get('/api/log/?p=1&page_size=10');
      expect(res.body.data.total).toBe(1);
      expect(res.body.data.items[0]).toMatchObject({ channel: ch.body.data.id, channel_name: 'main-db-channel', quota: 5, is_stream: true });
      expect((await root.get('/api/log/stat')).body.data).toMatchObject({ quota: 5, rpm: 1 });
      const mainLogs = await server.ctx.db.selectFrom('logs').select('id').execute();
      expect(mainLogs).toEqual([]);
    } finally {
      await server.close();
      await logDatabase.drop();
    }
  });
});
