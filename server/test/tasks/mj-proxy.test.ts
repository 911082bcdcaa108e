// Midjourney's upstream calls go through the channel's proxy (`setting.proxy`), as the relay's own calls do: the submit,
// the poller's list-by-condition and the image-seed. A local HTTP proxy counts the bytes it tunnels (CONNECT) or
// forwards (absolute-form), so a call that bypasses it shows as no traffic.
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nowSec } from '../../src/lib/time.js';
import { pollMidjourney } from '../../src/relay/tasks/mj-poll.js';
import { MjProxyMock } from '../helpers/mj-proxy-mock.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { addChannel, addToken, addUser, channelsChanged } from '../relay/fixtures.js';

const SECRET = 'mj-proxied-secret';

describe('midjourney calls through the channel proxy', () => {
  let s: TestServer;
  let mock: MjProxyMock;
  let proxy: http.Server;
  const asked: string[] = [];
  let tunnelled = 0;

  beforeAll(async () => {
    s = await startTestServer();
    mock = await MjProxyMock.start({ secret: SECRET });
    proxy = http.createServer((req, res) => {
      asked.push(`${req.method} ${req.url}`);
      const u = new URL(req.url!);
      const fwd = http.request(
        { host: u.hostname, port: u.port, path: u.pathname + u.search, method: req.method, headers: req.headers },
        (up) => {
          res.writeHead(up.statusCode!, up.headers);
          up.on('data', (d: Buffer) => (tunnelled += d.length));
          up.pipe(res);
        },
      );
      req.pipe(fwd);
    });
    proxy.on('connect', (req, client: net.Socket, head) => {
      asked.push(`CONNECT ${req.url}`);
      const [host, port] = req.url!.split(':');
      const up = net.connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) up.write(head);
        up.on('data', (d: Buffer) => (tunnelled += d.length));
        up.pipe(client);
        client.pipe(up);
      });
      up.on('error', () => client.destroy());
      client.on('error', () => up.destroy());
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    const proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    await addChannel(s, {
      type: 2,
      key: SECRET,
      baseUrl: mock.url,
      models: ['mj_imagine'],
      setting: { proxy: proxyUrl },
    });
    await channelsChanged(s);
  });
  afterAll(async () => {
    await s?.close();
    await mock?.close();
    proxy?.closeAllConnections();
    await new Promise((r) => proxy?.close(r));
  });

  it('the submit, the poll and the image-seed all pass through the proxy', async () => {
    const user = await addUser(s, { quota: 1_000_000 });
    const token = await addToken(s, user.id, { remain: 500_000, unlimited: false });
    const auth = { authorization: `Bearer sk-${token.key}`, 'content-type': 'application/json' };
    const res = await fetch(`${s.url}/mj/submit/imagine`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ prompt: 'through the proxy' }),
    });
    const body = (await res.json()) as { code: number; result: string };
    expect(body.code).toBe(1);
    const mockHost = new URL(mock.url).host;
    expect(asked.some((a) => a === `CONNECT ${mockHost}` || a.includes(`${mockHost}/mj/submit/imagine`))).toBe(true);

    let before = tunnelled;
    mock.advance(body.result);
    await pollMidjourney(s.ctx, nowSec());
    expect(tunnelled).toBeGreaterThan(before);
    const row = await s.ctx.db
      .selectFrom('midjourneys')
      .select('status')
      .where('mj_id', '=', body.result)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('SUBMITTED');

    before = tunnelled;
    const seed = await fetch(`${s.url}/mj/task/${body.result}/image-seed`, { headers: auth });
    expect(await seed.json()).toMatchObject({ code: 1, result: `seed-${body.result}` });
    expect(tunnelled).toBeGreaterThan(before);
  });
});
