// Server-side request forgery through the low-balance webhook: a user's webhook_url must never make the gateway reach
// this host, its network or reserved addresses, by a literal address, a name, a name that changes its answer after the
// save (DNS rebinding) or a redirect. Refused when saved and again when sent. Every listener here is on 127.0.0.1;
// where a test needs an allowed target, one port of it is declared public through the client's test-only policy.
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { lookup } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isForbiddenAddress, SafeFetch, userUrlFetch, type Resolver } from '../../src/lib/safe-fetch.js';
import { QuotaNotifier } from '../../src/services/quota-notify.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { registerAndLogin } from '../console/fixtures.js';
import { addChannel, addToken, addUser, channelsChanged, client, waitFor } from '../relay/fixtures.js';

const REFUSED = 'Webhook地址不能指向本机、内网或保留地址';

/** A TCP listener that counts every connection made to it (a refused target must see none, not even a handshake). */
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

/** An HTTP listener standing for a public webhook receiver; `answer` decides the response. */
async function receiver(answer: (res: http.ServerResponse) => void = (res) => res.end('ok')) {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      hits.push(body);
      answer(res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, hits, close: () => new Promise((r) => server.close(r)) };
}

/** Test names first, then the system resolver (localhost and the like). */
function resolverOf(names: Record<string, string[] | (() => string[])>): Resolver {
  return async (host) => {
    const entry = names[host];
    if (entry) return typeof entry === 'function' ? entry() : entry;
    return (await lookup(host, { all: true })).map((a) => a.address);
  };
}

const webhookSetting = (url: string) => ({
  notify_type: 'webhook',
  webhook_url: url,
  webhook_secret: 's',
  quota_warning_threshold: 1000,
});

describe('forbidden addresses', () => {
  it('refuses loopback, private, link-local, unique-local, multicast, unspecified and IPv4 carried in IPv6', () => {
    const forbidden = [
      '0.0.0.0',
      '0.1.2.3',
      '10.0.0.1',
      '10.255.255.255',
      '100.64.0.1',
      '100.127.255.255',
      '127.0.0.1',
      '127.1.2.3',
      '169.254.169.254',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.0.1',
      '224.0.0.1',
      '239.255.255.250',
      '240.0.0.1',
      '255.255.255.255',
      '::',
      '::1',
      '[::1]',
      'fc00::1',
      'fd12:3456:789a::1',
      'fe80::1',
      'fe80::1%eth0',
      'febf::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      '::ffff:10.0.0.1',
      '::127.0.0.1',
      '::7f00:1',
      '64:ff9b::7f00:1',
      '64:ff9b::10.1.2.3',
      '64:ff9b::a9fe:a9fe',
      '2002:7f00:1::1',
      '2002:c0a8:101::1',
      'localhost',
      'not-an-address',
      '',
    ];
    const allowed = [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.216.34',
      '100.63.255.255',
      '100.128.0.1',
      '172.15.255.255',
      '172.32.0.1',
      '192.167.255.255',
      '223.255.255.255',
      '2606:4700:4700::1111',
      '2001:4860:4860::8888',
      '::ffff:8.8.8.8',
      '::ffff:808:808',
      '64:ff9b::808:808',
      '2002:808:808::1',
    ];
    expect(forbidden.filter((a) => !isForbiddenAddress(a))).toEqual([]);
    expect(allowed.filter((a) => isForbiddenAddress(a))).toEqual([]);
  });
});

describe('webhook URLs chosen by users', () => {
  let s: TestServer;
  let inside: Awaited<ReturnType<typeof trap>>;
  beforeAll(async () => {
    s = await startTestServer();
    inside = await trap();
  });
  afterAll(async () => {
    await s?.close();
    await inside?.close();
  });

  it('are refused when saved if they name or resolve to a local address, and nothing is stored', async () => {
    userUrlFetch(s.ctx).policy = {
      resolve: resolverOf({
        'internal.test': ['127.0.0.1'],
        'metadata.test': ['169.254.169.254'],
        'mixed.test': ['8.8.8.8', '10.0.0.7'],
        'public.test': ['8.8.8.8'],
      }),
    };
    const u = await registerAndLogin(s);
    const saved = async () =>
      (await s.ctx.db.selectFrom('users').select('setting').where('id', '=', u.id).executeTakeFirstOrThrow()).setting;
    const before = await saved();
    const p = inside.port;
    for (const url of [
      `https://127.0.0.1:${p}/hook`,
      `https://localhost:${p}/hook`,
      `https://[::1]:${p}/hook`,
      `https://[::ffff:127.0.0.1]:${p}/hook`,
      `https://0x7f000001:${p}/hook`,
      `https://0.0.0.0:${p}/hook`,
      'https://169.254.169.254/latest/meta-data/',
      'https://10.1.2.3/hook',
      'https://192.168.1.1/hook',
      'https://[fd00::1]/hook',
      `https://internal.test:${p}/hook`,
      'https://metadata.test/hook',
      'https://mixed.test/hook',
    ]) {
      const res = await u.client.put('/api/user/setting', webhookSetting(url));
      expect(res.body, url).toEqual({ success: false, message: REFUSED });
    }
    expect(await saved()).toBe(before);
    const ok = await u.client.put('/api/user/setting', webhookSetting('https://public.test/hook'));
    expect(ok.body).toEqual({ success: true, message: '设置已更新' });
    expect(JSON.parse(await saved()).webhook_url).toBe('https://public.test/hook');
    expect(inside.connections).toBe(0);
  });

  it('are refused again when sent, whether the address is literal, named or a name that changed since the save', async () => {
    let rebindAnswers = 0;
    userUrlFetch(s.ctx).policy = {
      resolve: resolverOf({
        'internal.test': ['127.0.0.1'],
        'mixed.test': ['8.8.8.8', '127.0.0.1'],
        // public while the setting is saved, loopback when the notice goes out
        'rebind.test': () => (++rebindAnswers === 1 ? ['8.8.8.8'] : ['127.0.0.1']),
      }),
    };
    const u = await registerAndLogin(s);
    const rebound = `https://rebind.test:${inside.port}/hook`;
    expect((await u.client.put('/api/user/setting', webhookSetting(rebound))).body.success).toBe(true);
    const stored = JSON.parse(
      (await s.ctx.db.selectFrom('users').select('setting').where('id', '=', u.id).executeTakeFirstOrThrow()).setting,
    );
    const notifier = new QuotaNotifier(s.ctx);
    expect(await notifier.check({ id: u.id, email: '', setting: stored }, 1)).toBe('failed');
    expect(rebindAnswers).toBe(2);

    // settings written before this check existed (or by hand) reach the sender unchecked
    const p = inside.port;
    const urls = [
      `http://127.0.0.1:${p}/hook`,
      `https://127.0.0.1:${p}/hook`,
      `http://localhost:${p}/hook`,
      `http://[::ffff:7f00:1]:${p}/hook`,
      `http://internal.test:${p}/hook`,
      `http://mixed.test:${p}/hook`,
    ];
    let id = 1000;
    for (const url of urls) {
      await expect(userUrlFetch(s.ctx).post(url, {}, '{}', 5000), url).rejects.toMatchObject({
        code: 'ERR_FORBIDDEN_ADDRESS',
      });
      expect(await notifier.check({ id: ++id, email: '', setting: webhookSetting(url) }, 1), url).toBe('failed');
    }
    expect(inside.connections).toBe(0);
  });

  it('are refused when saved if they name a documentation, benchmarking or other special-purpose address', async () => {
    userUrlFetch(s.ctx).policy = { resolve: resolverOf({ 'testnet.test': ['198.51.100.7'] }) };
    const u = await registerAndLogin(s);
    for (const url of [
      'https://192.0.2.2/hook',
      'https://198.51.100.7/hook',
      'https://203.0.113.9/hook',
      'https://198.18.0.1/hook',
      'https://192.88.99.1/hook',
      'https://[2001:db8::1]/hook',
      'https://[3fff::1]/hook',
      'https://[2001::1]/hook',
      'https://[64:ff9b::c000:202]/hook',
      'https://testnet.test/hook',
    ]) {
      const res = await u.client.put('/api/user/setting', webhookSetting(url));
      expect(res.body, url).toEqual({ success: false, message: REFUSED });
    }
  });

  it("are refused, when saved and when sent, if they reach one of this host's own interface addresses", async () => {
    // The listener on 127.0.0.1 plays a service on the gateway's own public address: the test-only policy declares its
    // port public (so the range rules let it through) and puts 127.0.0.1 on a non-loopback interface of this host.
    const own = await receiver();
    const ownInterfaces = () => ({
      eth0: [
        {
          address: '127.0.0.1',
          netmask: '255.255.255.0',
          family: 'IPv4' as const,
          mac: '02:00:00:00:00:01',
          internal: false,
          cidr: '127.0.0.1/24',
        },
      ],
    });
    userUrlFetch(s.ctx).policy = {
      resolve: resolverOf({ 'gateway.test': ['127.0.0.1'] }),
      treatAsPublic: (address, port) => address === '127.0.0.1' && port === own.port,
      interfaces: ownInterfaces,
    };
    try {
      const u = await registerAndLogin(s);
      for (const url of [`https://gateway.test:${own.port}/hook`, `https://127.0.0.1:${own.port}/hook`]) {
        const res = await u.client.put('/api/user/setting', webhookSetting(url));
        expect(res.body, url).toEqual({ success: false, message: REFUSED });
      }
      const notifier = new QuotaNotifier(s.ctx);
      let id = 3000;
      for (const url of [`http://gateway.test:${own.port}/hook`, `http://[::ffff:127.0.0.1]:${own.port}/hook`])
        expect(await notifier.check({ id: ++id, email: '', setting: webhookSetting(url) }, 1), url).toBe('failed');
      expect(own.hits).toEqual([]);
      // the same listener, once it is not this host's, is reached: the refusal above was the host rule's
      userUrlFetch(s.ctx).policy = { ...userUrlFetch(s.ctx).policy, interfaces: () => ({}) };
      expect(
        await notifier.check(
          { id: 3100, email: '', setting: webhookSetting(`http://gateway.test:${own.port}/hook`) },
          1,
        ),
      ).toBe('sent');
      expect(own.hits).toHaveLength(1);
    } finally {
      await own.close();
      await userUrlFetch(s.ctx).close();
    }
  });

  it('are sent to a public address, resolved once, and a redirect from there to a local address is not followed', async () => {
    const redirecting = await receiver((res) => {
      res.writeHead(302, { location: `http://127.0.0.1:${inside.port}/hook` });
      res.end();
    });
    const fine = await receiver();
    let answers = 0;
    const publicPorts = new Set([redirecting.port, fine.port]);
    userUrlFetch(s.ctx).policy = {
      resolve: resolverOf({ 'hooks.test': () => (answers++, ['127.0.0.1']) }),
      treatAsPublic: (address, port) => address === '127.0.0.1' && publicPorts.has(port),
    };
    try {
      const notifier = new QuotaNotifier(s.ctx);
      // a name only the test resolver knows: reaching the listener proves the socket went to the checked answer
      expect(
        await notifier.check(
          { id: 2001, email: '', setting: webhookSetting(`http://hooks.test:${fine.port}/hook`) },
          1,
        ),
      ).toBe('sent');
      expect(fine.hits).toHaveLength(1);
      expect(answers).toBe(1);
      expect(
        await notifier.check(
          { id: 2002, email: '', setting: webhookSetting(`http://127.0.0.1:${redirecting.port}/hook`) },
          1,
        ),
      ).toBe('failed');
      expect(redirecting.hits).toHaveLength(1);
      await new Promise((r) => setTimeout(r, 200));
      expect(inside.connections).toBe(0);
    } finally {
      await redirecting.close();
      await fine.close();
      await userUrlFetch(s.ctx).close();
    }
  });

  it('are checked for the notices the relay sends after a charge', async () => {
    const fine = await receiver();
    userUrlFetch(s.ctx).policy = { treatAsPublic: (address, port) => address === '127.0.0.1' && port === fine.port };
    const up = await MockUpstream.start();
    try {
      await addChannel(s, { baseUrl: up.url, models: ['gpt-4o-mini'] });
      await channelsChanged(s);
      // both fall below their threshold with this request; one notice may go out, the other must not
      const allowed = await addUser(s, {
        quota: 1002,
        setting: JSON.stringify(webhookSetting(`http://127.0.0.1:${fine.port}/hook`)),
      });
      const local = await addUser(s, {
        quota: 1002,
        setting: JSON.stringify(webhookSetting(`http://127.0.0.1:${inside.port}/hook`)),
      });
      for (const user of [local, allowed]) {
        await client(s, (await addToken(s, user.id)).key).chat.completions.create({
          model: 'gpt-4o-mini',
          messages: [{ role: 'user', content: 'hi' }],
        });
      }
      await waitFor(() => fine.hits.length === 1);
      await new Promise((r) => setTimeout(r, 300));
      expect(inside.connections).toBe(0);
    } finally {
      await up.close();
      await fine.close();
    }
  });
});

describe('SafeFetch', () => {
  it('keeps its check when no policy is given: loopback is refused without a connection', async () => {
    const t = await trap();
    const f = new SafeFetch();
    try {
      await expect(f.post(`http://127.0.0.1:${t.port}/`, {}, '', 5000)).rejects.toMatchObject({
        code: 'ERR_FORBIDDEN_ADDRESS',
      });
      await expect(f.post(`http://localhost:${t.port}/`, {}, '', 5000)).rejects.toMatchObject({
        code: 'ERR_FORBIDDEN_ADDRESS',
      });
      expect(await f.check(`https://127.0.0.1:${t.port}/`)).toBe('forbidden');
      expect(await f.check('ftp://8.8.8.8/')).toBe('invalid');
      expect(t.connections).toBe(0);
    } finally {
      await f.close();
      await t.close();
    }
  });

  it('gives up on a name whose resolution hangs: the save keeps it as unresolved, a delivery fails', async () => {
    const f = new SafeFetch({ resolve: () => new Promise<string[]>(() => undefined) });
    try {
      const started = Date.now();
      expect(await f.check('https://stuck.test/hook')).toBe('unresolved');
      await expect(f.post('http://stuck.test/hook', {}, '', 30_000)).rejects.toThrow(/timed out/);
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      await f.close();
    }
  }, 30_000);
});
