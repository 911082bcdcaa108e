// Tasks paid by a subscription plan (docs/decisions/0015-subscription-plans.md, step 6): a Suno task submitted by a
// subscriber is charged to the plan's windows, its row names the plan and the periods charged, and its failure gives
// the charge back to those windows (and the token), never to the wallet; after a reset it credits nothing. A task
// new-api submitted on a plan (no periods named) goes back to `main` only within the period it was charged in.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, describeEachDb, type TestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, channelsChanged, flushLogs } from '../relay/fixtures.js';
import { startSunoMock, type SunoMock } from './suno-mock.js';
import { failTaskWithRefund } from '../../src/services/tasks/refund.js';
import { createPlan, parsePlanWrite } from '../../src/services/subscriptions/plans.js';
import { bindPlan } from '../../src/services/subscriptions/admin.js';

const KEY = 'suno-plan-key';
/** Suno's MUSIC price: 0.1 × 500000 */
const PRICE = 50_000;
const WALLET = 1_000_000;

await describeEachDb('task refunds to subscription plans', (kind) => {
  let tdb: TestDatabase;
  let s: TestServer;
  let mock: SunoMock;
  let planId: number;
  beforeAll(async () => {
    tdb = await createTestDatabase(kind);
    s = await startTestServer({ database: tdb });
    mock = await startSunoMock(KEY);
    await addChannel(s, { type: 36, key: KEY, baseUrl: mock.url, models: ['suno_music', 'suno_lyrics'] });
    await channelsChanged(s);
    const write = await parsePlanWrite(s.ctx, {
      plan: { title: 'Music', duration_unit: 'day', duration_value: 30, total_amount: 1_000_000 },
      limits: { daily_amount: 200_000 },
    });
    planId = (await createPlan(s.ctx, write)).id;
  });
  afterAll(async () => {
    await s?.close();
    await mock?.close();
    await tdb?.drop();
  });

  async function subscriber() {
    const user = await addUser(s, {
      quota: WALLET,
      setting: JSON.stringify({ billing_preference: 'subscription_only' }),
    });
    const token = await addToken(s, user.id, { remain: 500_000, unlimited: false, name: 'music' });
    await bindPlan(s.ctx, user.id, planId);
    const sub = await s.ctx.db
      .selectFrom('user_subscriptions')
      .select('id')
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    return { user, token, subId: Number(sub.id) };
  }

  const usage = async (subId: number) => {
    const r = await s.ctx.db
      .selectFrom('subscription_usage')
      .selectAll()
      .where('user_subscription_id', '=', subId)
      .executeTakeFirstOrThrow();
    return { main: Number(r.main_used), daily: Number(r.daily_used), dailyEnd: Number(r.daily_end) };
  };
  const wallet = async (userId: number) =>
    Number(
      (await s.ctx.db.selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow()).quota,
    );
  const remain = async (tokenId: number) =>
    Number(
      (await s.ctx.db.selectFrom('tokens').select('remain_quota').where('id', '=', tokenId).executeTakeFirstOrThrow())
        .remain_quota,
    );

  async function submit(key: string) {
    const res = await fetch(`${s.url}/suno/submit/music`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ gpt_description_prompt: 'a song about plans' }),
    });
    const body = (await res.json()) as { code: string; data: string };
    expect(res.status, JSON.stringify(body)).toBe(200);
    await flushLogs(s);
    const task = await s.ctx.db
      .selectFrom('tasks')
      .select(['id', 'private_data'])
      .where('task_id', '=', body.data)
      .executeTakeFirstOrThrow();
    return { id: Number(task.id), privateData: JSON.parse(task.private_data) };
  }

  it('a failed task goes back to the windows that paid it, once; the wallet never moves', async () => {
    const u = await subscriber();
    const task = await submit(u.token.key);
    expect(await usage(u.subId)).toMatchObject({ main: PRICE, daily: PRICE });
    expect(await remain(u.token.id)).toBe(500_000 - PRICE);
    const { dailyEnd } = await usage(u.subId);
    expect(task.privateData).toMatchObject({
      billing_source: 'subscription',
      subscription_id: u.subId,
      subscription_ends: { daily: dailyEnd },
    });
    const won = await Promise.all([
      failTaskWithRefund(s.ctx, { id: task.id, reason: 'upstream failed' }),
      failTaskWithRefund(s.ctx, { id: task.id, reason: 'upstream failed' }),
    ]);
    expect(won.filter(Boolean)).toHaveLength(1);
    expect(await usage(u.subId)).toMatchObject({ main: 0, daily: 0 });
    expect(await remain(u.token.id)).toBe(500_000);
    expect(await wallet(u.user.id)).toBe(WALLET);
    const sub = await s.ctx.db
      .selectFrom('user_subscriptions')
      .select('amount_used')
      .where('id', '=', u.subId)
      .executeTakeFirstOrThrow();
    expect(Number(sub.amount_used)).toBe(0);
    const refund = await s.ctx.logDb
      .selectFrom('logs')
      .select(['quota', 'other'])
      .where('user_id', '=', u.user.id)
      .where('type', '=', 6)
      .execute();
    expect(refund.map((r) => [Number(r.quota), JSON.parse(r.other!).billing_source])).toEqual([
      [PRICE, 'subscription'],
    ]);
  });

  it('after the daily reset the refund credits only the windows still in their period', async () => {
    const u = await subscriber();
    const task = await submit(u.token.key);
    const { dailyEnd } = await usage(u.subId);
    // the next day began and 7 were used in it
    await s.ctx.db
      .updateTable('subscription_usage')
      .set({ daily_used: 7, daily_end: dailyEnd + 86400 })
      .where('user_subscription_id', '=', u.subId)
      .execute();
    await failTaskWithRefund(s.ctx, { id: task.id, reason: 'timeout' });
    expect(await usage(u.subId)).toMatchObject({ main: 0, daily: 7 });
    expect(await wallet(u.user.id)).toBe(WALLET);
  });

  it('a task new-api submitted on a plan goes back to main only in the period it was charged in', async () => {
    const u = await subscriber();
    const task = await submit(u.token.key);
    const strip = async () => {
      // as new-api writes it: the plan named, no periods
      const { subscription_ends: _ends, ...rest } = task.privateData;
      await s.ctx.db
        .updateTable('tasks')
        .set({ private_data: JSON.stringify(rest), status: 'IN_PROGRESS' })
        .where('id', '=', task.id)
        .execute();
    };
    await strip();
    await failTaskWithRefund(s.ctx, { id: task.id, reason: 'failed' });
    expect((await usage(u.subId)).main).toBe(0);
    // a second task; then main's period ends and 9 are used in the next one
    const again = await submit(u.token.key);
    const { subscription_ends: _e, ...rest } = again.privateData;
    await s.ctx.db
      .updateTable('tasks')
      .set({ private_data: JSON.stringify(rest) })
      .where('id', '=', again.id)
      .execute();
    const row = await s.ctx.db
      .selectFrom('subscription_usage')
      .select('main_end')
      .where('user_subscription_id', '=', u.subId)
      .executeTakeFirstOrThrow();
    await s.ctx.db
      .updateTable('subscription_usage')
      .set({ main_used: 9, main_end: Number(row.main_end) + 86400 })
      .where('user_subscription_id', '=', u.subId)
      .execute();
    await failTaskWithRefund(s.ctx, { id: again.id, reason: 'failed' });
    expect((await usage(u.subId)).main).toBe(9);
    expect(await wallet(u.user.id)).toBe(WALLET);
  });
});
