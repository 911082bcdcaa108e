// With Turnstile on, login, register, email verification and password reset need the widget's token in the
// `turnstile` query parameter, checked against the siteverify endpoint (here a local fake that accepts each token it
// issued once, as Cloudflare does). Nothing leaves 127.0.0.1.
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { ROOT, setOption, setupAndLoginRoot, uname } from './fixtures.js';

await describeEachDb(
  'Turnstile on the public console routes',
  (kind) => {
    let server: TestServer;
    let root: ConsoleClient;
    let verifier: http.Server;
    const checks: URLSearchParams[] = [];
    const issued = new Set<string>();

    beforeAll(async () => {
      verifier = http.createServer((req, res) => {
        let raw = '';
        req.on('data', (c) => (raw += c));
        req.on('end', () => {
          const form = new URLSearchParams(raw);
          checks.push(form);
          const token = form.get('response') ?? '';
          const success = form.get('secret') === 'secret-key-1' && issued.delete(token);
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ success }));
        });
      });
      await new Promise<void>((r) => verifier.listen(0, '127.0.0.1', () => r()));
      server = await startTestServer({ kind, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false' } });
      server.ctx.turnstileVerifyUrl = `http://127.0.0.1:${(verifier.address() as AddressInfo).port}/turnstile/v0/siteverify`;
      root = await setupAndLoginRoot(server);
      await setOption(root, 'TurnstileSiteKey', 'site-key-1');
      await setOption(root, 'TurnstileSecretKey', 'secret-key-1');
      await setOption(root, 'TurnstileCheckEnabled', true);
    });
    afterAll(async () => {
      await server?.close();
      await new Promise((r) => verifier?.close(r));
    });

    const token = () => {
      const t = `tok-${Math.random().toString(36).slice(2)}`;
      issued.add(t);
      return t;
    };

    it('advertises the site key, refuses calls without a valid token and accepts each issued token once', async () => {
      const status = (await new ConsoleClient(server.url).get('/api/status')).body.data;
      expect(status).toMatchObject({ turnstile_check: true, turnstile_site_key: 'site-key-1' });

      const c = new ConsoleClient(server.url);
      const creds = { username: ROOT.username, password: ROOT.password };
      expect((await c.post('/api/user/login', creds)).body).toEqual({
        success: false,
        message: 'Turnstile token 为空',
      });
      expect((await c.post('/api/user/login?turnstile=forged', creds)).body).toEqual({
        success: false,
        message: 'Turnstile 校验失败，请刷新重试！',
      });
      const good = token();
      const ok = await c.post(`/api/user/login?turnstile=${good}`, creds);
      expect(ok.body).toMatchObject({ success: true, data: { username: 'root' } });
      expect(checks.at(-1)!.get('remoteip')).toBe('127.0.0.1');
      // single-use: the same token again is refused
      expect((await c.post(`/api/user/login?turnstile=${good}`, creds)).body.success).toBe(false);

      const username = uname('ts');
      const reg = await c.post(`/api/user/register?turnstile=${token()}`, {
        username,
        password: 'password123',
        password2: 'password123',
      });
      expect(reg.body, JSON.stringify(reg.body)).toMatchObject({ success: true });
      expect(
        (await c.post('/api/user/register', { username: uname('ts'), password: 'password123' })).body.message,
      ).toBe('Turnstile token 为空');

      // the verification and reset routes pass the check and go on to their own checks (no SMTP configured here)
      const reset = await c.get(`/api/reset_password?email=a%40example.com&turnstile=${token()}`);
      expect(reset.body).toEqual({ success: false, message: 'SMTP 服务器未配置' });
      expect((await c.get('/api/reset_password?email=a%40example.com')).body.message).toBe('Turnstile token 为空');
      const verify = await c.get(`/api/verification?email=not-an-email&turnstile=${token()}`);
      expect(verify.body.success).toBe(false);
      expect(verify.body.message).not.toMatch(/Turnstile/);
    });

    it('asks a browser once per session: the pass is remembered in a signed cookie for hours, not forever', async () => {
      const c = new ConsoleClient(server.url);
      const creds = { username: ROOT.username, password: ROOT.password };
      const first = await c.post(`/api/user/login?turnstile=${token()}`, creds);
      expect(first.body.success).toBe(true);
      const pass = (first.headers.getSetCookie?.() ?? []).find((h) => h.startsWith('turnstile='));
      expect(pass).toMatch(/HttpOnly/i);
      const passCookie = pass!.split(';')[0];
      const withPass = (extra: string) => [c.cookie, extra].filter(Boolean).join('; ');

      // the same browser goes on without a token, and siteverify is not asked again
      const checked = checks.length;
      const again = await fetch(`${server.url}/api/user/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: withPass(passCookie) },
        body: JSON.stringify(creds),
      });
      expect(await again.json()).toMatchObject({ success: true, data: { username: 'root' } });
      const reset = await fetch(`${server.url}/api/reset_password?email=a%40example.com`, {
        headers: { cookie: passCookie },
      });
      expect(await reset.json()).toEqual({ success: false, message: 'SMTP 服务器未配置' });
      expect(checks.length).toBe(checked);

      // a cookie the server did not sign is no pass
      const forged = await fetch(`${server.url}/api/user/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: 'turnstile=1700000000' },
        body: JSON.stringify(creds),
      });
      expect(await forged.json()).toEqual({ success: false, message: 'Turnstile token 为空' });

      // half a day later the pass has run out
      vi.useFakeTimers({ toFake: ['Date'] });
      try {
        vi.setSystemTime(Date.now() + 13 * 3600 * 1000);
        const stale = await fetch(`${server.url}/api/reset_password?email=a%40example.com`, {
          headers: { cookie: passCookie },
        });
        expect(await stale.json()).toEqual({ success: false, message: 'Turnstile token 为空' });
      } finally {
        vi.useRealTimers();
      }
    });
  },
  ['postgres', 'mysql'],
);
