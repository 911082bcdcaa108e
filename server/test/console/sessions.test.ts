// Console sessions live on the server: a cookie copied by an attacker stops working at logout, and every cookie of a
// user stops working after a password change (own, by an admin, by emailed reset), a ban, a role change or a deletion;
// two gateways on one database agree at once. The cookie is Secure over HTTPS (per a trusted proxy) or by setting.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { registerAndLogin, setupAndLoginRoot, userWithRole } from './fixtures.js';
import { PURPOSE_PASSWORD_RESET, registerVerificationCode } from '../../src/services/verification.js';

const NOT_LOGGED_IN = { success: false, message: '无权进行此操作，未登录且未提供 access token' };

await describeEachDb('revocable sessions', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  beforeAll(async () => {
    server = await startTestServer({ kind, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false' } });
    root = await setupAndLoginRoot(server);
  });
  afterAll(async () => server?.close());

  /** A second client holding a copy of the cookie, as an attacker who stole it would. */
  function stolen(c: ConsoleClient, base = server.url): ConsoleClient {
    const copy = new ConsoleClient(base);
    copy.cookie = c.cookie;
    copy.userId = c.userId;
    return copy;
  }

  async function expectRefused(c: ConsoleClient) {
    const res = await c.get('/api/user/self');
    expect(res.status).toBe(401);
    expect(res.body).toEqual(NOT_LOGGED_IN);
  }

  async function expectWorks(c: ConsoleClient, id: number) {
    const res = await c.get('/api/user/self');
    expect(res.body.success, JSON.stringify(res.body)).toBe(true);
    expect(res.body.data.id).toBe(id);
  }

  const sessionRows = async (userId: number) =>
    Number(
      (
        await server.ctx.db
          .selectFrom('sessions')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('user_id', '=', userId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('stores only a hash of the session id, and logout ends the session on the server', async () => {
    const u = await registerAndLogin(server);
    const copy = stolen(u.client);
    await expectWorks(copy, u.id);
    const id = decodeURIComponent(u.client.cookie.slice('session='.length)).split('.')[0];
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const rows = await server.ctx.db.selectFrom('sessions').selectAll().where('user_id', '=', u.id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0].id_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(rows[0].id_hash).not.toContain(id);
    expect(Number(rows[0].expires_at) - Number(rows[0].created_at)).toBe(30 * 24 * 3600);

    expect((await u.client.get('/api/user/logout')).body).toEqual({ success: true, message: '' });
    await expectRefused(copy);
    expect(await sessionRows(u.id)).toBe(0);
  });

  it('a password change ends every session; the console that made it gets a fresh one', async () => {
    const u = await registerAndLogin(server);
    const other = new ConsoleClient(server.url);
    expect((await other.login(u.username, u.password)).body.success).toBe(true);
    const copy = stolen(u.client);
    expect(await sessionRows(u.id)).toBe(2);

    const changed = await u.client.put('/api/user/self', { password: 'newpassword1', original_password: u.password });
    expect(changed.body).toEqual({ success: true, message: '' });
    await expectRefused(copy);
    await expectRefused(other);
    await expectWorks(u.client, u.id);
    expect(await sessionRows(u.id)).toBe(1);
    // a profile edit without a password leaves sessions alone
    expect((await u.client.put('/api/user/self', { display_name: 'renamed' })).body.success).toBe(true);
    await expectWorks(u.client, u.id);
  });

  it('a password set by an admin or by an emailed reset ends every session', async () => {
    const u = await registerAndLogin(server);
    const copy = stolen(u.client);
    expect((await root.put('/api/user/', { id: u.id, password: 'adminset123' })).body).toEqual({
      success: true,
      message: '',
    });
    await expectRefused(copy);
    await expectRefused(u.client);

    // an admin's quota edit does not end sessions
    expect((await u.client.login(u.username, 'adminset123')).body.success).toBe(true);
    expect((await root.put('/api/user/', { id: u.id, quota: 5 })).body.success).toBe(true);
    await expectWorks(u.client, u.id);

    const email = `${u.username}@example.com`;
    await server.ctx.db.updateTable('users').set({ email }).where('id', '=', u.id).execute();
    const copy2 = stolen(u.client);
    await registerVerificationCode(server.ctx, email, 'reset-token-0123456789', PURPOSE_PASSWORD_RESET);
    const reset = await new ConsoleClient(server.url).post('/api/user/reset', {
      email,
      token: 'reset-token-0123456789',
    });
    expect(reset.body.success, JSON.stringify(reset.body)).toBe(true);
    await expectRefused(copy2);
    await expectRefused(u.client);
    expect(await sessionRows(u.id)).toBe(0);
  });

  it('a ban ends every session, and they stay ended after the ban is lifted', async () => {
    const u = await registerAndLogin(server);
    const copy = stolen(u.client);
    expect((await root.post('/api/user/manage', { id: u.id, action: 'disable' })).body.success).toBe(true);
    await expectRefused(copy);
    expect((await root.post('/api/user/manage', { id: u.id, action: 'enable' })).body.success).toBe(true);
    await expectRefused(copy);
    await expectRefused(u.client);
    expect(await sessionRows(u.id)).toBe(0);
  });

  it('a role change ends every session, and a new one carries the current role', async () => {
    const admin = await userWithRole(server, root, 10);
    const copy = stolen(admin.client);
    expect((await copy.get('/api/user/?p=1')).body.success).toBe(true);
    expect((await root.post('/api/user/manage', { id: admin.id, action: 'demote' })).body).toMatchObject({
      success: true,
      data: { role: 1 },
    });
    expect((await copy.get('/api/user/?p=1')).status).toBe(401);
    await expectRefused(admin.client);
    expect((await admin.client.login(admin.username, admin.password)).body.data.role).toBe(1);
    expect((await admin.client.get('/api/user/?p=1')).body).toEqual({
      success: false,
      message: '无权进行此操作，权限不足',
    });

    const user = await registerAndLogin(server);
    const userCopy = stolen(user.client);
    expect((await root.post('/api/user/manage', { id: user.id, action: 'promote' })).body.success).toBe(true);
    await expectRefused(userCopy);
    expect(await sessionRows(user.id)).toBe(0);
  });

  it('deleting a user (by an admin, by themselves, or for good) ends every session', async () => {
    for (const how of ['manage', 'self', 'hard'] as const) {
      const u = await registerAndLogin(server);
      const copy = stolen(u.client);
      if (how === 'manage')
        expect((await root.post('/api/user/manage', { id: u.id, action: 'delete' })).body.success).toBe(true);
      if (how === 'self')
        expect((await u.client.delete('/api/user/self')).body).toEqual({ success: true, message: '' });
      if (how === 'hard') expect((await root.delete(`/api/user/${u.id}`)).body).toEqual({ success: true, message: '' });
      await expectRefused(copy);
      expect(await sessionRows(u.id), how).toBe(0);
    }
  });

  it('refuses a cookie of the former stateless format, though correctly signed', async () => {
    const u = await registerAndLogin(server);
    const now = Math.floor(Date.now() / 1000);
    const payload = Buffer.from(
      JSON.stringify({ id: u.id, username: u.username, role: 100, status: 1, group: 'default', iat: now }),
    ).toString('base64url');
    const forged = new ConsoleClient(server.url);
    forged.cookie = `session=${encodeURIComponent(server.app.signCookie(payload))}`;
    forged.userId = u.id;
    await expectRefused(forged);
  });

  it('removes expired sessions: they log nobody in and are cleared at the next login', async () => {
    const u = await registerAndLogin(server);
    const copy = stolen(u.client);
    await server.ctx.db
      .updateTable('sessions')
      .set({ expires_at: Math.floor(Date.now() / 1000) - 1 })
      .where('user_id', '=', u.id)
      .execute();
    await expectRefused(copy);
    expect(await sessionRows(u.id)).toBe(1);
    await registerAndLogin(server);
    expect(await sessionRows(u.id)).toBe(0);
  });

  it('two gateways on one database: a logout or ban on one ends the session on the other', async () => {
    const other = await startTestServer({
      kind,
      database: server.database,
      env: { CRITICAL_RATE_LIMIT_ENABLE: 'false' },
    });
    try {
      const u = await registerAndLogin(server);
      const onOther = stolen(u.client, other.url);
      await expectWorks(onOther, u.id);
      expect((await onOther.get('/api/user/logout')).body.success).toBe(true);
      await expectRefused(u.client);

      // a session started on the second node, ended by a ban issued through the first
      const v = new ConsoleClient(other.url);
      expect((await v.login(u.username, u.password)).body.success).toBe(true);
      await expectWorks(v, u.id);
      await expectWorks(stolen(v, server.url), u.id);
      expect((await root.post('/api/user/manage', { id: u.id, action: 'disable' })).body.success).toBe(true);
      await expectRefused(v);
    } finally {
      await other.close();
    }
  });
});

await describeEachDb(
  'session cookie Secure attribute',
  () => {
    const cookieOf = (res: Response) => res.headers.getSetCookie().find((c) => c.startsWith('session=')) ?? '';
    const login = (url: string, u: { username: string; password: string }, headers: Record<string, string> = {}) =>
      fetch(url + '/api/user/login', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(u),
      });

    it('is set over HTTPS per a trusted (loopback) proxy or with SESSION_COOKIE_SECURE, never on plain HTTP', async () => {
      const server = await startTestServer({ env: { CRITICAL_RATE_LIMIT_ENABLE: 'false' } });
      try {
        const root = await setupAndLoginRoot(server);
        expect(root.userId).toBeTruthy();
        const cred = { username: 'root', password: 'rootpass123' };
        const plain = cookieOf(await login(server.url, cred));
        expect(plain).toMatch(/HttpOnly/);
        expect(plain).not.toMatch(/;\s*Secure/i);
        const https = cookieOf(await login(server.url, cred, { 'x-forwarded-proto': 'https' }));
        expect(https).toMatch(/;\s*Secure/i);
        expect(https).toMatch(/HttpOnly/);
        expect(https).toMatch(/SameSite=Strict/);
      } finally {
        await server.close();
      }

      // the header from a peer that is not a trusted proxy changes nothing
      const untrusted = await startTestServer({
        env: { CRITICAL_RATE_LIMIT_ENABLE: 'false', TRUSTED_PROXIES: '10.99.0.1' },
      });
      try {
        await setupAndLoginRoot(untrusted);
        const spoofed = cookieOf(
          await login(untrusted.url, { username: 'root', password: 'rootpass123' }, { 'x-forwarded-proto': 'https' }),
        );
        expect(spoofed).toMatch(/^session=/);
        expect(spoofed).not.toMatch(/;\s*Secure/i);
      } finally {
        await untrusted.close();
      }

      const always = await startTestServer({
        env: { CRITICAL_RATE_LIMIT_ENABLE: 'false', SESSION_COOKIE_SECURE: 'true' },
      });
      try {
        await setupAndLoginRoot(always);
        expect(cookieOf(await login(always.url, { username: 'root', password: 'rootpass123' }))).toMatch(/;\s*Secure/i);
      } finally {
        await always.close();
      }
    });
  },
  ['postgres', 'mysql'],
);
