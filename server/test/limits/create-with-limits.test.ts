// Limits set where they are made (issue 35, beyond new-api: new-api-compat.md §13.3): POST /api/token/ with
// `usage_limits` writes the token and its limits together, or neither; the option UsageLimitGroupDefaults is checked
// on save with the same rules as a token's or a user's limits, and a refused value leaves the option as it was.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import type { TestServer } from '../helpers/server.js';
import type { ConsoleClient } from '../helpers/console-client.js';
import { addUser, recordChanges, startConsole } from '../channels/fixture.js';
import { usageLimits } from '../../src/services/limits/index.js';

await describeEachDb('limits set at creation and per group', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let alice: { client: ConsoleClient; id: number };
  let changes: ReturnType<typeof recordChanges>;

  beforeAll(async () => {
    ({ server, root } = await startConsole(kind));
    alice = await addUser(server);
    changes = recordChanges(server);
  });
  afterAll(async () => {
    changes?.stop();
    await server?.close();
  });

  const count = async (table: 'tokens' | 'usage_limits') =>
    Number(
      (
        await server.ctx.db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const limitsRows = async (tokenId: number) =>
    (
      await server.ctx.db
        .selectFrom('usage_limits')
        .select('limits')
        .where('scope', '=', 'token')
        .where('target_id', '=', tokenId)
        .execute()
    ).map((r) => JSON.parse(r.limits));

  it('creates the token with its limits in force at once; the answer is the plain create answer', async () => {
    const plain = await alice.client.post('/api/token/', { name: 'plain' });
    expect(plain.body.success).toBe(true);
    changes.take();

    const res = await alice.client.post('/api/token/', {
      name: 'limited',
      remain_quota: 1000,
      usage_limits: { rpm: 5, tpm: '2000', budget: 50_000, period: 'weekly' },
    });
    expect(res.body).toMatchObject({ success: true, message: '', data: { name: 'limited', remain_quota: 1000 } });
    // new-api's answer, nothing added
    expect(Object.keys(res.body.data).sort()).toEqual(Object.keys(plain.body.data).sort());
    const id = res.body.data.id as number;
    expect(await limitsRows(id)).toEqual([{ rpm: 5, tpm: 2000, budget: 50_000, period: 'weekly' }]);
    expect(usageLimits(server.ctx).settingsOf('token', id)).toEqual({
      rpm: 5,
      tpm: 2000,
      budget: 50_000,
      period: 'weekly',
    });
    const read = await alice.client.get(`/api/token/${id}/limits`);
    expect(read.body.data.settings).toEqual({ rpm: 5, tpm: 2000, budget: 50_000, period: 'weekly' });
    expect(read.body.data.status.rpm).toEqual({ limit: 5, used: 0, scope: 'token' });
    const kinds = changes.take().map((e) => e.kind);
    expect(kinds).toContain('token');
    expect(kinds).toContain('limits');

    // no limits asked for (absent, null, all zero): no row
    for (const usage_limits of [undefined, null, { rpm: 0, tpm: null, budget: '' }]) {
      const r = await alice.client.post('/api/token/', { name: 'free', usage_limits });
      expect(r.body.success).toBe(true);
      expect(await limitsRows(r.body.data.id)).toEqual([]);
    }
  });

  it('bad limits are refused before anything is written: no token, no limits row, no change event', async () => {
    const tokens = await count('tokens');
    const rows = await count('usage_limits');
    changes.take();
    const cases: Array<[unknown, string]> = [
      [{ rpm: -1 }, 'usage_limits: rpm must be a whole number of 0 or more'],
      [{ tpm: 1.5 }, 'usage_limits: tpm must be a whole number of 0 or more'],
      [{ budget: 'lots' }, 'usage_limits: budget must be a whole number of 0 or more'],
      [{ budget: 100, period: 'hourly' }, 'usage_limits: period must be one of daily, weekly, monthly'],
      ['rpm=5', 'usage_limits must be an object {rpm, tpm, budget, period, reset}'],
      [[5], 'usage_limits must be an object {rpm, tpm, budget, period, reset}'],
    ];
    for (const [usage_limits, message] of cases)
      expect((await alice.client.post('/api/token/', { name: 'bad', usage_limits })).body).toEqual({
        success: false,
        message,
      });
    expect(await count('tokens')).toBe(tokens);
    expect(await count('usage_limits')).toBe(rows);
    expect(changes.take()).toEqual([]);
  });

  it('a failure writing the limits leaves no token either (one transaction)', async () => {
    const tokens = await count('tokens');
    await server.ctx.db.schema.alterTable('usage_limits').renameTo('usage_limits_away').execute();
    try {
      const res = await alice.client.post('/api/token/', { name: 'orphan', usage_limits: { rpm: 3 } });
      expect(res.status).toBe(500);
      expect(res.body.success).toBe(false);
    } finally {
      await server.ctx.db.schema.alterTable('usage_limits_away').renameTo('usage_limits').execute();
    }
    expect(await count('tokens')).toBe(tokens);
    expect(await server.ctx.db.selectFrom('tokens').select('id').where('name', '=', 'orphan').execute()).toEqual([]);
  });

  it('UsageLimitGroupDefaults is checked on save as token limits are; a refused value changes nothing', async () => {
    const good = { vip: { rpm: 60, budget: 500_000, period: 'daily' }, default: { tpm: 1000 } };
    const saved = await root.put('/api/option/', { key: 'UsageLimitGroupDefaults', value: JSON.stringify(good) });
    expect(saved.body).toMatchObject({ success: true });
    const stored = async () =>
      (
        await server.ctx.db
          .selectFrom('options')
          .select('value')
          .where('key', '=', 'UsageLimitGroupDefaults')
          .executeTakeFirst()
      )?.value;
    expect(JSON.parse((await stored())!)).toEqual(good);
    expect(usageLimits(server.ctx).rulesFor(0, alice.id, 'vip')).toMatchObject({
      rpm: { limit: 60, scope: 'user' },
      budget: { limit: 500_000, period: 'daily' },
    });

    const cases: Array<[string, string]> = [
      ['{"vip": ', 'UsageLimitGroupDefaults 不是合法的 JSON 字符串'],
      ['[1]', 'UsageLimitGroupDefaults must be an object of groups: {"group": {rpm, tpm, budget, period, reset}}'],
      ['{"vip": 5}', 'group vip: the limits must be an object {rpm, tpm, budget, period, reset}'],
      ['{"vip": {"rpm": -1}}', 'group vip: rpm must be a whole number of 0 or more'],
      ['{"vip": {"tpm": 2.5}}', 'group vip: tpm must be a whole number of 0 or more'],
      ['{"vip": {"budget": 5, "period": "hourly"}}', 'group vip: period must be one of daily, weekly, monthly'],
      ['{"vip": {"rpn": 5}}', 'group vip: unknown field rpn'],
      ['{"": {"rpm": 5}}', 'UsageLimitGroupDefaults: a group name is empty'],
    ];
    for (const [value, message] of cases)
      expect((await root.put('/api/option/', { key: 'UsageLimitGroupDefaults', value })).body, value).toEqual({
        success: false,
        message,
      });
    expect(JSON.parse((await stored())!)).toEqual(good);
    expect(JSON.parse(server.ctx.options.get('UsageLimitGroupDefaults'))).toEqual(good);

    expect((await root.put('/api/option/', { key: 'UsageLimitGroupDefaults', value: '{}' })).body.success).toBe(true);
    expect(usageLimits(server.ctx).rulesFor(0, alice.id, 'vip')).toBeNull();
  });
});
