// The relay's upstream calls go through the lean HTTP client (lib/lean-http/client.ts) unless LEAN_HTTP=false, where
// undici makes them: the same requests reach the upstream, and the same answers, streams and charges come back.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { initRelayServices } from '../../src/relay/services.js';
import { addChannel, addToken, addUser, channelsChanged, client, logsOf, setOptions, userRow } from './fixtures.js';

const MODEL = 'mock-chat';

// the client is the same whatever the database: SQLite only
describe('upstream client', () => {
  let up: MockUpstream;
  const servers: TestServer[] = [];

  beforeAll(async () => {
    up = await MockUpstream.start();
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
    await up?.close();
  });

  async function gateway(env: Record<string, string>) {
    const s = await startTestServer({ env });
    servers.push(s);
    await setOptions(s, { ModelRatio: { [MODEL]: 2 }, CompletionRatio: { [MODEL]: 3 }, GroupRatio: { default: 1 } });
    await addChannel(s, { baseUrl: up.url, models: [MODEL], key: 'sk-up-1' });
    await channelsChanged(s);
    const svc = await initRelayServices(s.ctx);
    let lean = 0;
    if (svc.lean) {
      const dispatch = svc.lean.dispatch.bind(svc.lean);
      svc.lean.dispatch = (req, handler) => {
        const taken = dispatch(req, handler);
        if (taken) lean++;
        return taken;
      };
    }
    return { s, leanCalls: () => lean, hasLean: svc.lean !== null };
  }

  /** one JSON chat and one streamed chat; what the upstream received and what the caller got and paid */
  async function exchange(s: TestServer) {
    up.reset();
    const u = await addUser(s, { quota: 1_000_000 });
    const t = await addToken(s, u.id, { unlimited: true });
    const json = await client(s, t.key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
    });
    const stream = await client(s, t.key).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: unknown = null;
    for await (const c of stream) {
      text += c.choices[0]?.delta?.content ?? '';
      if (c.usage) usage = c.usage;
    }
    return {
      upstream: up.requests.map((r) => ({
        path: r.path,
        auth: r.headers.authorization,
        type: r.headers['content-type'],
        body: r.body,
      })),
      json: json.choices[0].message.content,
      text,
      usage,
      quotas: (await logsOf(s, u.id)).map((l) => l.quota),
      user: await userRow(s, u.id),
    };
  }

  it('relays through the lean client by default and through undici with LEAN_HTTP=false, alike', async () => {
    const lean = await gateway({});
    const undici = await gateway({ LEAN_HTTP: 'false' });
    expect(lean.hasLean).toBe(true);
    expect(undici.hasLean).toBe(false);

    const a = await exchange(lean.s);
    expect(lean.leanCalls()).toBe(2);
    const b = await exchange(undici.s);
    expect(a).toEqual(b);
    expect(a.json).toBe('Hello world!');
    expect(a.text).toBe('Hello world!');
    expect(a.upstream).toHaveLength(2);
    expect(a.upstream[0]).toMatchObject({
      path: '/v1/chat/completions',
      auth: 'Bearer sk-up-1',
      type: 'application/json',
    });
    // 11 prompt + 7 completion × 3 = 32 × ratio 2 = 64, twice
    expect(a.quotas).toEqual([64, 64]);
    expect(a.user).toEqual({ quota: 1_000_000 - 128, used_quota: 128, request_count: 2 });
  });
});
