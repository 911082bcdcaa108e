// Log retention (services/log-retention.ts) with a fixed clock: consume and error rows older than LogRetentionDays
// go, in batches; recent rows and account rows stay; quota_data follows its own option; a slave deletes nothing.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { setOption, setupAndLoginRoot } from '../console/fixtures.js';
import type { NewLog } from '../../src/db/schema.js';
import { runLogRetention, startLogRetention } from '../../src/services/log-retention.js';

const NOW = 1_900_000_000;
const DAY = 86_400;
const clock = { now: () => NOW, pauseMs: 0, batchRows: 10 };

const row = (type: number, ageDays: number, tag: string): NewLog => ({
  user_id: 1,
  username: 'u',
  type,
  created_at: NOW - Math.round(ageDays * DAY),
  content: tag,
  model_name: 'gpt-4o',
  token_name: 't',
  quota: 1,
  prompt_tokens: 1,
  completion_tokens: 1,
  use_time: 1,
  is_stream: false,
  channel_id: 0,
  token_id: 0,
  group: 'default',
  other: '',
});

await describeEachDb('log retention', (kind) => {
  let server: TestServer;
  let slave: TestServer;
  let root: ConsoleClient;

  const contents = async () =>
    (await server.ctx.logDb.selectFrom('logs').select('content').orderBy('id').execute()).map((r) => r.content);
  const bucketAges = async () =>
    (await server.ctx.db.selectFrom('quota_data').select('created_at').orderBy('created_at').execute()).map(
      (r) => (NOW - Number(r.created_at)) / DAY,
    );

  beforeAll(async () => {
    server = await startTestServer({ kind });
    root = await setupAndLoginRoot(server);
    slave = await startTestServer({ kind, database: server.database, env: { NODE_TYPE: 'slave' } });
  });
  afterAll(async () => {
    await slave?.close();
    await server?.close();
  });

  it('is off by default: nothing is deleted however old', async () => {
    await server.ctx.logDb.insertInto('logs').values(row(2, 4000, 'ancient')).execute();
    expect(await runLogRetention(server.ctx, clock)).toEqual({ logs: 0, quotaData: 0 });
    expect(await contents()).toEqual(['ancient']);
    await server.ctx.logDb.deleteFrom('logs').execute();
  });

  it('refuses a negative or fractional number of days and keeps the stored value', async () => {
    for (const bad of [-1, 1.5]) {
      const res = await root.put('/api/option/', { key: 'LogRetentionDays', value: bad });
      expect(res.body).toEqual({ success: false, message: 'LogRetentionDays 的值必须是非负整数' });
    }
    const text = await root.put('/api/option/', { key: 'QuotaDataRetentionDays', value: 'x' });
    expect(text.body).toEqual({ success: false, message: 'QuotaDataRetentionDays 的值必须是数字' });
    expect(server.ctx.options.get('LogRetentionDays')).toBe('0');
    expect(server.ctx.options.get('QuotaDataRetentionDays')).toBe('0');
  });

  it('deletes old consume and error rows in batches, keeps recent and account rows; quota_data by its own option', async () => {
    await setOption(root, 'LogRetentionDays', 30);
    await setOption(root, 'QuotaDataRetentionDays', 90);
    const rows: NewLog[] = [];
    for (let i = 0; i < 25; i++) rows.push(row(2, 31 + i, `old-consume-${i}`));
    rows.push(row(5, 45, 'old-error'), row(1, 400, 'old-topup'), row(3, 400, 'old-manage'), row(4, 400, 'old-system'));
    rows.push(row(2, 29.9, 'recent-consume'), row(5, 1, 'recent-error'));
    await server.ctx.logDb.insertInto('logs').values(rows).execute();
    const bucket = (ageDays: number) => ({
      user_id: 1,
      username: 'u',
      model_name: 'gpt-4o',
      created_at: NOW - ageDays * DAY,
      count: 1,
      quota: 1,
      token_used: 1,
    });
    await server.ctx.db
      .insertInto('quota_data')
      .values([bucket(200), bucket(91), bucket(89), bucket(31), bucket(1)])
      .execute();

    // a slave deletes nothing, and schedules nothing
    expect(await runLogRetention(slave.ctx, clock)).toEqual({ logs: 0, quotaData: 0 });
    expect(startLogRetention(slave.ctx, { ...clock, firstRunMs: 0 })).toBe(false);
    expect((await contents()).length).toBe(31);

    expect(await runLogRetention(server.ctx, clock)).toEqual({ logs: 26, quotaData: 2 });
    expect(await contents()).toEqual(['old-topup', 'old-manage', 'old-system', 'recent-consume', 'recent-error']);
    expect(await bucketAges()).toEqual([89, 31, 1]);
    // a second pass finds nothing left
    expect(await runLogRetention(server.ctx, clock)).toEqual({ logs: 0, quotaData: 0 });
  });

  it('the master runs the passes on its own schedule and reads the options at each pass', async () => {
    await setOption(root, 'QuotaDataRetentionDays', 30);
    await server.ctx.logDb.insertInto('logs').values(row(2, 60, 'scheduled-old')).execute();
    expect(startLogRetention(server.ctx, { ...clock, firstRunMs: 0, everyMs: 50 })).toBe(true);
    await expect.poll(async () => (await contents()).includes('scheduled-old'), { timeout: 5000 }).toBe(false);
    await expect.poll(bucketAges, { timeout: 5000 }).toEqual([1]);
    // what the slave sees is the same database
    const seen = await slave.ctx.logDb.selectFrom('logs').select('content').execute();
    expect(seen.map((r) => r.content)).not.toContain('scheduled-old');
  });
});
