// A client that goes away costs the operator nothing the client does not pay for:
//   (a) gone before the upstream request is sent → nothing is sent (no retry elsewhere either), the reservation goes back;
//   (b) gone after a non-stream request was sent → the answer is read to its end and billed from its usage, nothing is
//       written to the client, the consume log says `client_left`;
//   (c) gone mid-stream → the upstream is aborted and the text delivered so far is billed, logged with `client_left`.
// Each on the lean HTTP front (the default) and on Node's server (LEAN_HTTP=false, which also sends upstream calls
// through undici instead of the lean client). Clients are raw sockets destroyed at the moment each case needs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/connect.js';
import { createTestDatabase } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream, chatCompletion } from '../helpers/mock-upstream.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  flushLogs,
  logsOf,
  openHolds,
  rawChat,
  setOptions,
  tokenRow,
  userRow,
  waitFor,
} from './fixtures.js';
import { modelRateLimit } from '../../src/relay/rate-limit.js';
import { countTextTokens } from '../../src/services/tokenizer.js';

const MODEL = 'left-model';
const RETRY_MODEL = 'left-retry-model';
const TTS_MODEL = 'tts-left';
const USAGE = { prompt_tokens: 10, completion_tokens: 50 };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each([
  ['the lean HTTP front', {}],
  ["Node's HTTP server", { LEAN_HTTP: 'false' }],
] as const)('a client that leaves, on %s', (_name, env) => {
  let s: TestServer;
  let up: MockUpstream;
  let failing: MockUpstream;
  let spare: MockUpstream;

  beforeAll(async () => {
    s = await startTestServer({ env: { ...env } });
    up = await MockUpstream.start();
    failing = await MockUpstream.start();
    spare = await MockUpstream.start();
    await setOptions(s, {
      ModelRatio: { [MODEL]: 1, [RETRY_MODEL]: 1, [TTS_MODEL]: 1 },
      CompletionRatio: { [MODEL]: 1, [RETRY_MODEL]: 1 },
    });
    await addChannel(s, { baseUrl: up.url, models: [MODEL, TTS_MODEL] });
    // RETRY_MODEL: a channel that fails slowly first, then one that would answer
    await addChannel(s, { baseUrl: failing.url, models: [RETRY_MODEL], priority: 10 });
    await addChannel(s, { baseUrl: spare.url, models: [RETRY_MODEL], priority: 0 });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([up?.close(), failing?.close(), spare?.close()]);
  });

  const chat = (extra: Record<string, unknown> = {}) => ({
    model: MODEL,
    max_tokens: 100,
    messages: [{ role: 'user', content: 'are you there' }],
    ...extra,
  });

  /** Runs `fn` with the rate-limit check (which runs before the reservation) held until `release()`. */
  const withHeldRateLimit = async (fn: (held: () => boolean, release: () => void) => Promise<void>) => {
    const limiter = modelRateLimit(s.ctx);
    const check = limiter.check;
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    limiter.check = async (userId: number) => {
      calls++;
      await gate;
      return check.call(limiter, userId);
    };
    await setOptions(s, { ModelRequestRateLimitEnabled: 'true' });
    try {
      await fn(() => calls > 0, release);
    } finally {
      release();
      limiter.check = check;
      await setOptions(s, { ModelRequestRateLimitEnabled: 'false' });
    }
  };

  // (a) a well-funded caller's request goes upstream while its reservation commits; a low balance waits for it first
  for (const [label, quota, remain] of [
    ['a well-funded caller (overlapped reservation)', 10_000_000, 5_000_000],
    ['a caller near its limit', 2_000, 1_500],
  ] as const) {
    it(`sends nothing upstream and charges nothing when ${label} left before the request went out`, async () => {
      const u = await addUser(s, { quota });
      const t = await addToken(s, u.id, { unlimited: false, remain });
      const sent = up.requests.length;
      await withHeldRateLimit(async (held, release) => {
        const c = rawChat(s.url, t.key, chat());
        await waitFor(held);
        c.sock.destroy();
        await sleep(300); // the server sees the connection closed
        release();
        await flushLogs(s);
        expect(c.received()).toBe('');
      });
      await sleep(200);
      expect(up.requests.length).toBe(sent);
      await flushLogs(s);
      expect(await userRow(s, u.id)).toEqual({ quota, used_quota: 0, request_count: 0 });
      expect((await tokenRow(s, t.id)).remain_quota).toBe(remain);
      expect(await logsOf(s, u.id)).toEqual([]);
      expect(await openHolds(s, u.id)).toEqual([]);
    });
  }

  it('reads a non-stream answer to its end after the client left, bills its usage and logs client_left', async () => {
    up.behave = () => ({ kind: 'json', delayMs: 400, body: chatCompletion(MODEL, 'worth paying for', USAGE) });
    try {
      const u = await addUser(s, { quota: 2_000 });
      const t = await addToken(s, u.id, { unlimited: false, remain: 1_500 });
      const sent = up.requests.length;
      const aborted = up.closedEarly;
      const c = rawChat(s.url, t.key, chat());
      await waitFor(() => up.requests.length === sent + 1); // the request is out
      c.sock.destroy();
      await waitFor(async () => (await logsOf(s, u.id)).length === 1);
      const [l] = await logsOf(s, u.id);
      expect(up.closedEarly).toBe(aborted); // the upstream answered in full
      expect(c.received()).toBe('');
      expect(l).toMatchObject({ quota: 60, prompt_tokens: 10, completion_tokens: 50 });
      expect(Boolean(l.is_stream)).toBe(false);
      expect(l.otherJson.client_left).toBe(true);
      expect(await userRow(s, u.id)).toEqual({ quota: 2_000 - 60, used_quota: 60, request_count: 1 });
      expect((await tokenRow(s, t.id)).remain_quota).toBe(1_500 - 60);
      expect(await openHolds(s, u.id)).toEqual([]);
    } finally {
      up.reset();
    }
  });

  it('bills a speech request whose client left before the audio came, and logs client_left', async () => {
    up.behave = () => ({ kind: 'json', delayMs: 400, body: { audio: 'bytes' } });
    try {
      const u = await addUser(s, { quota: 2_000 });
      const t = await addToken(s, u.id, { unlimited: false, remain: 1_500 });
      const sent = up.requests.length;
      const c = rawChat(
        s.url,
        t.key,
        { model: TTS_MODEL, voice: 'alloy', input: 'read this aloud' },
        undefined,
        '/v1/audio/speech',
      );
      await waitFor(() => up.requests.length === sent + 1);
      c.sock.destroy();
      await waitFor(async () => (await logsOf(s, u.id)).length === 1);
      const [l] = await logsOf(s, u.id);
      expect(c.received()).toBe('');
      expect(l.prompt_tokens).toBe('read this aloud'.length);
      expect(l.quota).toBe(l.prompt_tokens);
      expect(l.otherJson.client_left).toBe(true);
      expect(await userRow(s, u.id)).toEqual({ quota: 2_000 - l.quota, used_quota: l.quota, request_count: 1 });
      expect((await tokenRow(s, t.id)).remain_quota).toBe(1_500 - l.quota);
      expect(await openHolds(s, u.id)).toEqual([]);
    } finally {
      up.reset();
    }
  });

  it('logs no client_left for a client that stayed', async () => {
    const u = await addUser(s, { quota: 2_000 });
    const t = await addToken(s, u.id);
    let done!: () => void;
    const answered = new Promise<void>((r) => (done = r));
    const c = rawChat(s.url, t.key, chat(), (text) => text.includes('"usage"') && done());
    await answered;
    c.sock.destroy();
    const [l] = await logsOf(s, u.id);
    expect(l.quota).toBeGreaterThan(0);
    expect(l.otherJson).not.toHaveProperty('client_left');
  });

  it('tries no other channel for a client that left while the first one failed', async () => {
    await setOptions(s, { RetryTimes: '2' });
    failing.behave = () => ({
      kind: 'json',
      status: 500,
      delayMs: 400,
      body: { error: { message: 'overloaded', type: 'server_error' } },
    });
    try {
      const u = await addUser(s, { quota: 2_000 });
      const t = await addToken(s, u.id, { unlimited: false, remain: 1_500 });
      const c = rawChat(s.url, t.key, chat({ model: RETRY_MODEL }));
      await waitFor(() => failing.requests.length === 1);
      c.sock.destroy();
      await sleep(800);
      await flushLogs(s);
      expect(spare.requests).toHaveLength(0);
      expect(await userRow(s, u.id)).toEqual({ quota: 2_000, used_quota: 0, request_count: 0 });
      expect((await tokenRow(s, t.id)).remain_quota).toBe(1_500);
      expect(await logsOf(s, u.id)).toEqual([]);
    } finally {
      await setOptions(s, { RetryTimes: '0' });
      failing.reset();
    }
  });

  it('aborts a stream the client left mid-way, bills what was delivered and logs client_left', async () => {
    const pieces = Array.from({ length: 40 }, (_, i) => ` w${i}`);
    up.behave = () => ({ kind: 'stream', spec: { pieces, intervalMs: 30, usage: 'never' } });
    try {
      const u = await addUser(s, { quota: 1_000_000 });
      const t = await addToken(s, u.id, { unlimited: false, remain: 500_000 });
      const aborted = up.closedEarly;
      let gone!: () => void;
      const left = new Promise<void>((r) => (gone = r));
      const c = rawChat(s.url, t.key, chat({ stream: true }), (text) => {
        if ((text.match(/"content"/g) ?? []).length >= 6) {
          c.sock.destroy();
          gone();
        }
      });
      await left;
      await waitFor(() => up.closedEarly === aborted + 1);
      await waitFor(async () => (await logsOf(s, u.id)).length === 1);
      const [l] = await logsOf(s, u.id);
      expect(Boolean(l.is_stream)).toBe(true);
      expect(l.completion_tokens).toBeGreaterThan(0);
      expect(l.completion_tokens).toBeLessThanOrEqual(countTextTokens(pieces.slice(0, 12).join(''), MODEL));
      expect(l.quota).toBe(l.prompt_tokens + l.completion_tokens);
      expect(l.otherJson.client_left).toBe(true);
      expect(await userRow(s, u.id)).toEqual({ quota: 1_000_000 - l.quota, used_quota: l.quota, request_count: 1 });
      expect((await tokenRow(s, t.id)).remain_quota).toBe(500_000 - l.quota);
      expect(await openHolds(s, u.id)).toEqual([]);
    } finally {
      up.reset();
    }
  });
});

describe('a stop and a client that left', () => {
  it('gives up the non-stream answer still read for a client that left, and refunds it', async () => {
    const database = await createTestDatabase('sqlite');
    const s = await startTestServer({ database });
    const up = await MockUpstream.start();
    try {
      await setOptions(s, { ModelRatio: { [MODEL]: 1 }, CompletionRatio: { [MODEL]: 1 } });
      await addChannel(s, { baseUrl: up.url, models: [MODEL] });
      await channelsChanged(s);
      up.behave = () => ({ kind: 'json', delayMs: 10_000, body: chatCompletion(MODEL, 'too late', USAGE) });
      const u = await addUser(s, { quota: 2_000 });
      const t = await addToken(s, u.id, { unlimited: false, remain: 1_500 });
      const c = rawChat(s.url, t.key, { model: MODEL, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
      await waitFor(() => up.requests.length === 1);
      c.sock.destroy();
      await sleep(200);
      const started = Date.now();
      await s.close(1_000);
      expect(Date.now() - started).toBeLessThan(6_000); // not the upstream's 10 s
      await waitFor(() => up.closedEarly === 1);
      const { db, close } = await openDatabase({ dsn: '', sqlitePath: database.sqlitePath });
      try {
        expect(
          await db.selectFrom('users').select(['quota', 'used_quota']).where('id', '=', u.id).executeTakeFirstOrThrow(),
        ).toEqual({ quota: 2_000, used_quota: 0 });
        expect(
          await db.selectFrom('tokens').select(['remain_quota']).where('id', '=', t.id).executeTakeFirstOrThrow(),
        ).toEqual({ remain_quota: 1_500 });
        expect(await db.selectFrom('logs').select('id').where('user_id', '=', u.id).execute()).toEqual([]);
      } finally {
        await close();
      }
    } finally {
      await s.close();
      await up.close();
      await database.drop();
    }
  });
});
