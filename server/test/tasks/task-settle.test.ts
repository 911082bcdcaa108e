// A video task settled at SUCCESS on the units its platform reports (Kling's final_unit_deduction, Ark's
// usage.total_tokens), through the gateway against the strict mocks: a model priced by ModelRatio only is charged
// new-api's estimate at submit (modelRatio / 2 × QuotaPerUnit × group) and re-priced at completion with the ratios
// taken then; the difference goes back to (or is taken from) the wallet or the plan's windows, the token, the used
// quotas and the task row, once under two concurrent polls, with one log row; an extra charge never overdraws the
// wallet or a limited token. Per-call models (a ModelPrice, TASK_PRICE_PATCH) are not adjusted.
import { expect, it } from 'vitest';
import { pollTaskUpstreams } from '../../src/relay/tasks/poll.js';
import { nowSec } from '../../src/lib/time.js';
import { createPlan, parsePlanWrite } from '../../src/services/subscriptions/plans.js';
import { bindPlan } from '../../src/services/subscriptions/admin.js';
import { describeEachDb } from '../helpers/databases.js';
import { type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, logsOf, setOptions, userRow } from '../relay/fixtures.js';
import { startKlingMock, type KlingMock } from './kling-mock.js';
import { startArkMock, type ArkMock } from './doubao-video-mock.js';
import { videoWorld } from './video-world.js';

const PAIR = 'ak-settle|sk-settle-secret';
const ARK_KEY = 'ark-settle-key';
/** ModelRatio 0.4: new-api's estimate 0.4 / 2 × 500000 = 100000 */
const RATIO = 0.4;
const ESTIMATE = 100_000;
const SEEDANCE = 'doubao-seedance-1-0-lite-ratio';

await describeEachDb('task settlement at completion', (kind) => {
  let s: TestServer;
  let kling: KlingMock;
  let ark: ArkMock;
  let klingChannel: number;
  let arkChannel: number;
  const { caller, call, balances, taskRow } = videoWorld(
    kind,
    'settle',
    async (server) => {
      s = server;
      kling = await startKlingMock([PAIR]);
      ark = await startArkMock(ARK_KEY);
      klingChannel = await addChannel(s, {
        type: 50,
        key: PAIR,
        baseUrl: kling.url,
        models: ['kling-ratio', 'kling-repriced', 'kling-priced', 'kling-both', 'kling-patched'],
      });
      arkChannel = await addChannel(s, { type: 54, key: ARK_KEY, baseUrl: ark.url, models: [SEEDANCE] });
      await setOptions(s, {
        ModelRatio: {
          'kling-ratio': RATIO,
          'kling-repriced': RATIO,
          'kling-both': RATIO,
          'kling-patched': RATIO,
          [SEEDANCE]: 2,
        },
        ModelPrice: { 'kling-priced': 0.2, 'kling-both': 0.2 },
      });
      return async () => {
        await kling?.close();
        await ark?.close();
      };
    },
    async () => ({ TASK_PRICE_PATCH: 'kling-patched' }),
  );

  async function submit(key: string, model: string) {
    const r = await call(key, 'POST', '/v1/video/generations', { model, prompt: 'a heron at dawn', duration: 5 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return taskRow(r.body.id as string);
  }

  /** Kling answers the task succeeded with these units deducted; one poll (or several at once) applies it */
  async function succeed(upstreamId: string, finalUnits: string | undefined, polls = 1) {
    kling.states.set(upstreamId, { status: 'succeed', url: 'https://cdn.test/heron.mp4', finalUnits });
    await Promise.all(Array.from({ length: polls }, () => pollTaskUpstreams(s.ctx, nowSec())));
  }

  const channelUsed = async (id: number) =>
    Number(
      (await s.ctx.db.selectFrom('channels').select('used_quota').where('id', '=', id).executeTakeFirstOrThrow())
        .used_quota,
    );

  it('a ratio-only Kling model: charged the estimate, settled on ceil("2.5") = 3 units, the rest refunded', async () => {
    const { user, token, key } = await caller();
    const channelBefore = await channelUsed(klingChannel);
    const row = await submit(key, 'kling-ratio');
    expect(Number(row.quota)).toBe(ESTIMATE);
    expect(JSON.parse(row.private_data).billing_context).toEqual({
      model_price: -1,
      model_ratio: RATIO,
      group_ratio: 1,
      other_ratio_ppm: 1_000_000,
      per_call_billing: false,
    });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - ESTIMATE, token: 1_500_000 - ESTIMATE });
    await succeed(row.upstreamId, '2.5');
    // 3 × 0.4 × 1 = 1.2, floored: 1
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 1, token: 1_500_000 - 1 });
    const after = await taskRow(row.task_id);
    expect(after).toMatchObject({ status: 'SUCCESS', progress: '100%' });
    expect(Number(after.quota)).toBe(1);
    expect(Number((await userRow(s, user.id)).used_quota)).toBe(1);
    expect((await channelUsed(klingChannel)) - channelBefore).toBe(1);
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), l.model_name, Number(l.channel_id)])).toEqual([
      [2, ESTIMATE, 'kling-ratio', klingChannel],
      [6, ESTIMATE - 1, 'kling-ratio', klingChannel],
    ]);
    expect(logs[1].otherJson).toEqual({
      is_task: true,
      task_id: row.task_id,
      pre_consumed_quota: ESTIMATE,
      actual_quota: 1,
      total_tokens: 3,
      model_ratio: RATIO,
      group_ratio: 1,
    });
    expect(logs[1].content).toContain(`异步任务按实际用量结算 ${row.task_id}`);
    expect(logs[1].token_id).toBe(token.id);
  });

  it('more units than the estimate: the extra is charged to the wallet and the token', async () => {
    const { user, token, key } = await caller();
    const row = await submit(key, 'kling-ratio');
    // 300000 × 0.4 = 120000: 20000 more than the estimate
    await succeed(row.upstreamId, '300000');
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 120_000, token: 1_500_000 - 120_000 });
    expect(Number((await taskRow(row.task_id)).quota)).toBe(120_000);
    expect(Number((await userRow(s, user.id)).used_quota)).toBe(120_000);
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota)])).toEqual([
      [2, ESTIMATE],
      [2, 20_000],
    ]);
    expect(logs[1].otherJson).toMatchObject({
      pre_consumed_quota: ESTIMATE,
      actual_quota: 120_000,
      total_tokens: 300_000,
    });
    expect(logs[1].otherJson.unpaid_quota).toBeUndefined();
  });

  it('no overdraft: an extra charge takes what the wallet, or a limited token, still holds; the rest is logged unpaid', async () => {
    // the wallet holds 5000 after the submit
    const poor = await addUser(s, { quota: ESTIMATE + 5_000 });
    const rich = await addToken(s, poor.id, { remain: 1_000_000, unlimited: false });
    const a = await submit(`sk-${rich.key}`, 'kling-ratio');
    await succeed(a.upstreamId, '300000');
    expect(await balances(poor.id, rich.id)).toEqual({ user: 0, token: 1_000_000 - ESTIMATE - 5_000 });
    expect(Number((await taskRow(a.task_id)).quota)).toBe(ESTIMATE + 5_000);
    let logs = await logsOf(s, poor.id);
    expect(logs.map((l) => [l.type, Number(l.quota)])).toEqual([
      [2, ESTIMATE],
      [2, 5_000],
    ]);
    expect(logs[1].otherJson).toMatchObject({ actual_quota: 120_000, unpaid_quota: 15_000 });

    // the token holds 3000 after the submit, the wallet plenty
    const holder = await addUser(s, { quota: 2_000_000 });
    const small = await addToken(s, holder.id, { remain: ESTIMATE + 3_000, unlimited: false });
    const b = await submit(`sk-${small.key}`, 'kling-ratio');
    await succeed(b.upstreamId, '300000');
    expect(await balances(holder.id, small.id)).toEqual({ user: 2_000_000 - ESTIMATE - 3_000, token: 0 });
    expect(Number((await taskRow(b.task_id)).quota)).toBe(ESTIMATE + 3_000);
    logs = await logsOf(s, holder.id);
    expect(logs.map((l) => [l.type, Number(l.quota)])).toEqual([
      [2, ESTIMATE],
      [2, 3_000],
    ]);
    expect(logs[1].otherJson).toMatchObject({ unpaid_quota: 17_000 });
  });

  it('per-call models are not adjusted: a ModelPrice (even beside a ModelRatio), TASK_PRICE_PATCH', async () => {
    for (const model of ['kling-priced', 'kling-both', 'kling-patched']) {
      const { user, token, key } = await caller();
      const row = await submit(key, model);
      expect(Number(row.quota), model).toBe(ESTIMATE);
      expect(JSON.parse(row.private_data).billing_context.per_call_billing).toBe(true);
      await succeed(row.upstreamId, '3');
      expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - ESTIMATE, token: 1_500_000 - ESTIMATE });
      const after = await taskRow(row.task_id);
      expect(after.status).toBe('SUCCESS');
      expect(Number(after.quota)).toBe(ESTIMATE);
      expect((await logsOf(s, user.id)).map((l) => [l.type, Number(l.quota)])).toEqual([[2, ESTIMATE]]);
    }
  });

  it('a price changed by the admin after the submit re-prices nothing: the ratios taken at submit are used', async () => {
    const { user, token, key } = await caller();
    const row = await submit(key, 'kling-repriced');
    await setOptions(s, {
      ModelRatio: {
        'kling-ratio': RATIO,
        'kling-repriced': 40,
        'kling-both': RATIO,
        'kling-patched': RATIO,
        [SEEDANCE]: 2,
      },
      GroupRatio: { default: 3 },
    });
    try {
      await succeed(row.upstreamId, '10');
    } finally {
      await setOptions(s, {
        ModelRatio: {
          'kling-ratio': RATIO,
          'kling-repriced': RATIO,
          'kling-both': RATIO,
          'kling-patched': RATIO,
          [SEEDANCE]: 2,
        },
        GroupRatio: { default: 1 },
      });
    }
    // 10 × 0.4 × 1 = 4 (not 10 × 40 × 3)
    expect(Number((await taskRow(row.task_id)).quota)).toBe(4);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 4, token: 1_500_000 - 4 });
  });

  it('two pollers applying the same SUCCESS: one adjustment, one log row', async () => {
    const { user, token, key } = await caller();
    const row = await submit(key, 'kling-ratio');
    await succeed(row.upstreamId, '7', 3);
    // 7 × 0.4 = 2.8 → 2
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 2, token: 1_500_000 - 2 });
    expect(Number((await taskRow(row.task_id)).quota)).toBe(2);
    expect((await logsOf(s, user.id)).map((l) => [l.type, Number(l.quota)])).toEqual([
      [2, ESTIMATE],
      [6, ESTIMATE - 2],
    ]);
    // a later poll of the finished task changes nothing
    await pollTaskUpstreams(s.ctx, nowSec());
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 2, token: 1_500_000 - 2 });
  });

  it('a success without units (or unreadable ones) settles nothing', async () => {
    const { user, token, key } = await caller();
    const row = await submit(key, 'kling-ratio');
    await succeed(row.upstreamId, 'n/a');
    expect((await taskRow(row.task_id)).status).toBe('SUCCESS');
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - ESTIMATE, token: 1_500_000 - ESTIMATE });
  });

  it("a plan-paid task's money back goes to the plan's windows, not the wallet", async () => {
    const write = await parsePlanWrite(s.ctx, {
      plan: { title: 'Films', duration_unit: 'day', duration_value: 30, total_amount: 1_000_000 },
      limits: { daily_amount: 500_000 },
    });
    const planId = (await createPlan(s.ctx, write)).id;
    const user = await addUser(s, {
      quota: 2_000_000,
      setting: JSON.stringify({ billing_preference: 'subscription_only' }),
    });
    const token = await addToken(s, user.id, { remain: 1_500_000, unlimited: false });
    await bindPlan(s.ctx, user.id, planId);
    const sub = await s.ctx.db
      .selectFrom('user_subscriptions')
      .select('id')
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    const usage = async () => {
      const r = await s.ctx.db
        .selectFrom('subscription_usage')
        .selectAll()
        .where('user_subscription_id', '=', Number(sub.id))
        .executeTakeFirstOrThrow();
      return { main: Number(r.main_used), daily: Number(r.daily_used) };
    };
    const row = await submit(`sk-${token.key}`, 'kling-ratio');
    expect(JSON.parse(row.private_data)).toMatchObject({ billing_source: 'subscription' });
    expect(await usage()).toEqual({ main: ESTIMATE, daily: ESTIMATE });
    await succeed(row.upstreamId, '2.5');
    expect(await usage()).toEqual({ main: 1, daily: 1 });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: 1_500_000 - 1 });
    const logs = await logsOf(s, user.id);
    expect(logs.at(-1)!.type).toBe(6);
    expect(logs.at(-1)!.otherJson).toMatchObject({ billing_source: 'subscription', subscription_id: Number(sub.id) });

    // an extra charge on a plan is taken from the same windows
    const more = await submit(`sk-${token.key}`, 'kling-ratio');
    await succeed(more.upstreamId, '300000');
    expect(await usage()).toEqual({ main: 1 + 120_000, daily: 1 + 120_000 });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: 1_500_000 - 1 - 120_000 });

    // the daily window has been reset since the submit: the extra goes to main only
    const shift = async (cols: ('main' | 'daily')[], used: number) => {
      const r = await s.ctx.db
        .selectFrom('subscription_usage')
        .select(['main_end', 'daily_end'])
        .where('user_subscription_id', '=', Number(sub.id))
        .executeTakeFirstOrThrow();
      const set: Record<string, number> = {};
      for (const c of cols) {
        set[`${c}_used`] = used;
        set[`${c}_end`] = Number(r[`${c}_end`]) + 86400;
      }
      await s.ctx.db
        .updateTable('subscription_usage')
        .set(set)
        .where('user_subscription_id', '=', Number(sub.id))
        .execute();
    };
    const third = await submit(`sk-${token.key}`, 'kling-ratio');
    await shift(['daily'], 7);
    await succeed(third.upstreamId, '300000');
    expect(await usage()).toEqual({ main: 1 + 120_000 + 120_000, daily: 7 });

    // every window reset since the submit: nothing more is taken, the extra is logged unpaid
    const fourth = await submit(`sk-${token.key}`, 'kling-ratio');
    await shift(['main', 'daily'], 9);
    const tokenBefore = (await balances(user.id, token.id)).token;
    await succeed(fourth.upstreamId, '300000');
    expect(await usage()).toEqual({ main: 9, daily: 9 });
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000, token: tokenBefore });
    expect(Number((await taskRow(fourth.task_id)).quota)).toBe(ESTIMATE);
    const last = (await logsOf(s, user.id)).at(-1)!;
    expect([last.type, Number(last.quota), last.otherJson.unpaid_quota]).toEqual([2, 0, 20_000]);
  });

  it('Doubao video: usage.total_tokens settles a ratio-priced Seedance model the same way', async () => {
    const { user, token, key } = await caller();
    const r = await call(key, 'POST', '/v1/video/generations', { model: SEEDANCE, prompt: 'waves', duration: 5 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const row = await taskRow(r.body.id as string);
    // 2 / 2 × 500000
    expect(Number(row.quota)).toBe(500_000);
    ark.states.set(row.upstreamId, { status: 'succeeded', url: 'https://cdn.test/waves.mp4', totalTokens: 108_900 });
    await Promise.all([pollTaskUpstreams(s.ctx, nowSec()), pollTaskUpstreams(s.ctx, nowSec())]);
    // 108900 × 2 = 217800
    expect(Number((await taskRow(row.task_id)).quota)).toBe(217_800);
    expect(await balances(user.id, token.id)).toEqual({ user: 2_000_000 - 217_800, token: 1_500_000 - 217_800 });
    const logs = await logsOf(s, user.id);
    expect(logs.map((l) => [l.type, Number(l.quota), Number(l.channel_id)])).toEqual([
      [2, 500_000, arkChannel],
      [6, 500_000 - 217_800, arkChannel],
    ]);
    expect(logs[1].otherJson).toMatchObject({ total_tokens: 108_900, actual_quota: 217_800 });
  });
});
