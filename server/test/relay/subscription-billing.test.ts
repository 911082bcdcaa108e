// Requests billed on subscription plans (docs/decisions/0015-subscription-plans.md, step 5), on every database: every
// window charged to the unit and the wallet untouched; the refusal naming the exhausted window and its reset; each
// billing preference's fallback; concurrent requests never passing a window; a refund after a reset crediting nothing;
// a dead node's holds given back once, never into a later period; a subscription new-api created billed from its columns.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql } from 'kysely';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream, chatCompletion } from '../helpers/mock-upstream.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  flushLogs,
  logsOf,
  setOptions,
  tokenRow,
  userRow,
} from './fixtures.js';
import { createPlan, parsePlanWrite, updatePlan } from '../../src/services/subscriptions/plans.js';
import { bindPlan } from '../../src/services/subscriptions/admin.js';
import { relayServices } from '../../src/relay/services.js';
import { activeSubscriptions, planRoute } from '../../src/services/subscriptions/active.js';
import { purchaseWithBalance } from '../../src/services/subscriptions/purchase.js';

const MODEL = 'plan-model';
const OTHER = 'plan-other-model';
/** PreConsumedQuota without max_tokens: what each request reserves */
const PRE = 100;
/** what each answer costs: 10 prompt + 50 completion tokens at ratio 1 */
const COST = 60;
const WALLET = 10_000;

await describeEachDb('relay billing on subscription plans', (kind) => {
  let s: TestServer;
  let up: MockUpstream;

  beforeAll(async () => {
    s = await startTestServer({ kind });
    up = await MockUpstream.start();
    await setOptions(s, {
      ModelRatio: { [MODEL]: 1, [OTHER]: 1 },
      CompletionRatio: { [MODEL]: 1, [OTHER]: 1 },
      PreConsumedQuota: String(PRE),
      UsageLimitTimeZone: 'Asia/Shanghai',
    });
    await addChannel(s, { baseUrl: up.url, models: [MODEL, OTHER] });
    await channelsChanged(s);
    up.behave = () => ({
      kind: 'json',
      body: chatCompletion(MODEL, 'ok', { prompt_tokens: 10, completion_tokens: 50 }),
    });
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  async function plan(fields: Record<string, unknown>, limits?: Record<string, unknown>): Promise<number> {
    const write = await parsePlanWrite(s.ctx, {
      plan: { title: 'Plan', duration_unit: 'day', duration_value: 30, ...fields },
      limits,
    });
    return (await createPlan(s.ctx, write)).id;
  }

  /** A user with `preference`, a limited token and a subscription of `planId`. */
  async function subscriber(planId: number | null, preference: string, wallet = WALLET) {
    const u = await addUser(s, { quota: wallet, setting: JSON.stringify({ billing_preference: preference }) });
    const t = await addToken(s, u.id, { unlimited: false, remain: 1_000_000 });
    if (planId !== null) await bindPlan(s.ctx, u.id, planId);
    const sub = await s.ctx.db
      .selectFrom('user_subscriptions')
      .selectAll()
      .where('user_id', '=', u.id)
      .executeTakeFirst();
    return { ...u, token: t, subId: sub ? Number(sub.id) : 0 };
  }

  const call = (key: string, model = MODEL) =>
    fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  const usage = async (subId: number) => {
    const r = await s.ctx.db
      .selectFrom('subscription_usage')
      .selectAll()
      .where('user_subscription_id', '=', subId)
      .executeTakeFirstOrThrow();
    return { main: Number(r.main_used), daily: Number(r.daily_used), dailyEnd: Number(r.daily_end) };
  };
  const planHolds = async () =>
    (await s.ctx.db.selectFrom('subscription_holds').selectAll().where('amount', '<>', 0).execute()).length;

  it('bills the plan: every window and new-api columns to the unit, the token too, the wallet untouched, logged', async () => {
    const p = await plan({ total_amount: 1000, quota_reset_period: 'never' }, { daily_amount: 500 });
    const u = await subscriber(p, 'subscription_first');
    expect((await call(u.token.key)).status).toBe(200);
    await flushLogs(s);
    expect(await usage(u.subId)).toMatchObject({ main: COST, daily: COST });
    const sub = await s.ctx.db
      .selectFrom('user_subscriptions')
      .selectAll()
      .where('id', '=', u.subId)
      .executeTakeFirstOrThrow();
    expect(Number(sub.amount_used)).toBe(COST);
    expect(await userRow(s, u.id)).toMatchObject({ quota: WALLET, used_quota: COST, request_count: 1 });
    expect(Number((await tokenRow(s, u.token.id)).remain_quota)).toBe(1_000_000 - COST);
    const [log] = await logsOf(s, u.id);
    expect(log.quota).toBe(COST);
    expect(log.otherJson).toMatchObject({
      billing_source: 'subscription',
      subscription_id: u.subId,
      subscription_plan_id: p,
    });
    expect(await planHolds()).toBe(0);
  });

  it('subscription_only: refused when the daily window is used up, naming it and its reset; the wallet never pays', async () => {
    const p = await plan({ total_amount: 0 }, { daily_amount: 250 });
    const u = await subscriber(p, 'subscription_only');
    // 100 reserved then 60 charged each: 60, 120, 180 fit; the fourth needs 180 + 100 > 250
    for (let i = 0; i < 3; i++) {
      expect((await call(u.token.key)).status).toBe(200);
      await flushLogs(s);
    }
    const r = await call(u.token.key);
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('insufficient_user_quota');
    const { dailyEnd } = await usage(u.subId);
    const reset = new Intl.DateTimeFormat('sv-SE', {
      timeZone: 'Asia/Shanghai',
      dateStyle: 'short',
      timeStyle: 'short',
    }).format(new Date(dailyEnd * 1000));
    expect(
      r.body.error.message.startsWith(`订阅额度不足：每日额度已用完，将于 ${reset} (Asia/Shanghai) 重置 (request id`),
    ).toBe(true);
    // midnight in Shanghai
    expect((dailyEnd + 8 * 3600) % 86400).toBe(0);
    await flushLogs(s);
    expect(await usage(u.subId)).toMatchObject({ daily: 3 * COST, main: 3 * COST });
    expect(Number((await userRow(s, u.id)).quota)).toBe(WALLET);
    // in English for a client that asks for it
    const en = await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `Bearer sk-${u.token.key}`,
        'content-type': 'application/json',
        'accept-language': 'en',
      },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] }),
    }).then((x) => x.json() as Promise<any>);
    expect(en.error.message).toContain(
      `Subscription quota exhausted: the daily quota is used up, it resets at ${reset} (Asia/Shanghai)`,
    );
  });

  it('subscription_first falls back to the wallet once the window is used up; wallet_first uses the plan when the wallet is short', async () => {
    const p = await plan({ total_amount: 0 }, { daily_amount: 150 });
    const first = await subscriber(p, 'subscription_first');
    expect((await call(first.token.key)).status).toBe(200);
    await flushLogs(s);
    // 60 + 100 > 150: the wallet pays
    expect((await call(first.token.key)).status).toBe(200);
    await flushLogs(s);
    expect((await usage(first.subId)).daily).toBe(COST);
    expect(Number((await userRow(s, first.id)).quota)).toBe(WALLET - COST);
    const logs = await logsOf(s, first.id);
    expect(logs.map((l) => l.otherJson.billing_source ?? 'wallet')).toEqual(['subscription', 'wallet']);

    const walletFirst = await subscriber(p, 'wallet_first', 0);
    expect((await call(walletFirst.token.key)).status).toBe(200);
    await flushLogs(s);
    expect((await usage(walletFirst.subId)).daily).toBe(COST);
    const rich = await subscriber(p, 'wallet_first');
    expect((await call(rich.token.key)).status).toBe(200);
    await flushLogs(s);
    expect((await usage(rich.subId)).daily).toBe(0);
    expect(Number((await userRow(s, rich.id)).quota)).toBe(WALLET - COST);
  });

  it('a model outside the plan bills the wallet; subscription_only with nothing in scope is refused', async () => {
    const p = await plan({ total_amount: 0 }, { daily_amount: 1000, models: [MODEL] });
    const u = await subscriber(p, 'subscription_first');
    expect((await call(u.token.key, OTHER)).status).toBe(200);
    await flushLogs(s);
    expect(Number((await userRow(s, u.id)).quota)).toBe(WALLET - COST);
    const only = await subscriber(p, 'subscription_only');
    const r = await call(only.token.key, OTHER);
    expect(r.status).toBe(403);
    expect(r.body.error.message).toMatch(/^没有可用于此请求的订阅套餐 \(request id/);
    expect(Number((await userRow(s, only.id)).quota)).toBe(WALLET);
    const none = await subscriber(null, 'subscription_only');
    expect((await call(none.token.key)).status).toBe(403);
  });

  it('concurrent requests never pass a window: what was charged is what the window counts', async () => {
    const p = await plan({ total_amount: 0 }, { daily_amount: 1000 });
    const u = await subscriber(p, 'subscription_only');
    const results = await Promise.all(Array.from({ length: 24 }, () => call(u.token.key)));
    await flushLogs(s);
    const ok = results.filter((r) => r.status === 200).length;
    expect(ok).toBeGreaterThanOrEqual(10);
    expect(results.every((r) => r.status === 200 || r.status === 403)).toBe(true);
    const { daily } = await usage(u.subId);
    expect(daily).toBe(ok * COST);
    expect(daily).toBeLessThanOrEqual(1000);
    expect(await planHolds()).toBe(0);
    const logs = await logsOf(s, u.id);
    expect(logs.filter((l) => l.type === 2).length).toBe(ok);
  });

  it('a refund after the window reset credits nothing to the new period', async () => {
    const p = await plan({ total_amount: 0 }, { daily_amount: 1000 });
    const u = await subscriber(p, 'subscription_only');
    const billing = relayServices(s.ctx).billing;
    const route = await planRoute(
      s.ctx,
      { id: u.id, setting: { billing_preference: 'subscription_only' } },
      MODEL,
      'default',
      'Asia/Shanghai',
    );
    const res = await billing.reserve({
      userId: u.id,
      tokenId: u.token.id,
      tokenKey: u.token.key,
      tokenUnlimited: false,
      cachedUserQuota: WALLET,
      amount: 300,
      plan: route,
    });
    expect(res.plan?.subscriptionId).toBe(u.subId);
    expect((await usage(u.subId)).daily).toBe(300);
    // the next day's period began meanwhile, with 40 used in it
    const { dailyEnd } = await usage(u.subId);
    await s.ctx.db
      .updateTable('subscription_usage')
      .set({ daily_used: 40, daily_end: dailyEnd + 86400 })
      .where('user_subscription_id', '=', u.subId)
      .execute();
    await billing.refund(res);
    expect((await usage(u.subId)).daily).toBe(40);
    // the token got its part back all the same, and nothing is held
    expect(Number((await tokenRow(s, u.token.id)).remain_quota)).toBe(1_000_000);
    expect(await planHolds()).toBe(0);
  });

  it("a dead node's plan holds are given back once, and never into a later period", async () => {
    const p = await plan({ total_amount: 0 }, { daily_amount: 1000, weekly_amount: 5000 });
    const u = await subscriber(p, 'subscription_only');
    expect((await call(u.token.key)).status).toBe(200);
    await flushLogs(s);
    const before = await s.ctx.db
      .selectFrom('subscription_usage')
      .selectAll()
      .where('user_subscription_id', '=', u.subId)
      .executeTakeFirstOrThrow();
    const dead = `deadhost:1:1:${kind}`;
    // the dead node held 200 on today's daily period, 200 on this week's, and 70 on a daily period already over
    await s.ctx.db
      .updateTable('subscription_usage')
      .set({ daily_used: sql`daily_used + 200`, weekly_used: sql`weekly_used + 200` })
      .where('user_subscription_id', '=', u.subId)
      .execute();
    await s.ctx.db
      .insertInto('subscription_holds')
      .values([
        { node: dead, user_subscription_id: u.subId, slot: 'daily', period_end: Number(before.daily_end), amount: 200 },
        {
          node: dead,
          user_subscription_id: u.subId,
          slot: 'weekly',
          period_end: Number(before.weekly_end),
          amount: 200,
        },
        {
          node: dead,
          user_subscription_id: u.subId,
          slot: 'daily',
          period_end: Number(before.daily_end) - 86400,
          amount: 70,
        },
      ])
      .execute();
    await s.ctx.db.insertInto('quota_hold_nodes').values({ node: dead, seen_at: 1 }).execute();
    const holdNodes = relayServices(s.ctx).billing.holdNodes;
    await holdNodes.sweep();
    await holdNodes.sweep();
    const after = await s.ctx.db
      .selectFrom('subscription_usage')
      .selectAll()
      .where('user_subscription_id', '=', u.subId)
      .executeTakeFirstOrThrow();
    expect(Number(after.daily_used)).toBe(COST);
    expect(Number(after.weekly_used)).toBe(COST);
    expect(
      (await s.ctx.db.selectFrom('subscription_holds').selectAll().where('node', '=', dead).execute()).length,
    ).toBe(0);
  });

  it('a subscription new-api created (no usage row) is billed from its columns', async () => {
    const p = await plan({ total_amount: 500, quota_reset_period: 'never' });
    const u = await subscriber(p, 'subscription_first');
    // as new-api leaves it: 420 of 500 used, no row of ours
    await s.ctx.db.deleteFrom('subscription_usage').where('user_subscription_id', '=', u.subId).execute();
    await s.ctx.db.updateTable('user_subscriptions').set({ amount_used: 420 }).where('id', '=', u.subId).execute();
    s.ctx.changes.publish({ kind: 'user', id: u.id });
    // 420 + 100 > 500: the wallet pays, and nothing of ours is written
    expect((await call(u.token.key)).status).toBe(200);
    await flushLogs(s);
    expect(Number((await userRow(s, u.id)).quota)).toBe(WALLET - COST);
    const rows = await s.ctx.db
      .selectFrom('subscription_usage')
      .selectAll()
      .where('user_subscription_id', '=', u.subId)
      .execute();
    expect(rows).toEqual([]);
    // with 300 used the plan pays: our row starts from new-api's columns
    await s.ctx.db.updateTable('user_subscriptions').set({ amount_used: 300 }).where('id', '=', u.subId).execute();
    s.ctx.changes.publish({ kind: 'user', id: u.id });
    expect((await call(u.token.key)).status).toBe(200);
    await flushLogs(s);
    expect((await usage(u.subId)).main).toBe(300 + COST);
    expect(Number((await userRow(s, u.id)).quota)).toBe(WALLET - COST);
    const sub = await s.ctx.db
      .selectFrom('user_subscriptions')
      .selectAll()
      .where('id', '=', u.subId)
      .executeTakeFirstOrThrow();
    expect(Number(sub.amount_used)).toBe(300 + COST);
  });

  it('a user without plans is read once, not per request', async () => {
    const u = await subscriber(null, 'subscription_first');
    const before = activeSubscriptions(s.ctx).loads;
    for (let i = 0; i < 5; i++) expect((await call(u.token.key)).status).toBe(200);
    expect(activeSubscriptions(s.ctx).loads - before).toBe(1);
    // wallet_only users are not read at all
    const w = await subscriber(null, 'wallet_only');
    const at = activeSubscriptions(s.ctx).loads;
    expect((await call(w.token.key)).status).toBe(200);
    expect(activeSubscriptions(s.ctx).loads).toBe(at);
  });

  it("a purchase racing the same user's requests: the wallet never below zero, every charge on one source", async () => {
    // the plan costs 0.01 × 500000 = 5000; the wallet holds that and room for about three requests
    const p = await plan({ price_amount: 0.01, total_amount: 0 }, { daily_amount: 400 });
    const wallet = 5000 + 250;
    const u = await subscriber(null, 'subscription_first', wallet);
    const [bought, ...results] = await Promise.all([
      purchaseWithBalance(s.ctx, u.id, p).then(
        () => true,
        () => false,
      ),
      ...Array.from({ length: 8 }, () => call(u.token.key)),
    ]);
    await flushLogs(s);
    const ok = results.filter((r) => r.status === 200).length;
    const logs = (await logsOf(s, u.id)).filter((l) => l.type === 2);
    expect(logs.length).toBe(ok);
    const onPlan = logs.filter((l) => l.otherJson.billing_source === 'subscription');
    const onWallet = logs.filter((l) => l.otherJson.billing_source !== 'subscription');
    const quota = Number((await userRow(s, u.id)).quota);
    expect(quota).toBeGreaterThanOrEqual(0);
    expect(quota).toBe(wallet - (bought ? 5000 : 0) - onWallet.length * COST);
    if (bought) {
      const sub = await s.ctx.db
        .selectFrom('user_subscriptions')
        .select('id')
        .where('user_id', '=', u.id)
        .executeTakeFirstOrThrow();
      const { daily } = await usage(Number(sub.id));
      expect(daily).toBe(onPlan.length * COST);
      expect(daily).toBeLessThanOrEqual(400);
    } else expect(onPlan).toEqual([]);
    expect(await planHolds()).toBe(0);
  });

  it('a plan edited after the purchase changes no window of what was bought (the rolling length included)', async () => {
    const fields = { title: 'Rolling', duration_unit: 'day', duration_value: 30, total_amount: 0 };
    const p = await plan(fields, { rolling_seconds: 3600, rolling_amount: 1000 });
    const u = await subscriber(p, 'subscription_only');
    await updatePlan(
      s.ctx,
      p,
      await parsePlanWrite(s.ctx, { plan: fields, limits: { rolling_seconds: 60, rolling_amount: 5 } }),
    );
    s.ctx.changes.publish({ kind: 'subscriptions' });
    await new Promise((r) => setImmediate(r));
    expect((await call(u.token.key)).status).toBe(200);
    await flushLogs(s);
    const sub = await s.ctx.db
      .selectFrom('user_subscriptions')
      .select('start_time')
      .where('id', '=', u.subId)
      .executeTakeFirstOrThrow();
    const row = await s.ctx.db
      .selectFrom('subscription_usage')
      .select(['rolling_limit', 'rolling_used', 'rolling_end', 'rolling_seconds'])
      .where('user_subscription_id', '=', u.subId)
      .executeTakeFirstOrThrow();
    expect(Number(row.rolling_seconds)).toBe(3600);
    expect(Number(row.rolling_limit)).toBe(1000);
    expect(Number(row.rolling_used)).toBe(COST);
    expect((Number(row.rolling_end) - Number(sub.start_time)) % 3600).toBe(0);
    expect(Number(row.rolling_end) - Math.floor(Date.now() / 1000)).toBeGreaterThan(60);
  });
});
