// A gateway process killed with SIGKILL while streams billed on a subscription plan are in flight (decision 0015,
// "Crash recovery"): what they hold on the plan's windows and on the token comes back once, when the next process
// starts on the same database; the request that finished stays charged to the plan and logged; the wallet never moves.
import type { ChildProcess } from 'node:child_process';
import { expect, it } from 'vitest';
import { createTestDatabase, describeEachDb } from '../helpers/databases.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { answerOneAndHoldStreams, consumedQuota, killGateway, spawnGateway } from '../helpers/process.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { openDatabase } from '../../src/db/connect.js';
import { relayServices } from '../../src/relay/services.js';
import { bindPlan } from '../../src/services/subscriptions/admin.js';
import { createPlan, parsePlanWrite } from '../../src/services/subscriptions/plans.js';
import { addChannel, addToken, addUser, tokenRow, userRow, waitFor } from './fixtures.js';

await describeEachDb('a gateway process killed with plan reservations open', (kind) => {
  it("gives the plan's windows and the token back once when the next process starts", async () => {
    const upstream = await MockUpstream.start();
    const database = await createTestDatabase(kind);
    let child: ChildProcess | undefined;
    let restarted: TestServer | undefined;
    const reader = await openDatabase({ dsn: database.dsn, sqlitePath: database.sqlitePath });
    try {
      const WALLET = 5_000;
      const REMAIN = 1_000_000;
      const seed = await startTestServer({ database });
      const u = await addUser(seed, {
        quota: WALLET,
        setting: JSON.stringify({ billing_preference: 'subscription_only' }),
      });
      const t = await addToken(seed, u.id, { unlimited: false, remain: REMAIN });
      await addChannel(seed, { baseUrl: upstream.url, models: ['gpt-4o-mini'] });
      const write = await parsePlanWrite(seed.ctx, {
        plan: { title: 'Crash', duration_unit: 'day', duration_value: 30, total_amount: 0 },
        limits: { daily_amount: 500_000, weekly_amount: 900_000 },
      });
      await bindPlan(seed.ctx, u.id, (await createPlan(seed.ctx, write)).id);
      await seed.close();
      const sub = await reader.db
        .selectFrom('user_subscriptions')
        .select('id')
        .where('user_id', '=', u.id)
        .executeTakeFirstOrThrow();

      const gw = await spawnGateway(database);
      child = gw.child;
      const readers = await answerOneAndHoldStreams(gw, upstream, t.key, 3);

      const usage = async () => {
        const r = await reader.db
          .selectFrom('subscription_usage')
          .selectAll()
          .where('user_subscription_id', '=', sub.id)
          .executeTakeFirstOrThrow();
        return { daily: Number(r.daily_used), weekly: Number(r.weekly_used) };
      };
      const logged = () => consumedQuota(reader.db, u.id);
      const holds = () =>
        reader.db.selectFrom('subscription_holds').selectAll().where('amount', '>', 0).orderBy('slot').execute();
      // the finished request is settled and logged; the streams hold the rest on every window (main is always kept)
      await waitFor(async () => (await logged()) > 0 && (await holds()).length === 3, 10_000);
      const charged = await logged();
      const held = await holds();
      const pre = Number(held[0].amount) / 3;
      expect(Number.isInteger(pre) && pre > 0).toBe(true);
      expect(held.map((h) => [h.slot, Number(h.amount)])).toEqual([
        ['daily', 3 * pre],
        ['main', 3 * pre],
        ['weekly', 3 * pre],
      ]);
      expect(await usage()).toEqual({ daily: charged + 3 * pre, weekly: charged + 3 * pre });

      await killGateway(child, readers);

      restarted = await startTestServer({ database });
      expect(await usage()).toEqual({ daily: charged, weekly: charged });
      expect(Number((await tokenRow(restarted, t.id)).remain_quota)).toBe(REMAIN - charged);
      expect(Number((await userRow(restarted, u.id)).quota)).toBe(WALLET);
      expect(await reader.db.selectFrom('subscription_holds').selectAll().execute()).toEqual([]);
      // once: a second recovery pass changes nothing
      await relayServices(restarted.ctx).billing.holdNodes.sweep();
      expect(await usage()).toEqual({ daily: charged, weekly: charged });
    } finally {
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await restarted?.close();
      await reader.close();
      await database.drop();
      await upstream.close();
    }
  }, 60_000);
});
