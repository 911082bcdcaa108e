// Root's worker (options WorkerUrl and WorkerValidKey, issue 39 point 11): with WorkerUrl set, low-balance webhooks and
// remote images go through it as new-api sends them (POST WorkerUrl/ with JSON {url, key, method?, headers?, body?}),
// and the worker's answer stands for the target's. The SSRF rules hold for what the gateway dials: the worker's own
// address is checked at save and at every connection, and the target is checked before it is handed over.
// Every listener is on 127.0.0.1; the ports that play public hosts are declared so through the client's test-only
// policy (lib/safe-fetch.ts AddressPolicy), names are resolved by a fake resolver.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { userUrlFetch, workerPayload, type Resolver } from '../../src/lib/safe-fetch.js';
import { QuotaNotifier } from '../../src/services/quota-notify.js';
import { remoteImageFetcher } from '../../src/relay/providers/media.js';
import { FormatError } from '../../src/relay/formats/codec.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { setupAndLoginRoot } from '../console/fixtures.js';
import type { ConsoleClient } from '../helpers/console-client.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

/** A TCP listener that counts connections: a refused target must see none. */
async function trap() {
  let connections = 0;
  const server = net.createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return connections;
    },
    close: () => new Promise((r) => server.close(r)),
  };
}

interface WorkerHit {
  method: string;
  path: string;
  contentType: string;
  raw: string;
  json: Record<string, any>;
}

/** A mock worker: records each request; answers an image for a GET it carries, 200 (or `status`) otherwise. */
async function mockWorker() {
  const hits: WorkerHit[] = [];
  let status = 200;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const json = JSON.parse(raw);
      hits.push({
        method: req.method ?? '',
        path: req.url ?? '',
        contentType: String(req.headers['content-type']),
        raw,
        json,
      });
      if (!json.method) return res.writeHead(status, { 'content-type': 'image/png' }).end(PNG);
      res.writeHead(status).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    answer(s: number) {
      status = s;
    },
    close: () => new Promise((r) => server.close(r)),
  };
}

const webhookSetting = (url: string, secret = 'hook-secret') => ({
  notify_type: 'webhook',
  webhook_url: url,
  webhook_secret: secret,
  quota_warning_threshold: 1000,
});

const WORKER_FORBIDDEN = 'Worker 地址不能指向本机、内网或保留地址';
const WORKER_INVALID = 'Worker 地址无效，仅支持 http/https';

describe('root’s worker (WorkerUrl)', () => {
  let s: TestServer;
  let root: ConsoleClient;
  let worker: Awaited<ReturnType<typeof mockWorker>>;
  let target: Awaited<ReturnType<typeof trap>>;
  let userId = 5000;

  const names: Record<string, string[]> = {
    'worker.test': ['127.0.0.1'],
    'hooks.test': ['127.0.0.1'],
    'images.test': ['127.0.0.1'],
    'inside.test': ['10.0.0.7'],
  };
  const resolve: Resolver = async (host) => names[host] ?? [];
  /** the worker and the target both play public hosts: only the worker must be dialled */
  const publicPolicy = () => ({
    resolve,
    treatAsPublic: (address: string, port: number) =>
      address === '127.0.0.1' && (port === worker.port || port === target.port),
  });
  const storedOption = async (key: string) =>
    (await s.ctx.db.selectFrom('options').select('value').where('key', '=', key).executeTakeFirst())?.value;

  beforeAll(async () => {
    [worker, target] = await Promise.all([mockWorker(), trap()]);
    s = await startTestServer();
    root = await setupAndLoginRoot(s);
  });
  afterAll(async () => {
    await s?.close();
    await Promise.all([worker?.close(), target?.close()]);
  });
  afterEach(async () => {
    worker.hits.length = 0;
    worker.answer(200);
    await s.ctx.options.set('WorkerUrl', '');
    await s.ctx.options.set('WorkerValidKey', '');
    await userUrlFetch(s.ctx).close();
  });

  it('carries a webhook as new-api does: POST WorkerUrl/ with {url, key, method, headers, body}', async () => {
    userUrlFetch(s.ctx).policy = publicPolicy();
    for (const [key, value] of [
      ['WorkerUrl', `http://worker.test:${worker.port}`],
      ['WorkerValidKey', 'worker-key'],
    ]) {
      const res = await root.put('/api/option/', { key, value });
      expect(res.body, key).toEqual({ success: true, message: '' });
    }
    const hook = `https://hooks.test:${target.port}/hook?x=1`;
    const notifier = new QuotaNotifier(s.ctx);
    expect(await notifier.check({ id: ++userId, email: '', setting: webhookSetting(hook) }, 1)).toBe('sent');

    expect(target.connections).toBe(0);
    expect(worker.hits).toHaveLength(1);
    const hit = worker.hits[0];
    expect([hit.method, hit.path, hit.contentType]).toEqual(['POST', '/', 'application/json']);
    const notice = notifier.notice(1);
    const body = hit.json.body;
    expect(body).toEqual({ ...notice, timestamp: body.timestamp });
    const bodyText = JSON.stringify(body);
    expect(hit.json).toEqual({
      url: hook,
      key: 'worker-key',
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'X-Webhook-Signature': createHmac('sha256', 'hook-secret').update(bodyText).digest('hex'),
        Authorization: 'Bearer hook-secret',
      },
      body,
    });
    // new-api's field order, the body embedded as JSON (not as a string)
    expect(Object.keys(hit.json)).toEqual(['url', 'key', 'method', 'headers', 'body']);
    expect(hit.raw.endsWith(`,"body":${bodyText}}`)).toBe(true);
  });

  it('takes the worker’s answer for the target’s: an error status fails the delivery', async () => {
    userUrlFetch(s.ctx).policy = publicPolicy();
    await s.ctx.options.set('WorkerUrl', `http://worker.test:${worker.port}/`);
    worker.answer(502);
    const notifier = new QuotaNotifier(s.ctx);
    const hook = `https://hooks.test:${target.port}/hook`;
    expect(await notifier.check({ id: ++userId, email: '', setting: webhookSetting(hook, '') }, 1)).toBe('failed');
    expect(worker.hits).toHaveLength(1);
    // no secret, no signature and no bearer token; the configured trailing slash is not doubled
    expect(worker.hits[0].path).toBe('/');
    expect(worker.hits[0].json.headers).toEqual({ 'content-type': 'application/json' });
    expect(worker.hits[0].json.key).toBe('');
  });

  it('checks the target before handing it to the worker: a private or own address never reaches it', async () => {
    userUrlFetch(s.ctx).policy = {
      ...publicPolicy(),
      // this host's eth0 carries 93.184.216.34
      interfaces: () => ({
        eth0: [
          {
            address: '93.184.216.34',
            netmask: '255.255.255.0',
            family: 'IPv4',
            mac: '02:00:00:00:00:01',
            internal: false,
            cidr: null,
          },
        ],
      }),
    };
    await s.ctx.options.set('WorkerUrl', `http://worker.test:${worker.port}`);
    const notifier = new QuotaNotifier(s.ctx);
    for (const hook of [
      'https://10.0.0.1/hook',
      'https://169.254.169.254/latest/meta-data/',
      'https://inside.test/hook',
      'https://192.0.2.2/hook',
      'https://93.184.216.34/hook',
      'https://[::ffff:93.184.216.34]/hook',
    ])
      expect(await notifier.check({ id: ++userId, email: '', setting: webhookSetting(hook) }, 1), hook).toBe('failed');
    expect(worker.hits).toEqual([]);
  });

  it('is refused on a local, private or reserved address, when saved and at every connection', async () => {
    // without the public declaration, the worker's listener is what it is: loopback
    userUrlFetch(s.ctx).policy = { resolve };
    const before = await storedOption('WorkerUrl');
    for (const value of [
      `http://127.0.0.1:${worker.port}`,
      `http://worker.test:${worker.port}`,
      'http://10.0.0.5/',
      'https://[::1]/',
      'https://198.51.100.7/',
    ]) {
      const res = await root.put('/api/option/', { key: 'WorkerUrl', value });
      expect(res.body, value).toEqual({ success: false, message: WORKER_FORBIDDEN });
    }
    for (const value of ['ftp://worker.example/', 'not a url']) {
      const res = await root.put('/api/option/', { key: 'WorkerUrl', value });
      expect(res.body, value).toEqual({ success: false, message: WORKER_INVALID });
    }
    expect(await storedOption('WorkerUrl')).toBe(before);
    expect(s.ctx.options.get('WorkerUrl')).toBe('');

    // a value stored before this check existed (or by hand) is refused when dialled
    await s.ctx.options.set('WorkerUrl', `http://worker.test:${worker.port}`);
    userUrlFetch(s.ctx).policy = { resolve, treatAsPublic: (a, port) => a === '127.0.0.1' && port === target.port };
    const notifier = new QuotaNotifier(s.ctx);
    const hook = `https://hooks.test:${target.port}/hook`;
    expect(await notifier.check({ id: ++userId, email: '', setting: webhookSetting(hook) }, 1)).toBe('failed');
    await expect(userUrlFetch(s.ctx).get(`https://hooks.test:${target.port}/a.png`, {}, 5000)).rejects.toMatchObject({
      code: 'ERR_FORBIDDEN_ADDRESS',
    });
    expect(worker.hits).toEqual([]);
    expect(target.connections).toBe(0);
  });

  it('carries the remote images the relay inlines: {url, key, headers}, no method, the answer is the image', async () => {
    userUrlFetch(s.ctx).policy = publicPolicy();
    await s.ctx.options.set('WorkerUrl', `http://worker.test:${worker.port}`);
    await s.ctx.options.set('WorkerValidKey', 'worker-key');
    const fetchImage = remoteImageFetcher(userUrlFetch(s.ctx));
    const url = `https://images.test:${target.port}/cat.png`;
    expect(await fetchImage(url)).toEqual({ mimeType: 'image/png', data: PNG.toString('base64') });
    expect(worker.hits.map((h) => h.json)).toEqual([{ url, key: 'worker-key', headers: { accept: 'image/*' } }]);
    expect(target.connections).toBe(0);

    // a private image URL is the client's 400, and the worker never sees it
    await expect(fetchImage('http://inside.test/cat.png')).rejects.toBeInstanceOf(FormatError);
    expect(worker.hits).toHaveLength(1);
  });

  it('is not used when WorkerUrl is empty: the request goes to its target', async () => {
    userUrlFetch(s.ctx).policy = publicPolicy();
    expect(userUrlFetch(s.ctx).usesWorker()).toBe(false);
    const notifier = new QuotaNotifier(s.ctx);
    const hook = `http://hooks.test:${target.port}/hook`;
    expect(await notifier.check({ id: ++userId, email: '', setting: webhookSetting(hook) }, 1)).toBe('failed');
    expect(target.connections).toBe(1);
    expect(worker.hits).toEqual([]);
  });
});

describe('workerPayload', () => {
  it('is new-api’s WorkerRequest: omits an empty method (GET), headers and body; refuses a body that is not JSON', () => {
    expect(workerPayload({ url: 'https://a.example/x', method: 'GET', headers: {} }, 'k')).toBe(
      '{"url":"https://a.example/x","key":"k"}',
    );
    expect(
      workerPayload({ url: 'https://a.example/x', method: 'POST', headers: { a: 'b' }, body: '{"n":1}' }, 'k'),
    ).toBe('{"url":"https://a.example/x","key":"k","method":"POST","headers":{"a":"b"},"body":{"n":1}}');
    expect(() =>
      workerPayload({ url: 'https://a.example/x', method: 'POST', headers: {}, body: 'plain' }, 'k'),
    ).toThrow();
  });
});
