// general_setting.ping_interval_enabled (relay/keepalive.ts): a silent stream gets `: PING` comments every
// ping_interval_seconds; the first one sends the headers, and a failure after that is reported in-band (and still
// retried on another channel); a stream that starts or fails within the interval is answered as without pings.
import http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, logsOf, openHolds, setOptions, userRow } from './fixtures.js';

interface Timeline {
  status: number;
  contentType: string;
  /** ms from the request to the response headers */
  headersAt: number;
  text: string;
}

function streamTimeline(url: string, key: string, model: string): Promise<Timeline> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/v1/chat/completions`,
      { method: 'POST', headers: { authorization: `Bearer sk-${key}`, 'content-type': 'application/json' } },
      (res) => {
        const headersAt = Date.now() - t0;
        let text = '';
        res.on('data', (c) => (text += c.toString()));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), headersAt, text }),
        );
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ model, stream: true, messages: [{ role: 'user', content: 'think' }] }));
  });
}

const pings = (text: string) => text.split(': PING\n\n').length - 1;

describe('stream keep-alive pings', () => {
  let s: TestServer;
  let up: MockUpstream;
  let backup: MockUpstream;
  const START = 1_000_000;

  beforeAll(async () => {
    s = await startTestServer();
    up = await MockUpstream.start();
    backup = await MockUpstream.start();
    await setOptions(s, {
      ModelRatio: { 'ping-model': 1, 'ping-retry': 1 },
      CompletionRatio: { 'ping-model': 1, 'ping-retry': 1 },
    });
    await addChannel(s, { baseUrl: up.url, models: ['ping-model'] });
    // the retry model: the first channel tried (higher priority) is `up`, then `backup`
    await addChannel(s, { baseUrl: up.url, models: ['ping-retry'], priority: 10, name: 'ping-first' });
    await addChannel(s, { baseUrl: backup.url, models: ['ping-retry'], priority: 0, name: 'ping-backup' });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
    await backup?.close();
  });
  beforeEach(async () => {
    up.reset();
    backup.reset();
    await setOptions(s, {
      'general_setting.ping_interval_enabled': 'true',
      'general_setting.ping_interval_seconds': '1',
      RetryTimes: '0',
    });
  });

  async function caller() {
    const u = await addUser(s, { quota: START });
    const t = await addToken(s, u.id);
    return { userId: u.id, key: t.key };
  }

  it('sends nothing extra while the option is off', async () => {
    await setOptions(s, { 'general_setting.ping_interval_enabled': 'false' });
    const c = await caller();
    up.behave = () => ({ kind: 'stream', spec: { pieces: [' a'], delayMs: 1300, intervalMs: 1100 } });
    const r = await streamTimeline(s.url, c.key, 'ping-model');
    expect(r.status).toBe(200);
    expect(r.headersAt).toBeGreaterThanOrEqual(1250);
    expect(pings(r.text)).toBe(0);
    expect(r.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it('pings while the upstream has not answered, the first ping sending the headers', async () => {
    const c = await caller();
    up.behave = () => ({ kind: 'stream', spec: { pieces: [' one', ' two'], delayMs: 2600 } });
    const r = await streamTimeline(s.url, c.key, 'ping-model');
    expect(r.status).toBe(200);
    expect(r.contentType).toBe('text/event-stream');
    expect(r.headersAt).toBeGreaterThanOrEqual(950);
    expect(r.headersAt).toBeLessThan(2000);
    // at about 1 s and 2 s, before the first event
    expect(r.text.startsWith(': PING\n\n: PING\n\ndata: ')).toBe(true);
    expect(pings(r.text)).toBe(2);
    expect(r.text).toContain(' two');
    expect(r.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    const [l] = await logsOf(s, c.userId);
    expect(l.quota).toBe(18);
    expect((await userRow(s, c.userId)).quota).toBe(START - 18);
  });

  it('pings in the silences of a stream, between its events, and not while it flows', async () => {
    const c = await caller();
    up.behave = () => ({ kind: 'stream', spec: { pieces: [' slow', ' thoughts'], intervalMs: 1600 } });
    const slow = await streamTimeline(s.url, c.key, 'ping-model');
    expect(slow.headersAt).toBeLessThan(500);
    // one after each of the three 1.6 s silences
    expect(pings(slow.text)).toBe(3);
    expect(slow.text).toMatch(/^data: [^\n]+\n\n: PING\n\ndata: /);
    expect(slow.text.replaceAll(': PING\n\n', '')).not.toContain('PING');
    expect(slow.text.trimEnd().endsWith('data: [DONE]')).toBe(true);

    up.behave = () => ({
      kind: 'stream',
      spec: { pieces: Array.from({ length: 15 }, (_, i) => ` w${i}`), intervalMs: 100 },
    });
    const flowing = await streamTimeline(s.url, c.key, 'ping-model');
    expect(flowing.text).toContain(' w14');
    expect(pings(flowing.text)).toBe(0);
  });

  it('reports a failure in-band once a ping has sent the headers, and charges nothing', async () => {
    const c = await caller();
    up.behave = () => ({
      kind: 'json',
      status: 500,
      delayMs: 1600,
      body: { error: { message: 'upstream exploded', type: 'server_error' } },
    });
    const r = await streamTimeline(s.url, c.key, 'ping-model');
    expect(r.status).toBe(200);
    expect(r.contentType).toBe('text/event-stream');
    expect(r.text.startsWith(': PING\n\ndata: {"error":{"message":"upstream exploded (request id: ')).toBe(true);
    expect(r.text.endsWith('\n\ndata: [DONE]\n\n')).toBe(true);
    expect(await logsOf(s, c.userId)).toEqual([]);
    expect((await userRow(s, c.userId)).quota).toBe(START);
    expect(await openHolds(s, c.userId)).toEqual([]);
  });

  it('answers a failure within the interval with its HTTP status, as without pings', async () => {
    const c = await caller();
    up.behave = () => ({
      kind: 'json',
      status: 500,
      body: { error: { message: 'quick failure', type: 'server_error' } },
    });
    const r = await streamTimeline(s.url, c.key, 'ping-model');
    expect(r.status).toBe(500);
    expect(r.contentType).toBe('application/json');
    expect(JSON.parse(r.text).error.message).toMatch(/^quick failure \(request id: /);
    expect(pings(r.text)).toBe(0);
  });

  it('still retries another channel after a ping has sent the headers', async () => {
    await setOptions(s, { RetryTimes: '1' });
    const c = await caller();
    up.behave = () => ({
      kind: 'json',
      status: 500,
      delayMs: 1600,
      body: { error: { message: 'first channel down', type: 'server_error' } },
    });
    backup.behave = () => ({ kind: 'stream', spec: { pieces: [' from', ' backup'] } });
    const r = await streamTimeline(s.url, c.key, 'ping-retry');
    expect(r.status).toBe(200);
    expect(r.text.startsWith(': PING\n\ndata: ')).toBe(true);
    expect(r.text).not.toContain('first channel down');
    expect(r.text).toContain(' backup');
    expect(r.text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(up.requests).toHaveLength(1);
    expect(backup.requests).toHaveLength(1);
    const [l] = await logsOf(s, c.userId);
    expect(l.quota).toBe(18);
    expect((await userRow(s, c.userId)).quota).toBe(START - 18);
  });
});
