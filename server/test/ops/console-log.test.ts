// Structured JSON logs of the console API: every line written while serving an /api request carries that request's
// id (the answer's X-Oneapi-Request-Id), a service's line included (here: the Turnstile check failing to reach its
// verifier), and each request ends with one `console request` access line without query strings, headers or bodies;
// CONSOLE_ACCESS_LOG=false turns the access line off.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { capturedLogger } from '../helpers/captured-log.js';
import { describeEachDb, type TestDbKind } from '../helpers/databases.js';
import { startTestServer } from '../helpers/server.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { ROOT, setOption, setupAndLoginRoot } from '../console/fixtures.js';

async function serverWith(kind: TestDbKind, env: Record<string, string>) {
  const cap = capturedLogger();
  const s = await startTestServer({ kind, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false', ...env }, logger: cap.logger });
  // nothing listens there: the Turnstile check fails with a connection error, which the service logs
  s.ctx.turnstileVerifyUrl = 'http://127.0.0.1:9/turnstile/v0/siteverify';
  const root = await setupAndLoginRoot(s);
  await setOption(root, 'TurnstileSiteKey', 'site-key-1');
  await setOption(root, 'TurnstileSecretKey', 'secret-key-1');
  await setOption(root, 'TurnstileCheckEnabled', true);
  return { s, root, lines: cap.lines };
}

await describeEachDb(
  'console logs',
  (kind) => {
    let on: Awaited<ReturnType<typeof serverWith>>;
    let off: Awaited<ReturnType<typeof serverWith>>;
    beforeAll(async () => {
      on = await serverWith(kind, {});
      off = await serverWith(kind, { CONSOLE_ACCESS_LOG: 'false' });
    });
    afterAll(async () => {
      for (const x of [on, off]) await x?.s.close();
    });

    const turnstileRefusal = (base: string) =>
      new ConsoleClient(base).get('/api/verification?email=a%40example.com&turnstile=query-secret-123');

    it("puts the request's id on the service's error line and on the access line, as in the answer's header", async () => {
      const res = await turnstileRefusal(on.s.url);
      expect(res.body).toEqual({ success: false, message: 'Turnstile 校验失败，请刷新重试！' });
      const reqId = res.headers.get('x-oneapi-request-id');
      expect(reqId).toMatch(/^\d{14}\d{9}[A-Za-z0-9]{8}$/);

      const mine = on.lines.filter((l) => l.reqId === reqId);
      expect(mine.map((l) => l.msg)).toEqual(['turnstile verification failed', 'console request']);
      expect(mine[0]).toMatchObject({ level: 40, err: { message: expect.any(String) } });
      expect(mine[1]).toMatchObject({ level: 30, method: 'GET', url: '/api/verification', status: 200 });
      expect(mine[1].ms).toBeGreaterThanOrEqual(0);
      // no line about the check without the id
      expect(on.lines.filter((l) => l.msg === 'turnstile verification failed' && !l.reqId)).toEqual([]);
      // the query string (which may carry codes and keys) is never written
      expect(JSON.stringify(on.lines)).not.toContain('query-secret-123');
    });

    it('names the signed-in user and writes no password, cookie or access token', async () => {
      const res = await on.root.get('/api/user/self');
      expect(res.body.success).toBe(true);
      const line = on.lines.find((l) => l.reqId === res.headers.get('x-oneapi-request-id'));
      expect(line).toMatchObject({
        msg: 'console request',
        url: '/api/user/self',
        status: 200,
        userId: on.root.userId,
      });

      const token = (await on.root.get('/api/user/token')).body.data as string;
      const viaToken = new ConsoleClient(on.s.url);
      viaToken.accessToken = token;
      viaToken.userId = on.root.userId;
      expect((await viaToken.get('/api/user/self')).body.success).toBe(true);

      const written = JSON.stringify(on.lines);
      expect(written).not.toContain(ROOT.password);
      expect(written).not.toContain(on.root.cookie.split('=')[1]);
      expect(written).not.toContain(token);
    });

    it('writes one access line per console request, and none for relay requests', async () => {
      const before = on.lines.filter((l) => l.msg === 'console request').length;
      const status = await new ConsoleClient(on.s.url).get('/api/status');
      expect(status.status).toBe(200);
      const relay = await fetch(`${on.s.url}/v1/models`, { headers: { authorization: 'Bearer sk-nope' } });
      expect(relay.status).toBe(401);
      const relayId = relay.headers.get('x-oneapi-request-id');
      expect(relayId).toBeTruthy();
      expect(on.lines.filter((l) => l.msg === 'console request').length).toBe(before + 1);
      expect(on.lines.filter((l) => l.reqId === relayId && l.msg === 'console request')).toEqual([]);
    });

    it('writes no access line with CONSOLE_ACCESS_LOG=false, and keeps the id on the other lines', async () => {
      const res = await turnstileRefusal(off.s.url);
      const reqId = res.headers.get('x-oneapi-request-id');
      expect(reqId).toBeTruthy();
      expect(off.lines.filter((l) => l.msg === 'console request')).toEqual([]);
      expect(off.lines.filter((l) => l.reqId === reqId).map((l) => l.msg)).toEqual(['turnstile verification failed']);
    });
  },
  ['postgres', 'mysql'],
);
