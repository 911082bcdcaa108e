// Channel choice (priority tiers, weight+10 random), retries that never re-pick a failed channel, final error
// mapping, status_code_mapping, and automatic disabling.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream, chatCompletion } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, logsOf, setOptions, waitFor } from './fixtures.js';
import { relayServices } from '../../src/relay/services.js';

describe('relay routing and retries', () => {
  let s: TestServer;
  let up: MockUpstream;
  let key: string;
  let userId: number;

  beforeAll(async () => {
    s = await startTestServer();
    up = await MockUpstream.start();
    const u = await addUser(s, { quota: 100_000_000 });
    userId = u.id;
    key = (await addToken(s, u.id)).key;
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
  });
  beforeEach(async () => {
    up.reset();
    await s.ctx.db.deleteFrom('abilities').execute();
    await s.ctx.db.deleteFrom('channels').execute();
    await setOptions(s, { RetryTimes: '0', AutomaticDisableChannelEnabled: 'false' });
  });

  const chat = (model: string) =>
    fetch(`${s.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'x' }] }),
    });

  it('uses only the highest priority tier and splits it by weight + 10', async () => {
    await setOptions(s, { ModelRatio: { 'r-1': 1 } });
    await addChannel(s, { baseUrl: up.url, models: ['r-1'], priority: 10, weight: 0, key: 'k-light' });
    await addChannel(s, { baseUrl: up.url, models: ['r-1'], priority: 10, weight: 30, key: 'k-heavy' });
    await addChannel(s, { baseUrl: up.url, models: ['r-1'], priority: 1, weight: 100, key: 'k-low' });
    await channelsChanged(s);
    const N = 400;
    for (let i = 0; i < N; i++) expect((await chat('r-1')).status).toBe(200);
    const count = (k: string) => up.requests.filter((r) => r.headers.authorization === `Bearer ${k}`).length;
    expect(count('k-low')).toBe(0);
    // expected 10/50 = 20 % light, 80 % heavy; 5 sigma ≈ 0.1
    const light = count('k-light') / N;
    expect(light).toBeGreaterThan(0.1);
    expect(light).toBeLessThan(0.3);
    expect(count('k-light') + count('k-heavy')).toBe(N);
  });

  it('retries on another channel and never re-picks one that failed', async () => {
    await setOptions(s, { ModelRatio: { 'r-2': 1 }, RetryTimes: '3' });
    const bad = await addChannel(s, { baseUrl: up.url, models: ['r-2'], priority: 0, key: 'k-bad' });
    const good = await addChannel(s, { baseUrl: up.url, models: ['r-2'], priority: 0, key: 'k-good' });
    await channelsChanged(s);
    up.behave = (req) =>
      req.headers.authorization === 'Bearer k-bad'
        ? { kind: 'json', status: 500, body: { error: { message: 'boom', type: 'server_error' } } }
        : { kind: 'json', body: chatCompletion('r-2', 'ok') };
    for (let i = 0; i < 30; i++) {
      const before = up.requests.length;
      expect((await chat('r-2')).status).toBe(200);
      const mine = up.requests.slice(before);
      // at most one try on the failing channel per request, then the good one
      expect(mine.filter((r) => r.headers.authorization === 'Bearer k-bad').length).toBeLessThanOrEqual(1);
      expect(mine[mine.length - 1].headers.authorization).toBe('Bearer k-good');
    }
    const logs = await logsOf(s, userId);
    const retried = logs.filter((l) => l.model_name === 'r-2' && l.otherJson.admin_info.use_channel.length === 2);
    expect(retried.length).toBeGreaterThan(0);
    for (const l of retried) expect(l.otherJson.admin_info.use_channel).toEqual([String(bad), String(good)]);
  });

  it('walks down the priority tiers on retry', async () => {
    await setOptions(s, { ModelRatio: { 'r-3': 1 }, RetryTimes: '2' });
    await addChannel(s, { baseUrl: up.url, models: ['r-3'], priority: 10, key: 'k-top' });
    await addChannel(s, { baseUrl: up.url, models: ['r-3'], priority: 5, key: 'k-mid' });
    await channelsChanged(s);
    up.behave = (req) =>
      req.headers.authorization === 'Bearer k-top'
        ? { kind: 'json', status: 502, body: { error: { message: 'bad gateway', type: 'x' } } }
        : { kind: 'json', body: chatCompletion('r-3', 'ok') };
    expect((await chat('r-3')).status).toBe(200);
    expect(up.requests.map((r) => r.headers.authorization)).toEqual(['Bearer k-top', 'Bearer k-mid']);
  });

  it('does not retry 400 / 504, and replaces the final 429 message', async () => {
    await setOptions(s, { ModelRatio: { 'r-4': 1 }, RetryTimes: '2' });
    await addChannel(s, { baseUrl: up.url, models: ['r-4'], key: 'k-a' });
    await addChannel(s, { baseUrl: up.url, models: ['r-4'], key: 'k-b' });
    await channelsChanged(s);
    up.behave = () => ({
      kind: 'json',
      status: 400,
      body: { error: { message: 'bad request here', type: 'invalid_request_error', code: 'x1' } },
    });
    const r400 = await chat('r-4');
    expect(r400.status).toBe(400);
    const j400 = (await r400.json()) as any;
    expect(j400.error.message).toMatch(/^bad request here \(request id: /);
    expect(j400.error.type).toBe('invalid_request_error');
    expect(up.requests).toHaveLength(1);
    up.reset();
    up.behave = () => ({ kind: 'json', status: 504, body: { error: { message: 'timeout', type: 'x' } } });
    expect((await chat('r-4')).status).toBe(504);
    expect(up.requests).toHaveLength(1);
    up.reset();
    up.behave = () => ({ kind: 'json', status: 429, body: { error: { message: 'rate limited', type: 'requests' } } });
    const r429 = await chat('r-4');
    expect(r429.status).toBe(429);
    expect(((await r429.json()) as any).error.message).toMatch(/^当前分组上游负载已饱和，请稍后再试 \(request id: /);
    expect(up.requests).toHaveLength(3);
    // nothing was charged for failed requests (logsOf first: it waits for the batched settlements)
    const charged = (await logsOf(s, userId)).reduce((a, l) => a + l.quota, 0);
    const row = await s.ctx.db.selectFrom('users').select('quota').where('id', '=', userId).executeTakeFirstOrThrow();
    expect(row.quota).toBe(100_000_000 - charged);
  });

  it('applies status_code_mapping and reports non-JSON upstream errors', async () => {
    await setOptions(s, { ModelRatio: { 'r-5': 1 } });
    await addChannel(s, { baseUrl: up.url, models: ['r-5'], statusCodeMapping: { '500': '502' } });
    await channelsChanged(s);
    up.behave = () => ({
      kind: 'raw',
      status: 500,
      body: '<html><body>Internal Server Error at 10.0.0.7</body></html>',
    });
    const r = await chat('r-5');
    expect(r.status).toBe(502);
    const j = (await r.json()) as any;
    expect(j.error.type).toBe('upstream_error');
    expect(j.error.code).toBe('bad_response_status_code');
    expect(j.error.param).toBe('500');
    expect(j.error.message).toMatch(/^bad response status code 500 \(request id: /);
  });

  it('reports an unreachable upstream as 请求上游地址失败', async () => {
    await setOptions(s, { ModelRatio: { 'r-6': 1 } });
    await addChannel(s, { baseUrl: 'http://127.0.0.1:1', models: ['r-6'] });
    await channelsChanged(s);
    const r = await chat('r-6');
    expect(r.status).toBe(500);
    const j = (await r.json()) as any;
    expect(j.error.message).toMatch(/^请求上游地址失败/);
    expect(j.error.code).toBe('do_request_failed');
  });

  it('auto-disables a channel on 401 when enabled (and only when auto_ban allows it)', async () => {
    await setOptions(s, { ModelRatio: { 'r-7': 1 }, AutomaticDisableChannelEnabled: 'true', RetryTimes: '1' });
    const bad = await addChannel(s, { baseUrl: up.url, models: ['r-7'], key: 'k-revoked', priority: 5 });
    const noBan = await addChannel(s, { baseUrl: up.url, models: ['r-7'], key: 'k-noban', priority: 1, autoBan: 0 });
    await channelsChanged(s);
    up.behave = () => ({
      kind: 'json',
      status: 401,
      body: {
        error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' },
      },
    });
    const r = await chat('r-7');
    expect(r.status).toBe(401);
    await waitFor(
      async () =>
        (await s.ctx.db.selectFrom('channels').select('status').where('id', '=', bad).executeTakeFirstOrThrow())
          .status === 3,
    );
    const row = await s.ctx.db
      .selectFrom('channels')
      .select(['status', 'other_info'])
      .where('id', '=', bad)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(row.other_info).status_reason).toContain('Incorrect API key');
    expect(JSON.parse(row.other_info).status_time).toBeGreaterThan(0);
    const ab = await s.ctx.db.selectFrom('abilities').select('enabled').where('channel_id', '=', bad).execute();
    expect(ab.every((a) => !a.enabled)).toBe(true);
    expect(
      (await s.ctx.db.selectFrom('channels').select('status').where('id', '=', noBan).executeTakeFirstOrThrow()).status,
    ).toBe(1);
    // the routing cache dropped it: the next request goes straight to the remaining channel
    await waitFor(() => relayServices(s.ctx).channels.tiers('default', 'r-7')?.length === 1);
    up.reset();
    await chat('r-7');
    expect(up.requests.map((x) => x.headers.authorization)).toEqual(['Bearer k-noban']);
  });

  it('judges auto-disable on the status after status_code_mapping, as new-api', async () => {
    await setOptions(s, { ModelRatio: { 'r-9': 1 }, AutomaticDisableChannelEnabled: 'true' });
    const mapped = await addChannel(s, { baseUrl: up.url, models: ['r-9'], statusCodeMapping: { '401': '503' } });
    await channelsChanged(s);
    // a 401 without a disabling code or type: only its status could disable the channel, and the mapping changed it
    up.behave = () => ({ kind: 'json', status: 401, body: { error: { message: 'who are you', type: 'x' } } });
    expect((await chat('r-9')).status).toBe(503);
    await new Promise((r) => setTimeout(r, 100));
    expect(
      (await s.ctx.db.selectFrom('channels').select('status').where('id', '=', mapped).executeTakeFirstOrThrow())
        .status,
    ).toBe(1);
  });

  it('does not disable when the option is off', async () => {
    await setOptions(s, { ModelRatio: { 'r-8': 1 } });
    const id = await addChannel(s, { baseUrl: up.url, models: ['r-8'] });
    await channelsChanged(s);
    up.behave = () => ({ kind: 'json', status: 401, body: { error: { message: 'bad key', type: 'x' } } });
    await chat('r-8');
    await new Promise((r) => setTimeout(r, 100));
    expect(
      (await s.ctx.db.selectFrom('channels').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status,
    ).toBe(1);
  });
});
