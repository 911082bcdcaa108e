// The channel probes (test, balance, model list) go out as the relay's own calls do: through the channel's proxy
// (`setting.proxy`) and with the adaptor's conversions (Azure's deployment path, api-version and api-key header, the
// channel's model mapping). A local HTTP proxy records what it is asked to reach: CONNECT tunnels and absolute-form
// requests alike.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addUser, channelsChanged, setOptions } from '../relay/fixtures.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** the request came over a connection the proxy opened */
  viaProxy: boolean;
}

const CHAT = {
  id: 'c',
  object: 'chat.completion',
  created: 1,
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
};

async function listen(server: http.Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('channel probes through the channel proxy', () => {
  let s: TestServer;
  let upstream: http.Server;
  let proxy: http.Server;
  let upHost: string;
  const reached: Seen[] = [];
  /** what the proxy was asked: `CONNECT host:port` or `METHOD absolute-url` */
  const proxied: string[] = [];
  /** local ports of the proxy's connections to the upstream */
  const proxyPorts = new Set<number>();
  let admin: Record<string, string>;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    s = await startTestServer();
    upstream = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        reached.push({
          method: req.method!,
          url: req.url!,
          headers: req.headers,
          body,
          viaProxy: proxyPorts.has(req.socket.remotePort!),
        });
        res.setHeader('content-type', 'application/json');
        if (req.url === '/v1/models') return res.end(JSON.stringify({ object: 'list', data: [{ id: 'via-proxy' }] }));
        if (req.url === '/v1/dashboard/billing/subscription')
          return res.end(JSON.stringify({ hard_limit_usd: 12, has_payment_method: true }));
        if (req.url?.startsWith('/v1/dashboard/billing/usage')) return res.end(JSON.stringify({ total_usage: 200 }));
        res.end(JSON.stringify(CHAT));
      });
    });
    upHost = await listen(upstream);
    proxy = http.createServer((req, res) => {
      // absolute-form: forwarded as asked
      proxied.push(`${req.method} ${req.url}`);
      const u = new URL(req.url!);
      const fwd = http.request(
        {
          host: u.hostname,
          port: u.port,
          path: u.pathname + u.search,
          method: req.method,
          headers: req.headers,
          agent: false,
        },
        (r) => {
          res.writeHead(r.statusCode!, r.headers);
          r.pipe(res);
        },
      );
      fwd.on('socket', (sock) => sock.on('connect', () => proxyPorts.add(sock.localPort!)));
      fwd.on('error', () => res.destroy());
      req.pipe(fwd);
    });
    proxy.on('connect', (req, socket, head) => {
      proxied.push(`CONNECT ${req.url}`);
      const [host, port] = String(req.url).split(':');
      const to = net.connect(Number(port), host, () => {
        proxyPorts.add(to.localPort!);
        socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        to.write(head);
        to.pipe(socket);
        socket.pipe(to);
      });
      to.on('error', () => socket.destroy());
      socket.on('error', () => to.destroy());
    });
    const proxyUrl = `http://${await listen(proxy)}`;
    await setOptions(s, { ModelRatio: { 'gpt-4.1': 1, 'probe-m': 1 } });
    ids.azure = await addChannel(s, {
      type: 3,
      baseUrl: `http://${upHost}`,
      key: 'azure-key',
      models: ['gpt-4.1'],
      other: '2024-10-21',
      modelMapping: { 'gpt-4.1': 'gpt-4.1-deploy' },
      setting: { proxy: proxyUrl },
    });
    ids.openai = await addChannel(s, {
      baseUrl: `http://${upHost}`,
      key: 'sk-proxied',
      models: ['probe-m'],
      setting: { proxy: proxyUrl },
    });
    await channelsChanged(s);
    const root = await addUser(s, { role: 100, username: 'proxyroot' });
    await s.ctx.db.updateTable('users').set({ access_token: 'proxy-admin-token' }).where('id', '=', root.id).execute();
    admin = { authorization: 'proxy-admin-token', 'new-api-user': String(root.id) };
  });
  afterAll(async () => {
    await s?.close();
    proxy?.closeAllConnections();
    upstream?.closeAllConnections();
    await new Promise((r) => proxy?.close(r));
    await new Promise((r) => upstream?.close(r));
  });

  const get = async (path: string) => (await fetch(`${s.url}${path}`, { headers: admin })).json() as Promise<any>;
  /** the proxy was asked for the upstream (a tunnel to it, or an absolute URL on it) */
  const askedProxy = () => proxied.some((p) => p === `CONNECT ${upHost}` || p.includes(`//${upHost}/`));

  it('tests a channel through its proxy, with the adaptor building the request (Azure path, key header, mapping)', async () => {
    reached.length = 0;
    const r = await get(`/api/channel/test/${ids.azure}`);
    expect(r.success).toBe(true);
    expect(askedProxy()).toBe(true);
    expect(reached).toHaveLength(1);
    expect(reached[0].viaProxy).toBe(true);
    expect(reached[0].method).toBe('POST');
    expect(reached[0].url).toBe('/openai/deployments/gpt-41-deploy/chat/completions?api-version=2024-10-21');
    expect(reached[0].headers['api-key']).toBe('azure-key');
    expect(reached[0].headers.authorization).toBeUndefined();
    expect(JSON.parse(reached[0].body)).toMatchObject({
      model: 'gpt-4.1-deploy',
      messages: [{ role: 'user', content: 'hi' }],
    });
  });

  it('updates a balance through the channel proxy', async () => {
    reached.length = 0;
    expect(await get(`/api/channel/update_balance/${ids.openai}`)).toMatchObject({ success: true, balance: 10 });
    expect(reached.every((x) => x.viaProxy)).toBe(true);
    expect(reached.map((x) => x.url.split('?')[0])).toEqual([
      '/v1/dashboard/billing/subscription',
      '/v1/dashboard/billing/usage',
    ]);
    expect(reached.every((x) => x.headers.authorization === 'Bearer sk-proxied')).toBe(true);
  });

  it("lists a stored channel's models through its proxy", async () => {
    reached.length = 0;
    expect(await get(`/api/channel/fetch_models/${ids.openai}`)).toEqual({
      success: true,
      message: '',
      data: ['via-proxy'],
    });
    expect(reached.every((x) => x.viaProxy)).toBe(true);
    expect(reached.map((x) => x.url)).toEqual(['/v1/models']);
  });
});
