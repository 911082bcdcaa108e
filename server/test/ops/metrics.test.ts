// GET /metrics: after relay calls against a mock upstream the counters and histograms move by what the database
// recorded (requests, tokens, quota, upstream errors, retries), the gauges of streams and reservations follow a
// stream in flight, and the endpoint is guarded by METRICS_TOKEN and by the caller's address.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import {
  addChannel,
  addToken,
  addUser,
  channelsChanged,
  client,
  flushLogs,
  logsOf,
  setOptions,
} from '../relay/fixtures.js';
import { sampleSum, samples } from './prom-text.js';

const MODEL = 'metrics-chat';
const RETRY_MODEL = 'metrics-retry';
const TOKEN = 'scrape-secret-1';

async function scrape(s: TestServer, headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) {
  const res = await fetch(`${s.url}/metrics`, { headers });
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
}

await describeEachDb('GET /metrics', (kind) => {
  let s: TestServer;
  let up: MockUpstream;
  let bad: MockUpstream;
  let badChannel: number;
  let goodChannel: number;

  beforeAll(async () => {
    s = await startTestServer({ kind, env: { METRICS_TOKEN: TOKEN } });
    up = await MockUpstream.start();
    bad = await MockUpstream.start();
    bad.behave = () => ({ kind: 'json', status: 500, body: { error: { message: 'boom', type: 'server_error' } } });
    await setOptions(s, {
      ModelRatio: { [MODEL]: 2, [RETRY_MODEL]: 1, 'gpt-4-gizmo-*': 1 },
      CompletionRatio: { [MODEL]: 3 },
      RetryTimes: '1',
      AutomaticDisableChannelEnabled: 'false',
    });
    goodChannel = await addChannel(s, { baseUrl: up.url, models: [MODEL, RETRY_MODEL], autoBan: 0 });
    // tried first for RETRY_MODEL (higher priority), fails with a 500, then the good one answers
    badChannel = await addChannel(s, { baseUrl: bad.url, models: [RETRY_MODEL], priority: 10, autoBan: 0 });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
    await bad?.close();
  });

  it('wants the bearer token when METRICS_TOKEN is set', async () => {
    expect((await scrape(s, {})).status).toBe(401);
    expect((await scrape(s, { authorization: 'Bearer wrong-secret-1' })).status).toBe(401);
    const ok = await scrape(s);
    expect(ok.status).toBe(200);
    expect(ok.type).toContain('text/plain');
    // Node process metrics, from this instance's registry
    expect(ok.text).toContain('process_cpu_user_seconds_total');
    expect(ok.text).toContain('nodejs_eventloop_lag_seconds');
  });

  it('refuses a caller on a public address (X-Forwarded-For through the default trusted proxies)', async () => {
    const r = await scrape(s, { authorization: `Bearer ${TOKEN}`, 'x-forwarded-for': '203.0.113.9' });
    expect(r.status).toBe(403);
    // a private address behind the same proxy is served
    const p = await scrape(s, { authorization: `Bearer ${TOKEN}`, 'x-forwarded-for': '10.1.2.3' });
    expect(p.status).toBe(200);
  });

  it('counts requests, durations, tokens and quota as the consume log records them', async () => {
    const u = await addUser(s, { quota: 10_000_000 });
    const t = await addToken(s, u.id, { unlimited: true });
    const before = (await scrape(s)).text;
    const c = client(s, t.key);
    await c.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    await c.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'again' }] });
    const stream = await c.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'stream' }],
      stream: true,
    });
    for await (const _ of stream) void _;
    // a refused request (unknown model): counted with its status, no model or channel label
    const refused = await fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }),
    });
    const refusedStatus = refused.status;
    await refused.arrayBuffer();
    await flushLogs(s);
    const after = (await scrape(s)).text;
    const delta = (name: string, labels: Record<string, string> = {}) =>
      sampleSum(after, name, labels) - sampleSum(before, name, labels);

    const ch = String(goodChannel);
    const ok = { route: 'chat', status: '200', model: MODEL, channel: ch, format: 'openai' };
    expect(delta('gateway_relay_requests_total', ok)).toBe(3);
    expect(refusedStatus).toBeGreaterThanOrEqual(400);
    expect(
      delta('gateway_relay_requests_total', { route: 'chat', status: String(refusedStatus), model: '', channel: '' }),
    ).toBe(1);
    expect(delta('gateway_relay_duration_seconds_count', { route: 'chat', stream: 'false' })).toBe(3);
    expect(delta('gateway_relay_duration_seconds_count', { route: 'chat', stream: 'true' })).toBe(1);
    expect(delta('gateway_relay_ttfb_seconds_count', { route: 'chat' })).toBe(3);

    const logs = (await logsOf(s, u.id)).filter((l) => l.model_name === MODEL);
    expect(logs).toHaveLength(3);
    const sum = (f: (l: (typeof logs)[number]) => number) => logs.reduce((a, l) => a + f(l), 0);
    expect(delta('gateway_tokens_total', { direction: 'in', model: MODEL })).toBe(sum((l) => l.prompt_tokens));
    expect(delta('gateway_tokens_total', { direction: 'out', model: MODEL })).toBe(sum((l) => l.completion_tokens));
    expect(delta('gateway_quota_charged_total', { model: MODEL })).toBe(sum((l) => l.quota));
    expect(sum((l) => l.quota)).toBeGreaterThan(0);

    // the token and user came from memory after the first lookup
    expect(delta('gateway_cache_lookups_total', { cache: 'token', result: 'hit' })).toBeGreaterThanOrEqual(3);
    expect(sampleSum(after, 'gateway_active_streams')).toBe(0);
    expect(sampleSum(after, 'gateway_reservations_held')).toBe(0);
    expect(sampleSum(after, 'gateway_relay_in_flight')).toBe(0);
    expect(after).toContain('gateway_log_queue_rows');
    expect(after).toContain('gateway_log_queue_lag_seconds');
  });

  it('counts a failed upstream attempt by channel and class, and the retry', async () => {
    const u = await addUser(s, { quota: 10_000_000 });
    const t = await addToken(s, u.id, { unlimited: true });
    const before = (await scrape(s)).text;
    const r = await client(s, t.key).chat.completions.create({
      model: RETRY_MODEL,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(r.choices[0].message.content).toBeTruthy();
    expect(bad.requests).toHaveLength(1);
    const after = (await scrape(s)).text;
    const delta = (name: string, labels: Record<string, string> = {}) =>
      sampleSum(after, name, labels) - sampleSum(before, name, labels);
    expect(delta('gateway_upstream_errors_total', { channel: String(badChannel), class: 'server_error' })).toBe(1);
    expect(delta('gateway_upstream_errors_total')).toBe(1);
    expect(delta('gateway_relay_retries_total', { route: 'chat' })).toBe(1);
    // the request itself is counted once, on the channel that answered
    expect(
      delta('gateway_relay_requests_total', { model: RETRY_MODEL, status: '200', channel: String(goodChannel) }),
    ).toBe(1);
  });

  it('keeps model label values within the routable models under a flood of distinct model names', async () => {
    const gizmoChannel = await addChannel(s, { baseUrl: up.url, models: ['gpt-4-gizmo-*'], autoBan: 0 });
    await channelsChanged(s);
    const u = await addUser(s, { quota: 10_000_000 });
    const t = await addToken(s, u.id, { unlimited: true });
    const admin = await addUser(s, { quota: 10_000_000, role: 100 });
    const at = await addToken(s, admin.id, { unlimited: true });
    const post = async (key: string, model: string) => {
      const res = await fetch(`${s.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }),
      });
      await res.arrayBuffer();
      return res.status;
    };
    const before = (await scrape(s)).text;
    const N = 25;
    for (let i = 0; i < N; i++) {
      expect(await post(t.key, `gpt-4-gizmo-g-${i}`)).toBe(200); // a GPTs model: its family's channel serves it
      expect(await post(t.key, `no-such-model-${i}`)).toBeGreaterThanOrEqual(400); // refused before routing
      await post(`${at.key}-${goodChannel}`, `pinned-any-name-${i}`); // an admin's pinned channel takes any name
    }
    expect(await post(`${at.key}-${goodChannel}`, MODEL)).toBe(200); // a model the pinned channel lists keeps its name
    await flushLogs(s);
    const after = (await scrape(s)).text;
    const delta = (name: string, labels: Record<string, string>) =>
      sampleSum(after, name, labels) - sampleSum(before, name, labels);

    // every model label value is a routable model name or empty: no series per distinct name
    const modelValues = new Set(
      samples(after)
        .filter((x) => x.name.startsWith('gateway_') && x.labels.model !== undefined)
        .map((x) => x.labels.model),
    );
    expect([...modelValues].sort()).toEqual(['', 'gpt-4-gizmo-*', MODEL, RETRY_MODEL].sort());
    const gizmo = { route: 'chat', status: '200', model: 'gpt-4-gizmo-*', channel: String(gizmoChannel) };
    expect(delta('gateway_relay_requests_total', gizmo)).toBe(N);
    expect(delta('gateway_quota_charged_total', { model: 'gpt-4-gizmo-*' })).toBeGreaterThan(0);
    expect(delta('gateway_relay_requests_total', { model: '', channel: '' })).toBe(N);
    expect(delta('gateway_relay_requests_total', { model: '', channel: String(goodChannel) })).toBe(N);
    expect(delta('gateway_relay_requests_total', { model: MODEL, channel: String(goodChannel), status: '200' })).toBe(
      1,
    );
  });

  it('counts the relay answers the pipeline never sees: refusals before it and endpoints answered locally', async () => {
    const u = await addUser(s, { quota: 10_000_000 });
    const t = await addToken(s, u.id, { unlimited: true });
    const before = (await scrape(s)).text;
    const send = async (path: string, key: string, body?: unknown) => {
      const res = await fetch(`${s.url}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      await res.arrayBuffer();
      return res.status;
    };
    const chat = { model: MODEL, messages: [{ role: 'user', content: 'x' }] };
    // an unknown token, refused from the head by the lean front (chat) and by the Fastify route's hook (messages)
    expect(await send('/v1/chat/completions', 'sk-no-such-token', chat)).toBe(401);
    expect(await send('/v1/messages', 'sk-no-such-token', { ...chat, max_tokens: 5 })).toBe(401);
    expect(await send('/v1/models', `sk-${t.key}`)).toBe(200);
    expect(await send('/v1/models', 'sk-no-such-token')).toBe(401);
    expect(await send('/v1/messages/count_tokens', `sk-${t.key}`, chat)).toBe(200);
    expect(await send('/dashboard/billing/usage', `sk-${t.key}`)).toBe(200);
    const after = (await scrape(s)).text;
    const delta = (labels: Record<string, string>) =>
      sampleSum(after, 'gateway_relay_requests_total', labels) -
      sampleSum(before, 'gateway_relay_requests_total', labels);

    const none = { model: '', channel: '' };
    expect(delta({ route: 'refused', status: '401', format: 'openai', ...none })).toBe(1);
    expect(delta({ route: 'refused', status: '401', format: 'anthropic', ...none })).toBe(1);
    expect(delta({ route: 'models', status: '200', ...none })).toBe(1);
    expect(delta({ route: 'models', status: '401', ...none })).toBe(1);
    expect(delta({ route: 'count_tokens', status: '200', format: 'anthropic', ...none })).toBe(1);
    expect(delta({ route: 'billing', status: '200', ...none })).toBe(1);
    // nothing of these went through the pipeline
    expect(delta({ route: 'chat' })).toBe(0);
  });

  it('shows a stream in flight and its reservation, and neither once it ends', async () => {
    const u = await addUser(s, { quota: 10_000_000 });
    const t = await addToken(s, u.id, { unlimited: true });
    up.behave = () => ({ kind: 'stream', spec: { pieces: ['a', 'b', 'c', 'd'], intervalMs: 150 } });
    try {
      const res = await fetch(`${s.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer sk-${t.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, stream: true, messages: [{ role: 'user', content: 'x' }] }),
      });
      const reader = res.body!.getReader();
      await reader.read();
      const during = (await scrape(s)).text;
      expect(sampleSum(during, 'gateway_active_streams')).toBe(1);
      expect(sampleSum(during, 'gateway_reservations_held')).toBe(1);
      expect(sampleSum(during, 'gateway_relay_in_flight')).toBe(1);
      while (!(await reader.read()).done);
      await flushLogs(s);
      const after = (await scrape(s)).text;
      expect(sampleSum(after, 'gateway_active_streams')).toBe(0);
      expect(sampleSum(after, 'gateway_reservations_held')).toBe(0);
    } finally {
      up.reset();
    }
  });
});

describe('GET /metrics with METRICS_ALLOW_PUBLIC=true and no token', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ env: { METRICS_ALLOW_PUBLIC: 'true' } });
  });
  afterAll(async () => {
    await s?.close();
  });

  it('serves a public caller', async () => {
    const r = await scrape(s, { 'x-forwarded-for': '203.0.113.9' });
    expect(r.status).toBe(200);
    expect(r.text).toContain('gateway_relay_requests_total');
  });
});
