// Budgets and channel caps under concurrency (issue 39 point 1; services/limits/, relay/pipeline/limit.ts and
// channel-cap.ts): a request counts its reservation against its budget, and its bound against a capped channel's day,
// when it is admitted, so N requests in flight together never spend more than the budget (or the cap) plus one
// request's true cost; the refused ones answer 429 (or go to another channel) and are charged nothing. On one
// instance (counters in memory) and on two instances sharing one database and Redis.
//
// The mock upstream holds its answers until every request has either reached it or been answered otherwise, so the
// requests are in flight together however fast the gateway runs; waves alternate with waves not held (requests settle
// among the admissions) until the budget admits nothing more, the bound checked after each.
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb, redisAvailable, REDIS_URL, type TestDbKind } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { defaultBehaviour, MockUpstream, type Behaviour, type RecordedRequest } from '../helpers/mock-upstream.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  client,
  flushLogs,
  logsOf,
  setOptions,
  tokenRow,
  userRow,
  waitFor,
} from '../relay/fixtures.js';
import { usageLimits, type LimitSettings } from '../../src/services/limits/index.js';
import { periodAt } from '../../src/services/limits/periods.js';

const N = 30;
/** one request's true cost: the mock's usage (11 prompt + 7 completion tokens) at ratio 1 */
const COST = 18;
/**
 * The budget and the cap: a few requests' reservations fit at once (a request reserves ~110 here: its prompt's bound
 * plus max_tokens), far fewer than N, whose true costs (N × 18) pass them.
 */
const BUDGET = 400;
/** BUDGET as the refusal names it: dollars at 500,000 quota per dollar, as the site shows amounts */
const BUDGET_SHOWN = '$0.00080';
const CAP = 400;
const MODELS = ['bc-token', 'bc-user', 'bc-group', 'bc-cap', 'bc-fail', 'bc-retry'];
const withRedis = await redisAvailable();

for (const nodes of [1, 2] as const) {
  const topology = nodes === 1 ? 'one instance, counters in memory' : 'two instances sharing the database and Redis';
  await describeEachDb(`budgets and channel caps under concurrency (${topology})`, (kind) => suite(kind, nodes));
}

function suite(kind: TestDbKind, nodes: 1 | 2) {
  const skip = nodes === 2 && !withRedis; // the shared counters need a real Redis (CI starts one)
  let a: TestServer;
  let servers: TestServer[] = [];
  let up: MockUpstream;
  let capUp: MockUpstream;
  let cappedId = 0;
  let fallbackId = 0;
  let failingCappedId = 0;

  beforeAll(async () => {
    if (skip) return;
    up = await MockUpstream.start();
    capUp = await MockUpstream.start();
    const env: Record<string, string> = nodes === 2 ? { REDIS_CONN_STRING: REDIS_URL } : {};
    a = await startTestServer({ kind, env });
    servers = [a];
    if (nodes === 2) servers.push(await startTestServer({ database: a.database, redisPrefix: a.ctx.redisPrefix, env }));
    await addChannel(a, {
      baseUrl: up.url,
      models: ['bc-token', 'bc-user', 'bc-group', 'bc-fail'],
      groups: ['default', 'bcg'],
    });
    // the preferred channel for bc-cap has a daily quota cap; past it requests go to the other one
    cappedId = await addChannel(a, {
      baseUrl: capUp.url,
      models: ['bc-cap'],
      priority: 10,
      setting: { daily_quota_cap: CAP },
    });
    fallbackId = await addChannel(a, { baseUrl: up.url, models: ['bc-cap', 'bc-retry'], priority: 0 });
    // bc-retry: a capped channel that fails, tried first
    failingCappedId = await addChannel(a, {
      baseUrl: capUp.url,
      models: ['bc-retry'],
      priority: 10,
      setting: { daily_quota_cap: CAP },
    });
    const failOn =
      (model: string) =>
      (req: RecordedRequest): Behaviour =>
        req.body?.model === model
          ? { kind: 'json', status: 500, body: { error: { message: 'upstream broke', type: 'server_error' } } }
          : defaultBehaviour(req);
    up.behave = failOn('bc-fail');
    capUp.behave = failOn('bc-retry');
    for (const s of servers) {
      await setOptions(s, { ModelRatio: Object.fromEntries(MODELS.map((m) => [m, 1])) });
      await channelsChanged(s);
    }
  });
  afterAll(async () => {
    const redis = a?.ctx.redis;
    const keys = redis ? await redis.keys(`${a.ctx.redisPrefix}*`) : [];
    if (keys.length) await redis!.del(...keys);
    for (const s of servers.slice(1)) await s.close();
    await a?.close(); // drops the shared database
    await up?.close();
    await capUp?.close();
  });

  /** saves a setting and waits until every node has it (the change travels over Redis between nodes) */
  async function limit(scope: 'token' | 'user', id: number, settings: LimitSettings) {
    await usageLimits(a.ctx).save(scope, id, settings);
    const want = JSON.stringify(settings);
    await waitFor(() => servers.every((s) => JSON.stringify(usageLimits(s.ctx).settingsOf(scope, id)) === want));
  }

  /**
   * N requests at once through the official client, spread over the nodes. Held: the upstream answers none until each
   * request has reached it or been answered otherwise. The statuses and error messages, once all are answered and
   * settled.
   */
  async function wave(key: string, model: string, held: MockUpstream | null) {
    const arrivedBefore = held?.requests.length ?? 0;
    const release = held?.hold();
    let answered = 0;
    const answers = Array.from({ length: N }, (_, i) =>
      client(servers[i % servers.length], key)
        .chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 20 })
        .then(
          () => ({ status: 200, message: '' }),
          (e: unknown) => ({
            status: e instanceof OpenAI.APIError ? (e.status ?? 0) : -1,
            message: (e as Error).message,
          }),
        )
        .finally(() => answered++),
    );
    if (held && release) {
      await waitFor(() => held.requests.length - arrivedBefore + answered === N, 15_000);
      release();
    }
    const out = await Promise.all(answers);
    for (const s of servers) await flushLogs(s);
    return out;
  }

  /** the consume-log rows of a user's requests to a model (all nodes write to the one database) */
  async function charges(userId: number, model: string) {
    return (await logsOf(a, userId)).filter((l) => l.type === 2 && l.model_name === model);
  }

  /** Waves until the budget admits none: each time at most the budget plus one request charged, the rest refused. */
  async function expectBudgetHolds(userId: number, tokenId: number, group: string, model: string, refusal: string) {
    const sent = () => up.requests.filter((r) => r.body?.model === model).length;
    let admitted = 0;
    let total = 0;
    let last = -1;
    for (let w = 0; w < 20 && last !== 0; w++) {
      const answers = await wave(tokenKeys.get(tokenId)!, model, w % 2 === 0 ? up : null);
      const ok = answers.filter((x) => x.status === 200).length;
      if (w === 0) expect(ok).toBeGreaterThanOrEqual(1);
      // the rest were refused before the upstream, with new-api's 429 and the budget's message
      const refused = answers.filter((x) => x.status !== 200);
      expect(refused.map((x) => x.status)).toEqual(Array(N - ok).fill(429));
      for (const x of refused) expect(x.message).toContain(refusal);
      admitted += ok;
      last = ok;
      expect(sent()).toBe(admitted);
      const rows = await charges(userId, model);
      expect(rows.map((r) => r.quota)).toEqual(Array(admitted).fill(COST));
      total = admitted * COST;
      expect(total).toBeLessThanOrEqual(BUDGET + COST);
      // settled, the budget's counter holds the charges, the reservations corrected or released
      const used = async () => (await usageLimits(a.ctx).status(tokenId, userId, group)).budget?.used;
      await waitFor(async () => (await used()) === total);
    }
    // the budget was spent (a request reserving ~110 no longer fits), and no more than it plus one request
    expect(last).toBe(0);
    expect(total).toBeGreaterThan(BUDGET / 2);
    // the balances say the same: the refused requests took nothing
    expect((await tokenRow(a, tokenId)).used_quota).toBe(total);
    expect((await userRow(a, userId)).used_quota).toBe(total);
  }

  const tokenKeys = new Map<number, string>();
  async function userWithToken(group = 'default') {
    const u = await addUser(a, { group });
    const t = await addToken(a, u.id);
    tokenKeys.set(t.id, t.key);
    return { userId: u.id, tokenId: t.id };
  }

  it.skipIf(skip)('a token budget: N requests at once are charged at most the budget plus one request', async () => {
    const { userId, tokenId } = await userWithToken();
    await limit('token', tokenId, { budget: BUDGET, period: 'daily' });
    await expectBudgetHolds(
      userId,
      tokenId,
      'default',
      'bc-token',
      `this key has spent its daily budget of ${BUDGET_SHOWN}`,
    );
  });

  it.skipIf(skip)('a user budget: N requests at once are charged at most the budget plus one request', async () => {
    const { userId, tokenId } = await userWithToken();
    await limit('user', userId, { budget: BUDGET, period: 'daily' });
    await expectBudgetHolds(
      userId,
      tokenId,
      'default',
      'bc-user',
      `this user has spent its daily budget of ${BUDGET_SHOWN}`,
    );
  });

  it.skipIf(skip)('a group default budget holds for each user of the group', async () => {
    for (const s of servers)
      await setOptions(s, { UsageLimitGroupDefaults: { bcg: { budget: BUDGET, period: 'daily' } } });
    try {
      const { userId, tokenId } = await userWithToken('bcg');
      await expectBudgetHolds(
        userId,
        tokenId,
        'bcg',
        'bc-group',
        `this user has spent its daily budget of ${BUDGET_SHOWN}`,
      );
    } finally {
      for (const s of servers) await setOptions(s, { UsageLimitGroupDefaults: {} });
    }
  });

  it.skipIf(skip)('a channel’s daily quota cap: the requests past it go to another channel', async () => {
    const { userId, tokenId } = await userWithToken();
    const key = tokenKeys.get(tokenId)!;
    const onCapped = async () => (await charges(userId, 'bc-cap')).filter((r) => r.channel_id === cappedId);

    for (let w = 0; w < 2; w++) {
      const answers = await wave(key, 'bc-cap', w === 0 ? capUp : null);
      expect(answers.map((x) => x.status)).toEqual(Array(N).fill(200));
      const capped = await onCapped();
      if (w === 0) expect(capped.length).toBeGreaterThanOrEqual(1);
      expect(capUp.requests).toHaveLength(capped.length);
      expect(capped.reduce((n, r) => n + r.quota, 0)).toBeLessThanOrEqual(CAP + COST);
      const rows = await charges(userId, 'bc-cap');
      expect(rows.filter((r) => r.channel_id === fallbackId)).toHaveLength((w + 1) * N - capped.length);
    }
    // every request was charged once, wherever it went
    expect((await tokenRow(a, tokenId)).used_quota).toBe(2 * N * COST);
  });
  it.skipIf(skip)('a request that fails upstream gives its reservation back to the budget', async () => {
    const { userId, tokenId } = await userWithToken();
    await limit('token', tokenId, { budget: BUDGET, period: 'daily' });
    const answers = await wave(tokenKeys.get(tokenId)!, 'bc-fail', up);
    const failed = answers.filter((x) => x.status === 500).length;
    expect(failed).toBeGreaterThanOrEqual(1);
    expect(answers.filter((x) => x.status === 429)).toHaveLength(N - failed);
    // nothing charged, nothing left on the budget: the next request is admitted
    await waitFor(async () => (await usageLimits(a.ctx).status(tokenId, userId, 'default')).budget?.used === 0);
    expect(await charges(userId, 'bc-fail')).toEqual([]);
    const after = await wave(tokenKeys.get(tokenId)!, 'bc-token', up);
    expect(after.filter((x) => x.status === 200).length).toBeGreaterThanOrEqual(1);
  });

  it.skipIf(skip)(
    'a retry leaves a capped channel that failed: its hold goes back, the charge counts where it was served',
    async () => {
      const { userId, tokenId } = await userWithToken();
      for (const s of servers) await setOptions(s, { RetryTimes: 1 });
      try {
        const answers = await wave(tokenKeys.get(tokenId)!, 'bc-retry', capUp);
        expect(answers.map((x) => x.status)).toEqual(Array(N).fill(200));
        const rows = await charges(userId, 'bc-retry');
        expect(rows.map((r) => r.channel_id)).toEqual(Array(N).fill(fallbackId));
        const limits = usageLimits(a.ctx);
        const day = periodAt('daily', Date.now(), limits.timeZone()).start;
        await waitFor(async () => (await limits.counters.read([`lim:cq:${failingCappedId}:${day}`]))[0] === 0);
      } finally {
        for (const s of servers) await setOptions(s, { RetryTimes: 0 });
      }
    },
  );
}
