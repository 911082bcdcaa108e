// Admin probes (channel test, balance, model list) and the relay reach private addresses (operators run Ollama and
// proxies there), but a channel's key goes only to that channel's own base URL: a redirect to another host is not
// followed, and the model-list route that takes a base URL from the admin never borrows a stored channel's key.
// Two listeners on 127.0.0.1: the channel's upstream and "elsewhere", which must see no request at all.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, channelsChanged, relayPost, setOptions } from '../relay/fixtures.js';

const KEY = 'sk-channel-secret-0123456789';

interface Seen {
  path: string;
  authorization: string | undefined;
}

async function listener(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const seen: Seen[] = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization });
      answer(req, res);
    });
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    get connections() {
      return connections;
    },
    close: () => new Promise((r) => server.close(r)),
  };
}

describe('channel keys stay with their channel', () => {
  let s: TestServer;
  let elsewhere: Awaited<ReturnType<typeof listener>>;
  let channelHost: Awaited<ReturnType<typeof listener>>;
  let admin: Record<string, string>;
  let channelId: number;
  let userKey: string;

  beforeAll(async () => {
    s = await startTestServer();
    elsewhere = await listener((_req, res) => res.end(JSON.stringify({ data: [{ id: 'stolen' }], hard_limit_usd: 1 })));
    // the channel's upstream lists its models, and sends everything else to the other host
    channelHost = await listener((req, res) => {
      if (req.url === '/v1/models') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'local-a' }, { id: 'local-b' }] }));
        return;
      }
      res.writeHead(302, { location: `${elsewhere.url}${req.url}` });
      res.end();
    });
    await setOptions(s, { ModelRatio: { 'probe-m': 1 } });
    channelId = await addChannel(s, { baseUrl: channelHost.url, key: KEY, models: ['probe-m'] });
    await channelsChanged(s);
    const root = await addUser(s, { role: 100, username: 'rootprobe' });
    await s.ctx.db.updateTable('users').set({ access_token: 'probe-admin-token' }).where('id', '=', root.id).execute();
    admin = { authorization: 'probe-admin-token', 'new-api-user': String(root.id), 'content-type': 'application/json' };
    const u = await addUser(s, { quota: 10_000_000 });
    userKey = (await addToken(s, u.id)).key;
  });
  afterAll(async () => {
    await s?.close();
    await elsewhere?.close();
    await channelHost?.close();
  });

  const get = async (path: string) => (await fetch(`${s.url}${path}`, { headers: admin })).json() as Promise<any>;

  it('lists the models of a channel on a private address, with its key', async () => {
    expect(await get(`/api/channel/fetch_models/${channelId}`)).toEqual({
      success: true,
      message: '',
      data: ['local-a', 'local-b'],
    });
    expect(channelHost.seen.at(-1)).toEqual({ path: '/v1/models', authorization: `Bearer ${KEY}` });
  });

  it('does not follow a redirect to another host from a channel test, a balance update or a relayed request', async () => {
    const seenBefore = channelHost.seen.length;
    const test = await get(`/api/channel/test/${channelId}`);
    expect(test.success).toBe(false);
    const balance = await get(`/api/channel/update_balance/${channelId}`);
    expect(balance).toEqual({ success: false, message: 'status code: 302' });
    const relayed = await relayPost(s, '/v1/chat/completions', userKey, {
      model: 'probe-m',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(relayed.status).not.toBe(200);
    await relayed.text();
    // each call reached the channel's host with the key, and went no further
    const paths = channelHost.seen.slice(seenBefore).map((x) => x.path);
    expect(paths).toContain('/v1/chat/completions');
    expect(paths).toContain('/v1/dashboard/billing/subscription');
    expect(channelHost.seen.slice(seenBefore).every((x) => x.authorization === `Bearer ${KEY}`)).toBe(true);
    expect(elsewhere.connections).toBe(0);
  });

  it('does not send a stored channel key to a base URL the admin types into the model-list form', async () => {
    for (const body of [
      { base_url: elsewhere.url, type: 1 },
      { base_url: elsewhere.url, type: 1, id: channelId },
      { base_url: elsewhere.url, type: 1, channel_id: channelId, key: '' },
    ]) {
      const r = await fetch(`${s.url}/api/channel/fetch_models`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify(body),
      });
      expect(r.status).toBe(400);
      expect(await r.json()).toEqual({ success: false, message: 'key 不能为空' });
    }
    expect(elsewhere.connections).toBe(0);
    // the key the admin typed goes where the admin sent it (a private address too)
    const own = await fetch(`${s.url}/api/channel/fetch_models`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ base_url: elsewhere.url, type: 1, key: 'typed-key' }),
    });
    expect(((await own.json()) as any).data).toEqual(['stolen']);
    expect(elsewhere.seen).toEqual([{ path: '/v1/models', authorization: 'Bearer typed-key' }]);
  });
});
