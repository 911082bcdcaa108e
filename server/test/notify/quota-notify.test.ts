// Low-balance notices (new-api-compat.md §5.9, spec §9): threshold, webhook signature, email, and one notice per 2
// hours.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { relayServices } from '../../src/relay/services.js';
import { QuotaNotifier } from '../../src/services/quota-notify.js';
import { userUrlFetch } from '../../src/lib/safe-fetch.js';
import { testAllChannels } from '../../src/relay/channel-probe.js';
import { startFakeSmtp } from '../console/fake-smtp.js';
import { redisAvailable, REDIS_URL } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { addChannel, addToken, addUser, channelsChanged, client, flushLogs, waitFor } from '../relay/fixtures.js';

interface Hit {
  headers: http.IncomingHttpHeaders;
  body: string;
}

async function webhookReceiver() {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      hits.push({ headers: req.headers, body });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/hook`, port, hits, close: () => new Promise((r) => server.close(r)) };
}

const hasRedis = await redisAvailable();

describe('low-quota notices', () => {
  let s: TestServer;
  let hook: Awaited<ReturnType<typeof webhookReceiver>>;
  beforeAll(async () => {
    s = await startTestServer();
    hook = await webhookReceiver();
    // the receiver stands for a public host: webhooks to local addresses are refused (test/notify/ssrf.test.ts)
    userUrlFetch(s.ctx).policy = { treatAsPublic: (address, port) => address === '127.0.0.1' && port === hook.port };
    await s.ctx.options.set('ServerAddress', 'https://gw.example.com/');
  });
  afterAll(async () => {
    await s?.close();
    await hook?.close();
  });

  it('posts a signed webhook once when the balance falls below the user threshold, then waits 2 hours', async () => {
    const notifier = new QuotaNotifier(s.ctx);
    const user = {
      id: 7,
      email: '',
      setting: {
        notify_type: 'webhook',
        webhook_url: hook.url,
        webhook_secret: 's3cret',
        quota_warning_threshold: 500000,
      },
    };
    expect(await notifier.check(user, 500000)).toBe('above');
    expect(hook.hits).toHaveLength(0);
    expect(await notifier.check(user, 250000)).toBe('sent');
    expect(hook.hits).toHaveLength(1);
    const { headers, body } = hook.hits[0];
    expect(headers['x-webhook-signature']).toBe(createHmac('sha256', 's3cret').update(body).digest('hex'));
    const notice = JSON.parse(body);
    expect(notice).toMatchObject({
      type: 'quota_exceed',
      title: '您的额度即将用尽',
      // one value per {{value}} of the content, in order: the balance, the link's address, its text
      content:
        '您的额度即将用尽，当前剩余额度为 {{value}}，为了不影响您的使用，请及时充值。<br/>充值链接：<a href="{{value}}">{{value}}</a>',
      values: ['＄0.50', 'https://gw.example.com/topup', 'https://gw.example.com/topup'],
    });
    expect(typeof notice.timestamp).toBe('number');
    expect(await notifier.check(user, 100000)).toBe('limited');
    expect(hook.hits).toHaveLength(1);
  });

  it('uses the QuotaRemindThreshold option when the user sets none, and emails the notification address', async () => {
    const smtp = await startFakeSmtp();
    try {
      await s.ctx.options.set('SMTPServer', '127.0.0.1');
      await s.ctx.options.set('SMTPPort', String(smtp.port));
      await s.ctx.options.set('SMTPAccount', 'bot@gateway.test');
      await s.ctx.options.set('QuotaRemindThreshold', '1000');
      const notifier = new QuotaNotifier(s.ctx);
      const user = { id: 8, email: 'account@example.com', setting: { notification_email: 'alerts@example.com' } };
      expect(await notifier.check(user, 1000)).toBe('above');
      expect(await notifier.check(user, 999)).toBe('sent');
      expect(smtp.mails).toHaveLength(1);
      expect(smtp.mails[0].to).toEqual(['alerts@example.com']);
      expect(smtp.mails[0].subject).toBe('您的额度即将用尽');
      // every placeholder filled: the link's text is the address, not a literal {{value}}
      expect(smtp.mails[0].body).toContain(
        '当前剩余额度为 ＄0.00，为了不影响您的使用，请及时充值。<br/>充值链接：<a href="https://gw.example.com/topup">https://gw.example.com/topup</a>',
      );
      expect(smtp.mails[0].body).not.toContain('{{value}}');
    } finally {
      await smtp.close();
    }
  });

  // skipped only where no Redis answers: these need a real Redis (CI starts one and fails without it)
  it.skipIf(!hasRedis)('shares the 2-hour limit between nodes through Redis', async () => {
    const a = await startTestServer({ env: { REDIS_CONN_STRING: REDIS_URL } });
    userUrlFetch(a.ctx).policy = userUrlFetch(s.ctx).policy;
    try {
      const b = new QuotaNotifier(a.ctx);
      const c = new QuotaNotifier(a.ctx); // a second notifier stands for a second node on the same Redis
      const user = {
        id: 9,
        email: '',
        setting: { notify_type: 'webhook', webhook_url: hook.url, quota_warning_threshold: 10 },
      };
      const before = hook.hits.length;
      expect(await b.check(user, 1)).toBe('sent');
      expect(await c.check(user, 1)).toBe('limited');
      expect(hook.hits.length).toBe(before + 1);
      expect(hook.hits.at(-1)!.headers['x-webhook-signature']).toBeUndefined();
    } finally {
      await a.close();
    }
  });

  it('tells root by their notice settings when a channel is disabled or enabled automatically, once an hour per change', async () => {
    await addUser(s, { role: 100, setting: JSON.stringify({ notify_type: 'webhook', webhook_url: hook.url }) });
    const id = await addChannel(s, { baseUrl: 'http://127.0.0.1:1', models: ['n-1'], name: 'flaky' });
    const status = relayServices(s.ctx).channelStatus;
    const before = hook.hits.length;
    expect(await status.disable(id, 'Incorrect API key')).toBe(true);
    await waitFor(() => hook.hits.length === before + 1);
    expect(JSON.parse(hook.hits.at(-1)!.body)).toMatchObject({
      type: 'channel_update',
      title: `通道「flaky」（#${id}）已被禁用`,
      content: `通道「flaky」（#${id}）已被禁用，原因：Incorrect API key`,
    });
    expect(await status.enable(id)).toBe(true);
    await waitFor(() => hook.hits.length === before + 2);
    expect(JSON.parse(hook.hits.at(-1)!.body).title).toBe(`通道「flaky」（#${id}）已被启用`);
    // the same change again within the hour: the channel is disabled, root is not told twice
    expect(await status.disable(id, 'again')).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    expect(hook.hits.length).toBe(before + 2);
  });

  it("tells root when a manual test-all is done, and not after the timer's runs", async () => {
    const tests = () => hook.hits.filter((h) => JSON.parse(h.body).type === 'channel_test');
    expect(await testAllChannels(s.ctx, relayServices(s.ctx))).toBe(true);
    await new Promise((r) => setTimeout(r, 200));
    expect(tests()).toHaveLength(0);
    expect(await testAllChannels(s.ctx, relayServices(s.ctx), true)).toBe(true);
    await waitFor(() => tests().length === 1);
    expect(JSON.parse(tests()[0].body)).toMatchObject({
      type: 'channel_test',
      title: '通道测试完成',
      content: '所有通道测试已完成',
    });
  });

  it('is sent by the relay after a charge leaves the user below the threshold', async () => {
    const up = await MockUpstream.start();
    try {
      // gpt-4o-mini: ratio 0.075, completion ratio 4; the mock reports 11 prompt + 7 completion tokens → quota 3
      await addChannel(s, { baseUrl: up.url, models: ['gpt-4o-mini'] });
      await channelsChanged(s);
      const setting = JSON.stringify({ notify_type: 'webhook', webhook_url: hook.url, quota_warning_threshold: 1000 });
      const rich = await addUser(s, { quota: 5000, setting });
      const poor = await addUser(s, { quota: 1002, setting });
      const before = hook.hits.length;
      await client(s, (await addToken(s, rich.id)).key).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
      });
      await client(s, (await addToken(s, poor.id)).key).chat.completions.create({
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: 'hi' }],
      });
      await waitFor(() => hook.hits.length > before);
      await flushLogs(s);
      expect(hook.hits.length).toBe(before + 1);
      expect(JSON.parse(hook.hits.at(-1)!.body).values[0]).toBe('＄0.00'); // 1002 - 3 = 999 quota units
      const row = await s.ctx.db
        .selectFrom('users')
        .select('quota')
        .where('id', '=', poor.id)
        .executeTakeFirstOrThrow();
      expect(row.quota).toBe(999);
    } finally {
      await up.close();
    }
  });
});
