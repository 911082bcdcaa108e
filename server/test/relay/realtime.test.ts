// GET /v1/realtime upgraded to a websocket, relayed to a mock OpenAI / Azure realtime upstream that checks the
// vendor's handshake, and billed once: one consume row whose quota is the audio formula of the summed usage, the user
// and the token charged to the unit, nothing for a session without a completed turn, an `error` event for a turn the
// balance cannot cover, a 401 without upgrading for a bad key.
// The client is `ws` speaking the official clients' exact handshakes: the `openai` package's OpenAIRealtimeWS sends
// `Authorization: Bearer` + `OpenAI-Beta: realtime=v1`, its browser OpenAIRealtimeWebSocket the subprotocols
// `realtime, openai-insecure-api-key.<key>, openai-beta.realtime-v1`. OpenAIRealtimeWS itself is not used: it always
// dials `wss://` (buildRealtimeURL), and the test gateway serves plain HTTP.
import { afterAll, beforeAll, expect, it } from 'vitest';
import WebSocket from 'ws';
import { describeEachDb } from '../helpers/databases.js';
import { startConnectProxy, type ConnectProxy } from '../helpers/connect-proxy.js';
import { MockRealtime, protocolList, type RealtimeUsageSpec } from '../helpers/mock-realtime.js';
import { connect, send } from '../helpers/realtime-client.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  flushLogs,
  logsOf,
  openHolds,
  setOptions,
  tokenRow,
  userRow,
  waitFor,
} from './fixtures.js';
import { relayServices } from '../../src/relay/services.js';

const MODEL = 'gpt-4o-realtime-preview-2024-12-17';
const AZURE_MODEL = 'gpt-4o-mini-realtime-preview';
/** served by a channel with a proxy */
const PROXIED_MODEL = 'gpt-4o-realtime-preview';
const MODEL_RATIO = 2.5;
const COMPLETION_RATIO = 4;
const CACHE_RATIO = 0.5;
/** new-api's audio ratios: 8 for the 2024-12-17 snapshot, 10/0.6 for mini; audio completion ratio 2 */
const AUDIO_RATIO: Record<string, number> = { [MODEL]: 8, [AZURE_MODEL]: 10 / 0.6 };
const AUDIO_COMPLETION_RATIO = 2;
/** one turn's reservation: PreConsumedQuota (500) × model ratio */
const TURN = 500 * MODEL_RATIO;

const TURN1: RealtimeUsageSpec = {
  input_tokens: 100,
  output_tokens: 50,
  input_token_details: {
    text_tokens: 60,
    audio_tokens: 40,
    cached_tokens: 20,
    cached_tokens_details: { text_tokens: 20, audio_tokens: 0 },
  },
  output_token_details: { text_tokens: 10, audio_tokens: 40 },
};
const TURN2: RealtimeUsageSpec = {
  input_tokens: 200,
  output_tokens: 80,
  input_token_details: {
    text_tokens: 50,
    audio_tokens: 150,
    cached_tokens: 64,
    cached_tokens_details: { text_tokens: 32, audio_tokens: 32 },
  },
  output_token_details: { text_tokens: 20, audio_tokens: 60 },
};

/** The session's charge, written out: text in (cached at the cache ratio), text out, audio in and out, × ratios. */
function expectedQuota(model: string, turns: RealtimeUsageSpec[]): number {
  let tokens = 0;
  const audio = AUDIO_RATIO[model];
  for (const t of turns) {
    const i = t.input_token_details;
    const cachedText = i.cached_tokens_details!.text_tokens;
    const cachedAudio = i.cached_tokens_details!.audio_tokens;
    tokens += i.text_tokens - cachedText + cachedText * CACHE_RATIO;
    tokens += (i.audio_tokens - cachedAudio) * audio + cachedAudio * audio * CACHE_RATIO;
    tokens += t.output_token_details.text_tokens * COMPLETION_RATIO;
    tokens += t.output_token_details.audio_tokens * audio * AUDIO_COMPLETION_RATIO;
  }
  return Math.round(tokens * MODEL_RATIO);
}

/** every realtime session of the server has ended and settled */
async function sessionsDone(s: TestServer): Promise<void> {
  await waitFor(() => relayServices(s.ctx).metrics.realtimeSessions === 0);
  await flushLogs(s);
}

async function metric(s: TestServer, name: string): Promise<number> {
  const text = await (await fetch(`${s.url}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return Number(line?.split(' ')[1]);
}

await describeEachDb('realtime websocket relay', (kind) => {
  let s: TestServer;
  let openai: MockRealtime;
  let azure: MockRealtime;
  let proxy: ConnectProxy;

  beforeAll(async () => {
    s = await startTestServer({ kind });
    openai = await MockRealtime.start('sk-openai-upstream');
    azure = await MockRealtime.start('azure-upstream-key', { azure: true });
    proxy = await startConnectProxy();
    await setOptions(s, {
      ModelRatio: { [MODEL]: MODEL_RATIO, [AZURE_MODEL]: MODEL_RATIO, [PROXIED_MODEL]: MODEL_RATIO },
      CompletionRatio: { [MODEL]: COMPLETION_RATIO, [AZURE_MODEL]: COMPLETION_RATIO },
      CacheRatio: { [MODEL]: CACHE_RATIO, [AZURE_MODEL]: CACHE_RATIO },
    });
    await addChannel(s, { type: 1, key: openai.key, baseUrl: openai.url, models: [MODEL] });
    await addChannel(s, {
      type: 3,
      key: azure.key,
      baseUrl: azure.url,
      models: [AZURE_MODEL],
      other: '2025-04-01-preview',
    });
    await addChannel(s, {
      type: 1,
      key: openai.key,
      baseUrl: openai.url,
      models: [PROXIED_MODEL],
      setting: { proxy: proxy.url },
    });
    await channelsChanged(s);
  });

  afterAll(async () => {
    await s?.close();
    await openai?.close();
    await azure?.close();
    await proxy?.close();
  });

  it('a session.update and two turns are billed once: one row, the formula, user and token to the unit', async () => {
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id, { unlimited: false, remain: 500_000 });
    openai.turns = [TURN1, TURN2];
    const c = await connect(s.url, MODEL, t.key);
    expect(c.ws.protocol).toBe('');
    await c.next('session.created');
    const hs = openai.handshakes.at(-1)!;
    expect(hs.path).toBe(`/v1/realtime?model=${MODEL}`);
    expect(hs.headers.authorization).toBe(`Bearer ${openai.key}`);
    expect(hs.headers['openai-beta']).toBe('realtime=v1');
    expect(await metric(s, 'gateway_realtime_sessions')).toBe(1);

    send(c, { type: 'session.update', session: { modalities: ['text', 'audio'], instructions: 'be brief' } });
    await c.next('session.updated');
    send(c, { type: 'response.create', event_id: 'evt_1' });
    await c.next('response.done');
    // a completed turn is no longer a hold: a crash now gives back only the next turn's headroom
    await waitFor(async () => {
      const h = await openHolds(s, u.id);
      return h.length === 1 && h[0][1] === TURN;
    });
    send(c, { type: 'response.create', event_id: 'evt_2' });
    await c.next('response.done', 2);
    c.ws.close();
    await c.closed;
    await sessionsDone(s);

    const quota = expectedQuota(MODEL, [TURN1, TURN2]);
    expect(quota).toBe(7990);
    const logs = (await logsOf(s, u.id)).filter((l) => l.type === 2);
    expect(logs).toHaveLength(1);
    expect(logs[0].quota).toBe(quota);
    expect(logs[0].model_name).toBe(MODEL);
    expect(logs[0].prompt_tokens).toBe(300);
    expect(logs[0].completion_tokens).toBe(130);
    expect(logs[0].otherJson.audio_input).toBe(190);
    expect(logs[0].otherJson.audio_output).toBe(100);
    expect(await userRow(s, u.id)).toMatchObject({ quota: 1_000_000 - quota, used_quota: quota, request_count: 1 });
    expect(await tokenRow(s, t.id)).toMatchObject({ remain_quota: 500_000 - quota, used_quota: quota });
    expect(await openHolds(s, u.id)).toEqual([]);
    expect(openai.count('response.create')).toBe(2);
    expect(openai.count('session.update')).toBe(1);
    expect(await metric(s, 'gateway_realtime_sessions')).toBe(0);
  });

  it('Azure, with the key as a subprotocol: the deployment URL and api-key upstream, billed at its ratios', async () => {
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id);
    azure.turns = [TURN2];
    const c = await connect(s.url, AZURE_MODEL, t.key, true);
    // new-api answers with the `realtime` subprotocol
    expect(c.ws.protocol).toBe('realtime');
    await c.next('session.created');
    const hs = azure.handshakes.at(-1)!;
    expect(hs.path).toBe(`/openai/realtime?deployment=${AZURE_MODEL}&api-version=2025-04-01-preview`);
    expect(hs.headers['api-key']).toBe(azure.key);
    expect(hs.headers.authorization).toBeUndefined();
    send(c, { type: 'response.create' });
    await c.next('response.done');
    c.ws.close();
    await sessionsDone(s);
    const quota = expectedQuota(AZURE_MODEL, [TURN2]);
    const logs = (await logsOf(s, u.id)).filter((l) => l.type === 2);
    expect(logs.map((l) => l.quota)).toEqual([quota]);
    expect((await userRow(s, u.id)).quota).toBe(1_000_000 - quota);
  });

  it('a client that leaves before any response.done is charged nothing', async () => {
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id, { unlimited: false, remain: 100_000 });
    openai.turns = [null];
    const c = await connect(s.url, MODEL, t.key, true);
    // a client that authenticated by subprotocols: new-api sends the channel's key the same way
    const hs = openai.handshakes.at(-1)!;
    expect(protocolList(hs.headers['sec-websocket-protocol'])).toBe(
      `realtime,openai-insecure-api-key.${openai.key},openai-beta.realtime-v1`,
    );
    expect(hs.headers.authorization).toBeUndefined();
    send(c, { type: 'response.create' });
    await c.next('response.created');
    // the turn was reserved while it ran
    expect(await openHolds(s, u.id)).toEqual([[t.id, TURN, TURN]]);
    c.ws.terminate();
    await sessionsDone(s);
    expect(await logsOf(s, u.id)).toEqual([]);
    expect(await userRow(s, u.id)).toMatchObject({ quota: 1_000_000, used_quota: 0, request_count: 0 });
    expect(await tokenRow(s, t.id)).toMatchObject({ remain_quota: 100_000, used_quota: 0 });
    expect(await openHolds(s, u.id)).toEqual([]);
  });

  it('a turn the balance cannot cover is refused with an error event and not sent upstream', async () => {
    const q1 = expectedQuota(MODEL, [TURN1]);
    // the opening turn fits; the completed turn plus another does not
    const start = q1 + TURN - 1;
    const u = await addUser(s, { quota: start });
    const t = await addToken(s, u.id);
    openai.turns = [TURN1, TURN1];
    const c = await connect(s.url, MODEL, t.key);
    const before = openai.count('response.create');
    send(c, { type: 'response.create', event_id: 'evt_a' });
    await c.next('response.done');
    send(c, { type: 'response.create', event_id: 'evt_b' });
    const err = await c.next('error');
    expect(err.error).toMatchObject({ code: 'insufficient_user_quota', event_id: 'evt_b' });
    expect(openai.count('response.create')).toBe(before + 1);
    c.ws.close();
    await sessionsDone(s);
    const logs = (await logsOf(s, u.id)).filter((l) => l.type === 2);
    expect(logs.map((l) => l.quota)).toEqual([q1]);
    expect((await userRow(s, u.id)).quota).toBe(start - q1);
  });

  it('a bad key is refused with 401 before the upgrade, by header or by subprotocol', async () => {
    const refusedBefore = openai.handshakes.length;
    await expect(connect(s.url, MODEL, 'nosuchkey0000000000000000000000000000000000000000')).rejects.toMatchObject({
      status: 401,
    });
    await expect(
      connect(s.url, MODEL, 'nosuchkey0000000000000000000000000000000000000000', true),
    ).rejects.toMatchObject({
      status: 401,
    });
    // nothing reached the upstream
    expect(openai.handshakes.length).toBe(refusedBefore);
    // without an upgrade there is nothing to relay; an upgrade elsewhere is an unknown path
    const plain = await fetch(`${s.url}/v1/realtime?model=${MODEL}`);
    expect(plain.status).toBe(426);
    expect(((await plain.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
    const elsewhere = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${s.url.replace(/^http/, 'ws')}/v1/chat/completions`);
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('error', () => resolve(-1));
    });
    expect(elsewhere).toBe(404);
  });

  it("the token's model limits apply before the upgrade", async () => {
    const u = await addUser(s);
    const t = await addToken(s, u.id, { modelLimits: 'gpt-4o' });
    const e = await connect(s.url, MODEL, t.key).catch((x: { status: number; message: string }) => x);
    expect((e as { status: number }).status).toBe(403);
    expect(await logsOf(s, u.id)).toEqual([]);
  });
  it("the user's model rate limit counts a session, before the upgrade", async () => {
    const u = await addUser(s);
    const t = await addToken(s, u.id);
    await setOptions(s, {
      ModelRequestRateLimitEnabled: 'true',
      ModelRequestRateLimitCount: '1',
      ModelRequestRateLimitDurationMinutes: '1',
    });
    try {
      const first = await connect(s.url, MODEL, t.key);
      first.ws.close();
      await first.closed;
      const e = await connect(s.url, MODEL, t.key).catch((x: { status: number }) => x);
      expect((e as { status: number }).status).toBe(429);
    } finally {
      await setOptions(s, { ModelRequestRateLimitEnabled: 'false' });
    }
    await sessionsDone(s);
  });
  it("goes upstream through the channel's proxy", async () => {
    const u = await addUser(s);
    const t = await addToken(s, u.id);
    const before = proxy.tunnels.length;
    const c = await connect(s.url, PROXIED_MODEL, t.key);
    await c.next('session.created');
    expect(proxy.tunnels.slice(before).map((x) => x.target)).toEqual([`127.0.0.1:${openai.port}`]);
    expect(openai.handshakes.at(-1)!.path).toBe(`/v1/realtime?model=${PROXIED_MODEL}`);
    c.ws.close();
    await sessionsDone(s);
    expect(await logsOf(s, u.id)).toEqual([]);
  });
});
