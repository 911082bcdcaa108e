// The daily check-in (services/checkin.ts, GET and POST /api/user/checkin) on every database: off by default, a
// reward inside the options' range credited with its row and a log line, once per user and day of the site's
// calendar, also when ten requests race over two gateways sharing the database.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConsoleClient } from '../helpers/console-client.js';
import { createTestDatabase, describeEachDb, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addUser, uname } from '../channels/fixture.js';
import { setOptions } from '../relay/fixtures.js';
import { siteDate } from '../../src/services/checkin.js';

const PASSWORD = 'userpass123';

await describeEachDb('daily check-in', (kind) => {
  let tdb: TestDatabase;
  let a: TestServer;
  let b: TestServer;

  beforeAll(async () => {
    tdb = await createTestDatabase(kind);
    const env = { CRITICAL_RATE_LIMIT_ENABLE: 'false' };
    a = await startTestServer({ database: tdb, env });
    b = await startTestServer({ database: tdb, env: { ...env, NODE_TYPE: 'slave' } });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await tdb?.drop();
  });

  const quotaOf = async (id: number) =>
    Number((await a.ctx.db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirstOrThrow()).quota);
  const rowsOf = (id: number) =>
    a.ctx.db.selectFrom('checkins').select(['checkin_date', 'quota_awarded']).where('user_id', '=', id).execute();
  const logsOf = (id: number) =>
    a.ctx.logDb
      .selectFrom('logs')
      .select(['type', 'content'])
      .where('user_id', '=', id)
      .where('type', '=', 4)
      .execute();
  const enable = async (opts: Record<string, string>) => {
    for (const s of [a, b]) await setOptions(s, { 'checkin_setting.enabled': 'true', ...opts });
  };

  it('is refused while switched off, and changes nothing', async () => {
    const u = await addUser(a);
    const before = await quotaOf(u.id);
    expect((await u.client.get('/api/user/checkin')).body).toEqual({ success: false, message: '签到功能未启用' });
    expect((await u.client.post('/api/user/checkin', {})).body).toEqual({ success: false, message: '签到功能未启用' });
    expect(await rowsOf(u.id)).toEqual([]);
    expect(await quotaOf(u.id)).toBe(before);
  });

  it('credits a reward from the range once a day, with its row, its log line and the status that shows it', async () => {
    await enable({ 'checkin_setting.min_quota': '5000', 'checkin_setting.max_quota': '5005', UsageLimitTimeZone: '' });
    const u = await addUser(a);
    const before = await quotaOf(u.id);
    const first = (await u.client.post('/api/user/checkin', {})).body;
    expect(first.success, JSON.stringify(first)).toBe(true);
    expect(first.message).toBe('签到成功');
    const awarded = first.data.quota_awarded;
    expect(awarded).toBeGreaterThanOrEqual(5000);
    expect(awarded).toBeLessThanOrEqual(5005);
    expect(first.data.checkin_date).toBe(siteDate(a.ctx, Date.now()));
    expect(await quotaOf(u.id)).toBe(before + awarded);
    expect(await rowsOf(u.id)).toEqual([{ checkin_date: first.data.checkin_date, quota_awarded: awarded }]);
    await expect
      .poll(async () => (await logsOf(u.id)).map((l) => l.content))
      .toEqual([expect.stringMatching(/^用户签到，获得额度 /)]);

    const again = (await u.client.post('/api/user/checkin', {})).body;
    expect(again).toEqual({ success: false, message: '今日已签到' });
    expect(await quotaOf(u.id)).toBe(before + awarded);

    const status = (await u.client.get('/api/user/checkin')).body;
    expect(status).toEqual({
      success: true,
      message: '',
      data: {
        enabled: true,
        min_quota: 5000,
        max_quota: 5005,
        stats: {
          total_quota: awarded,
          total_checkins: 1,
          checkin_count: 1,
          checked_in_today: true,
          records: [{ checkin_date: first.data.checkin_date, quota_awarded: awarded }],
        },
      },
    });
    // another month: no rows of it, the totals unchanged
    const other = (await u.client.get('/api/user/checkin?month=2001-02')).body.data.stats;
    expect(other).toMatchObject({ checkin_count: 0, records: [], total_checkins: 1, checked_in_today: true });
    expect((await u.client.get('/api/user/checkin?month=2001-13')).body).toEqual({
      success: false,
      message: '月份格式应为 YYYY-MM',
    });
  });

  it('gives one reward to ten check-ins racing over two gateways', async () => {
    await enable({ 'checkin_setting.min_quota': '7000', 'checkin_setting.max_quota': '7000' });
    const u = await addUser(a);
    const onB = new ConsoleClient(b.url);
    expect((await onB.login(u.username, PASSWORD)).body.success).toBe(true);
    const before = await quotaOf(u.id);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => (i % 2 ? onB : u.client).post('/api/user/checkin', {})),
    );
    expect(answers.filter((r) => r.body.success)).toHaveLength(1);
    expect(answers.filter((r) => r.body.message === '今日已签到')).toHaveLength(9);
    expect(await quotaOf(u.id)).toBe(before + 7000);
    expect(await rowsOf(u.id)).toHaveLength(1);
    await expect.poll(async () => (await logsOf(u.id)).length).toBe(1);
  });

  it("counts the day in the site's time zone", async () => {
    // UTC+14 and UTC−11: at every instant at least one of them is on another date than UTC, and they never agree
    const now = Date.now();
    for (const zone of ['Pacific/Kiritimati', 'Pacific/Pago_Pago']) {
      await enable({ UsageLimitTimeZone: zone, 'checkin_setting.min_quota': '1', 'checkin_setting.max_quota': '1' });
      expect(siteDate(a.ctx, now)).toBe(
        new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(
          now,
        ),
      );
    }
    await enable({ UsageLimitTimeZone: 'Pacific/Kiritimati' });
    const u = await addUser(a, { username: uname('tz') });
    const r = (await u.client.post('/api/user/checkin', {})).body;
    expect(r.data.checkin_date).toBe(siteDate(a.ctx, Date.now()));
    // the same user on the other side of the date line: another day, another reward
    await enable({ UsageLimitTimeZone: 'Pacific/Pago_Pago' });
    const r2 = (await u.client.post('/api/user/checkin', {})).body;
    expect(r2.success, JSON.stringify(r2)).toBe(true);
    expect(r2.data.checkin_date).not.toBe(r.data.checkin_date);
    expect(await rowsOf(u.id)).toHaveLength(2);
  });

  it('refuses a reward bound that is not a whole number on save', async () => {
    const root = await addUser(a, { role: 100 });
    for (const [value, message] of [
      ['-1', '的值必须是非负整数'],
      ['1.5', '的值必须是非负整数'],
      ['abc', '的值必须是数字'],
    ]) {
      const res = await root.client.put('/api/option/', { key: 'checkin_setting.min_quota', value });
      expect(res.body).toEqual({ success: false, message: `checkin_setting.min_quota ${message}` });
    }
    expect(a.ctx.options.get('checkin_setting.min_quota')).toBe('1');
  });
});
