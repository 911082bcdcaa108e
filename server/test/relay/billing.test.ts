// Billing invariants on every database: no overdraft under concurrency (atomic conditional reservation),
// charged + remaining = start (DB and logs agree), refunds on failure, and the playground (user quota only).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream, chatCompletion } from '../helpers/mock-upstream.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  logsOf,
  openHolds,
  setOptions,
  tokenRow,
  userRow,
  waitFor,
} from './fixtures.js';
import { chatPromptBound, countChatPromptTokens, loadedEncodings } from '../../src/services/tokenizer.js';
import { relayServices } from '../../src/relay/services.js';

const MODEL = 'bill-model';
const messages = [{ role: 'user', content: 'how much is this' }];
const MAX_TOKENS = 100;
/** counted with o200k, which nothing else in this file loads */
const O200K_MODEL = 'gpt-4o-bill';

await describeEachDb('relay billing', (kind) => {
  let s: TestServer;
  let up: MockUpstream;
  let pre: number;

  beforeAll(async () => {
    s = await startTestServer({ kind });
    up = await MockUpstream.start();
    await setOptions(s, {
      ModelRatio: { [MODEL]: 1, [O200K_MODEL]: 1 },
      CompletionRatio: { [MODEL]: 1, [O200K_MODEL]: 1 },
    });
    await addChannel(s, { baseUrl: up.url, models: [MODEL, O200K_MODEL] });
    await channelsChanged(s);
    // the final charge (10 + 50) is below the reservation (prompt + max_tokens)
    up.behave = (req) =>
      req.body?.stream
        ? {
            kind: 'stream',
            spec: { pieces: ['a', 'b'], usage: 'always', usageValue: { prompt_tokens: 10, completion_tokens: 50 } },
          }
        : { kind: 'json', delayMs: 80, body: chatCompletion(MODEL, 'x', { prompt_tokens: 10, completion_tokens: 50 }) };
    pre = countChatPromptTokens(messages, MODEL) + MAX_TOKENS;
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });

  const bodyOf = (model: string) => JSON.stringify({ model, max_tokens: MAX_TOKENS, messages });
  const fire = (key: string, n: number, model = MODEL) =>
    Promise.all(
      Array.from({ length: n }, () =>
        fetch(`${s.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
          body: bodyOf(model),
        }).then(async (r) => ({ status: r.status, body: (await r.json()) as any })),
      ),
    );

  type Reserve = ReturnType<typeof relayServices>['billing']['reserve'];
  /** Runs `fn` with the relay's reservations going through `wrap(reserve)`, then puts the original back. */
  const withReserve = async (wrap: (reserve: Reserve) => Reserve, fn: () => Promise<void>) => {
    const billing = relayServices(s.ctx).billing;
    const reserve = billing.reserve;
    billing.reserve = wrap(reserve.bind(billing));
    try {
      await fn();
    } finally {
      billing.reserve = reserve;
    }
  };

  /** The amounts the relay asked the database to reserve while `fn` ran. */
  const reservedDuring = async (fn: () => Promise<void>) => {
    const amounts: number[] = [];
    await withReserve(
      (reserve) => (inp) => {
        amounts.push(inp.amount);
        return reserve(inp);
      },
      fn,
    );
    return amounts;
  };

  it('reserves a well-funded caller against a bound of the prompt, without the tokenizer, and charges the same', async () => {
    const loose = chatPromptBound(messages, undefined, Buffer.byteLength(bodyOf(O200K_MODEL))) + MAX_TOKENS;
    const u = await addUser(s, { quota: 10_000_000 });
    const t = await addToken(s, u.id, { unlimited: false, remain: 5_000_000 });
    const amounts = await reservedDuring(async () => {
      expect((await fire(t.key, 1, O200K_MODEL))[0].status).toBe(200);
    });
    expect(amounts).toEqual([loose]);
    expect(loadedEncodings()).not.toContain('o200k_base');
    expect(await logsOf(s, u.id)).toHaveLength(1);
    // 10 + 50 × 4: gpt-4o's completion ratio is forced to 4 whatever the option says
    expect(await userRow(s, u.id)).toEqual({ quota: 10_000_000 - 210, used_quota: 210, request_count: 1 });
    expect((await tokenRow(s, t.id)).remain_quota).toBe(5_000_000 - 210);
    expect(loose).toBeGreaterThan(pre); // more than an exact count (cl100k's here: counting with o200k would load it)
  });

  it('reserves the exact count when the database refuses the bound (stale cached balance), and refuses only below it', async () => {
    const loose = chatPromptBound(messages, undefined, Buffer.byteLength(bodyOf(MODEL))) + MAX_TOKENS;
    expect(loose).toBeGreaterThan(pre);
    const u = await addUser(s, { quota: 10_000_000 });
    const t = await addToken(s, u.id);
    expect((await fire(t.key, 1))[0].status).toBe(200); // caches the well-funded balance
    await logsOf(s, u.id);
    // lowered behind the cache's back, between the exact amount and the bound
    await s.ctx.db.updateTable('users').set({ quota: pre }).where('id', '=', u.id).execute();
    const amounts = await reservedDuring(async () => {
      expect((await fire(t.key, 1))[0].status).toBe(200);
    });
    expect(amounts).toEqual([loose, pre]);
    expect(await logsOf(s, u.id)).toHaveLength(2);
    expect(await userRow(s, u.id)).toEqual({ quota: pre - 60, used_quota: 120, request_count: 2 });

    // the refusal dropped the stale balance: with a large one cached again, a balance just below the exact amount is
    // refused, and the message names the exact amount, not the bound
    await s.ctx.db.updateTable('users').set({ quota: 10_000_000 }).where('id', '=', u.id).execute();
    expect((await fire(t.key, 1))[0].status).toBe(200);
    await logsOf(s, u.id);
    await s.ctx.db
      .updateTable('users')
      .set({ quota: pre - 1 })
      .where('id', '=', u.id)
      .execute();
    const refused = await reservedDuring(async () => {
      const [r] = await fire(t.key, 1);
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe('insufficient_user_quota');
      expect(r.body.error.message).toContain(`need quota: ${relayServices(s.ctx).billing.formatQuota(pre)} `);
    });
    expect(refused).toEqual([loose, pre]);
    expect(await logsOf(s, u.id)).toHaveLength(3);
    expect(await userRow(s, u.id)).toEqual({ quota: pre - 1, used_quota: 180, request_count: 3 });
  });

  it('reserves the exact prompt count where the bound is not covered 100 times over', async () => {
    const loose = chatPromptBound(messages, undefined, Buffer.byteLength(bodyOf(MODEL))) + MAX_TOKENS;
    const u = await addUser(s, { quota: 100 * loose });
    const t = await addToken(s, u.id);
    const limited = await addToken(s, (await addUser(s, { quota: 10_000_000 })).id, {
      unlimited: false,
      remain: 100 * loose,
    });
    const amounts = await reservedDuring(async () => {
      expect((await fire(t.key, 1))[0].status).toBe(200);
      expect((await fire(limited.key, 1))[0].status).toBe(200);
    });
    expect(amounts).toEqual([pre, pre]);
    // the charge is settled after the answer: wait for it (logsOf waits for in-flight settlements) before reading
    await logsOf(s, u.id);
    expect(await userRow(s, u.id)).toEqual({ quota: 100 * loose - 60, used_quota: 60, request_count: 1 });
  });

  it('never overdraws a user balance under concurrent requests', async () => {
    const start = pre * 4 + Math.floor(pre / 2);
    const u = await addUser(s, { quota: start });
    const t = await addToken(s, u.id);
    const results = await fire(t.key, 24);
    const ok = results.filter((r) => r.status === 200).length;
    const refused = results.filter((r) => r.status === 403);
    expect(ok + refused.length).toBe(24);
    expect(ok).toBeGreaterThanOrEqual(4);
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r.body.error.code).toBe('insufficient_user_quota');
    const logs = await logsOf(s, u.id); // waits for in-flight settlements, then flushes the log queue
    const row = await userRow(s, u.id);
    expect(row.quota).toBeGreaterThanOrEqual(0);
    expect(logs).toHaveLength(ok);
    const charged = logs.reduce((a, l) => a + l.quota, 0);
    expect(charged).toBe(ok * 60);
    expect(charged + row.quota).toBe(start);
    expect(row.used_quota).toBe(charged);
    expect(row.request_count).toBe(ok);
    // every reservation taken was released exactly once: nothing is left to give back after a crash
    expect(await openHolds(s, u.id)).toEqual([]);
  });

  it('never overdraws a limited token under concurrent requests', async () => {
    const u = await addUser(s, { quota: 10_000_000 });
    const startRemain = pre * 3 + 1;
    const t = await addToken(s, u.id, { unlimited: false, remain: startRemain });
    const results = await fire(t.key, 16);
    const ok = results.filter((r) => r.status === 200).length;
    for (const r of results.filter((x) => x.status !== 200)) {
      expect([401, 403]).toContain(r.status);
    }
    const logs = await logsOf(s, u.id);
    const tr = await tokenRow(s, t.id);
    expect(tr.remain_quota).toBeGreaterThanOrEqual(0);
    expect(logs).toHaveLength(ok);
    const charged = logs.reduce((a, l) => a + l.quota, 0);
    expect(tr.remain_quota + charged).toBe(startRemain);
    expect(tr.used_quota).toBe(charged);
    expect((await userRow(s, u.id)).quota).toBe(10_000_000 - charged);
    expect(await openHolds(s, u.id)).toEqual([]);
  });

  it('refunds the reservation when the upstream fails', async () => {
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id, { unlimited: false, remain: 100_000 });
    const saved = up.behave;
    up.behave = () => ({ kind: 'json', status: 500, body: { error: { message: 'down', type: 'server_error' } } });
    const [r] = await fire(t.key, 1);
    up.behave = saved;
    expect(r.status).toBe(500);
    expect(await userRow(s, u.id)).toEqual({ quota: 1_000_000, used_quota: 0, request_count: 0 });
    expect((await tokenRow(s, t.id)).remain_quota).toBe(100_000);
    expect(await logsOf(s, u.id)).toHaveLength(0);
    expect(await openHolds(s, u.id)).toEqual([]);
  });

  // A cached balance above 100 × the reservation lets the request go upstream while the reservation commits; the
  // database still decides. Here the balance was lowered behind the cache's back (as another node or an admin tool
  // would), and the reservation is slowed down by 40 ms so that the request surely reaches the upstream (whose
  // answer takes 80 ms) before the refusal. Only the first one: a refused bound of the prompt is followed at once by
  // the exact amount's reservation, which must also come before the answer.
  const withSlowReservations = (fn: () => Promise<void>) => {
    let slowed = 0;
    return withReserve(
      (reserve) => async (inp) => {
        if (slowed++ === 0) await new Promise((r) => setTimeout(r, 40));
        return reserve(inp);
      },
      fn,
    );
  };

  /** One request that reached the upstream and was cut off there when the database refused its reservation. */
  const refusedAfterGoingUpstream = async (key: string, code: string) => {
    const sent = up.requests.length;
    const aborted = up.closedEarly;
    await withSlowReservations(async () => {
      const [r] = await fire(key, 1);
      expect(r.status).toBe(403);
      expect(r.body.error.code).toBe(code);
    });
    expect(up.requests.length).toBe(sent + 1); // it had gone upstream…
    await waitFor(() => up.closedEarly === aborted + 1); // …and was cut off before the answer
  };

  it('aborts the overlapped upstream call when the database refuses a well-funded caller', async () => {
    const start = 10_000_000;
    const u = await addUser(s, { quota: start });
    const t = await addToken(s, u.id);
    expect((await fire(t.key, 1))[0].status).toBe(200);
    await logsOf(s, u.id); // the first request's settlement is written
    expect((await userRow(s, u.id)).quota).toBe(start - 60);

    await s.ctx.db.updateTable('users').set({ quota: 5 }).where('id', '=', u.id).execute();
    await refusedAfterGoingUpstream(t.key, 'insufficient_user_quota');
    expect(await logsOf(s, u.id)).toHaveLength(1);
    expect(await userRow(s, u.id)).toEqual({ quota: 5, used_quota: 60, request_count: 1 });

    // the stale balance was dropped: the next request is refused before anything goes upstream
    const sent = up.requests.length;
    const [again] = await fire(t.key, 1);
    expect(again.status).toBe(403);
    expect(up.requests.length).toBe(sent);
  });

  it('aborts the overlapped upstream call when the database refuses a well-funded limited token', async () => {
    const u = await addUser(s, { quota: 10_000_000 });
    const t = await addToken(s, u.id, { unlimited: false, remain: 5_000_000 });
    expect((await fire(t.key, 1))[0].status).toBe(200);
    await logsOf(s, u.id);
    await s.ctx.db.updateTable('tokens').set({ remain_quota: 7 }).where('id', '=', t.id).execute();
    await refusedAfterGoingUpstream(t.key, 'pre_consume_token_quota_failed');
    expect(await logsOf(s, u.id)).toHaveLength(1);
    expect((await tokenRow(s, t.id)).remain_quota).toBe(7);
    expect(await userRow(s, u.id)).toEqual({ quota: 10_000_000 - 60, used_quota: 60, request_count: 1 });
  });

  it('bills a well-funded caller who leaves while its reservation commits, once its call went out, and keeps serving', async () => {
    const u = await addUser(s, { quota: 10_000_000 });
    const t = await addToken(s, u.id);
    const aborted = up.closedEarly;
    const sent = up.requests.length;
    await withReserve(
      (reserve) => async (inp) => {
        await new Promise((r) => setTimeout(r, 300));
        return reserve(inp);
      },
      async () => {
        const ac = new AbortController();
        const gone = fetch(`${s.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer sk-${t.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: MODEL, max_tokens: MAX_TOKENS, messages }),
          signal: ac.signal,
        }).catch((e: Error) => e);
        // the request went upstream while the reservation commits; then the client leaves
        await waitFor(() => up.requests.length === sent + 1);
        ac.abort();
        expect(await gone).toBeInstanceOf(Error);
        // the answer the provider charges for is read to its end and billed once the reservation stands
        await waitFor(async () => (await logsOf(s, u.id)).length === 1);
      },
    );
    expect(up.closedEarly).toBe(aborted);
    const [l] = await logsOf(s, u.id);
    expect(l.quota).toBe(60);
    expect(l.otherJson.client_left).toBe(true);
    const [next] = await fire(t.key, 1);
    expect(next.status).toBe(200);
    expect(await logsOf(s, u.id)).toHaveLength(2);
    expect(await userRow(s, u.id)).toEqual({ quota: 10_000_000 - 120, used_quota: 120, request_count: 2 });
    expect(await openHolds(s, u.id)).toEqual([]);
  });

  it('answers and refunds an upstream failure that comes while the reservation of a well-funded caller commits', async () => {
    const u = await addUser(s, { quota: 10_000_000 });
    const t = await addToken(s, u.id, { unlimited: false, remain: 5_000_000 });
    const saved = up.behave;
    up.behave = () => ({ kind: 'destroy' });
    try {
      await withSlowReservations(async () => {
        const [r] = await fire(t.key, 1);
        expect(r.status).toBe(500);
        expect(r.body.error.code).toBe('do_request_failed');
      });
    } finally {
      up.behave = saved;
    }
    expect(await logsOf(s, u.id)).toHaveLength(0);
    expect(await userRow(s, u.id)).toEqual({ quota: 10_000_000, used_quota: 0, request_count: 0 });
    expect((await tokenRow(s, t.id)).remain_quota).toBe(5_000_000);
    expect((await fire(t.key, 1))[0].status).toBe(200);
  });

  it('bills the playground on the user only', async () => {
    const u = await addUser(s, { quota: 1_000_000 });
    await s.ctx.db
      .updateTable('users')
      .set({ access_token: `at-${u.id}-playground` })
      .where('id', '=', u.id)
      .execute();
    const res = await fetch(`${s.url}/pg/chat/completions`, {
      method: 'POST',
      headers: {
        authorization: `at-${u.id}-playground`,
        'new-api-user': String(u.id),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ model: MODEL, messages, stream: true, group: 'default' }),
    });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toContain('data: [DONE]');
    // the playground's group is not an upstream parameter
    const sent = up.requests.at(-1)!.body as Record<string, unknown>;
    expect(sent).toMatchObject({ model: MODEL, stream: true });
    expect('group' in sent).toBe(false);
    const logs = await logsOf(s, u.id);
    expect(logs).toHaveLength(1);
    expect(logs[0].token_id).toBe(0);
    expect(logs[0].token_name).toBe('playground-default');
    expect((await userRow(s, u.id)).quota).toBe(1_000_000 - logs[0].quota);
    const anon = await fetch(`${s.url}/pg/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(anon.status).toBe(401);
  });

  it('answers the playground’s group and channel errors as new-api’s Playground handler', async () => {
    const u = await addUser(s, { quota: 1_000_000 });
    await s.ctx.db
      .updateTable('users')
      .set({ access_token: `at-${u.id}-pg-errors` })
      .where('id', '=', u.id)
      .execute();
    const pg = (body: unknown) =>
      fetch(`${s.url}/pg/chat/completions`, {
        method: 'POST',
        headers: {
          authorization: `at-${u.id}-pg-errors`,
          'new-api-user': String(u.id),
          'content-type': 'application/json',
        },
        body: JSON.stringify(body),
      });
    const denied = await pg({ model: MODEL, messages, group: 'no-such-group' });
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { error: unknown }).error).toMatchObject({
      message: expect.stringMatching(/^无权访问该分组/),
      code: 'group_not_allowed',
    });
    const none = await pg({ model: 'no-channel-model', messages });
    expect(none.status).toBe(500);
    expect(((await none.json()) as { error: unknown }).error).toMatchObject({
      message: expect.stringMatching(/^当前分组 default 下对于模型 no-channel-model 无可用渠道/),
      code: 'get_playground_channel_failed',
    });
    expect(await userRow(s, u.id)).toEqual({ quota: 1_000_000, used_quota: 0, request_count: 0 });
  });
});
