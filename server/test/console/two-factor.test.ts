// TOTP two-factor sign-in (new-api-compat.md §9.7) over HTTP on every database: enrolment, the second login step,
// replay and lockout, backup codes, disabling, the admin reset, and a login whose two steps reach two different nodes.
// The clock is fixed (only Date is faked; timers run) so that the codes computed here are the server's codes.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generate } from 'otplib';
import { describeEachDb, REDIS_URL, redisAvailable, uniqueName } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient, type ApiResponse } from '../helpers/console-client.js';
import { registerAndLogin, setupAndLoginRoot, userWithRole } from './fixtures.js';

const WRONG = { success: false, message: '验证码或备用码错误，请重试' };
const EXPIRED = { success: false, message: '会话已过期，请重新登录' };
const PERIOD_MS = 30_000;
const LOCK_MS = 5 * 60_000 + 1000;

/** A fixed clock 1 s into a TOTP period, moved only by the tests. */
function fixClock(): { advance(ms: number): void } {
  let now = Math.ceil(Date.now() / PERIOD_MS) * PERIOD_MS + 1000;
  vi.useFakeTimers({ toFake: ['Date'], now });
  return {
    advance(ms) {
      now += ms;
      vi.setSystemTime(now);
    },
  };
}

const totp = (secret: string) => generate({ secret, epoch: Math.floor(Date.now() / 1000) });
const cookiesOf = (res: ApiResponse) => res.headers.getSetCookie?.() ?? [];
const pendingCookie = (res: ApiResponse) =>
  cookiesOf(res)
    .find((h) => h.startsWith('twofa_login='))
    ?.split(';')[0] ?? '';

interface Person {
  client: ConsoleClient;
  id: number;
  username: string;
  password: string;
}

/** The password step: no session, a pending login in the cookie it returns. */
async function passwordStep(server: TestServer, u: Person): Promise<{ browser: ConsoleClient; pending: string }> {
  const browser = new ConsoleClient(server.url);
  const res = await browser.post('/api/user/login', { username: u.username, password: u.password });
  expect(res.body).toMatchObject({ success: true, message: '请输入两步验证码', data: { require_2fa: true } });
  expect(res.body.data.expires_at).toBe(Math.floor(Date.now() / 1000) + 300);
  expect(cookiesOf(res).some((h) => h.startsWith('session='))).toBe(false);
  expect(browser.cookie).toBe('');
  const pending = pendingCookie(res);
  expect(pending).toMatch(/^twofa_login=.+/);
  expect(cookiesOf(res).find((h) => h.startsWith('twofa_login='))).toMatch(/HttpOnly/i);
  return { browser, pending };
}

/** The code step, the browser bringing its pending-login cookie (and whatever session cookie it has). */
async function codeStep(browser: ConsoleClient, pending: string, code: string, base = browser.base) {
  const c = new ConsoleClient(base);
  c.cookie = pending;
  const res = await c.post('/api/user/login/2fa', { code });
  browser.cookie = c.cookie === pending ? browser.cookie : c.cookie;
  if (res.body?.success) browser.userId = res.body.data.id;
  return res;
}

/** Enrols the user's two-factor: returns the secret and backup codes shown once. */
async function enrol(u: Person) {
  const setup = await u.client.post('/api/user/2fa/setup');
  expect(setup.body.success, JSON.stringify(setup.body)).toBe(true);
  const { secret, backup_codes } = setup.body.data as { secret: string; backup_codes: string[] };
  const enabled = await u.client.post('/api/user/2fa/enable', { code: await totp(secret) });
  expect(enabled.body).toEqual({ success: true, message: '两步验证启用成功' });
  return { secret, backupCodes: backup_codes };
}

await describeEachDb('two-factor sign-in', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let clock: { advance(ms: number): void };

  const row = (userId: number) =>
    server.ctx.db.selectFrom('two_fas').selectAll().where('user_id', '=', userId).executeTakeFirst();
  const backupRows = (userId: number) =>
    server.ctx.db.selectFrom('two_fa_backup_codes').selectAll().where('user_id', '=', userId).execute();

  beforeAll(async () => {
    clock = fixClock();
    server = await startTestServer({ kind, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false' } });
    root = await setupAndLoginRoot(server);
  });
  afterAll(async () => {
    vi.useRealTimers();
    await server?.close();
  });

  it('enrols with a QR code and a first code; a wrong first code is refused and the secret is not shown again', async () => {
    const u = await registerAndLogin(server);
    expect((await u.client.get('/api/user/2fa/status')).body).toEqual({
      success: true,
      message: '',
      data: { enabled: false, locked: false },
    });
    const setup = await u.client.post('/api/user/2fa/setup');
    expect(setup.body).toMatchObject({
      success: true,
      message: '2FA设置初始化成功，请使用认证器扫描二维码并输入验证码完成设置',
    });
    const { secret, qr_code_data, backup_codes } = setup.body.data;
    expect(Object.keys(setup.body.data).sort()).toEqual(['backup_codes', 'qr_code_data', 'secret']);
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(qr_code_data).toMatch(/^otpauth:\/\/totp\//);
    expect(qr_code_data).toContain(`secret=${secret}`);
    expect(backup_codes).toHaveLength(10);
    for (const code of backup_codes) expect(code).toMatch(/^[A-Z0-9]{4}-[A-Z0-9]{4}$/);
    // stored: the secret for the TOTP, the backup codes only as bcrypt hashes; not in force yet
    expect(await row(u.id)).toMatchObject({ secret });
    expect((await row(u.id))!.is_enabled).toBeFalsy();
    const hashes = await backupRows(u.id);
    expect(hashes).toHaveLength(10);
    for (const h of hashes) expect(h.code_hash).toMatch(/^\$2[aby]\$10\$/);
    // before the first code, a password login needs nothing more
    expect((await new ConsoleClient(server.url).login(u.username, u.password)).body.data.require_2fa).toBeUndefined();

    expect((await u.client.post('/api/user/2fa/enable', { code: '12345a' })).body).toEqual({
      success: false,
      message: '验证码必须是6位数字',
    });
    expect((await u.client.post('/api/user/2fa/enable', {})).body).toEqual({ success: false, message: '参数错误' });
    const good = await totp(secret);
    const wrong = String((Number(good) + 1) % 1_000_000).padStart(6, '0');
    expect((await u.client.post('/api/user/2fa/enable', { code: wrong })).body).toEqual(WRONG);
    expect((await row(u.id))!.is_enabled).toBeFalsy();
    expect((await u.client.post('/api/user/2fa/enable', { code: good })).body).toEqual({
      success: true,
      message: '两步验证启用成功',
    });
    expect((await row(u.id))!.is_enabled).toBeTruthy();
    const status = await u.client.get('/api/user/2fa/status');
    expect(status.body.data).toEqual({ enabled: true, locked: false, backup_codes_remaining: 10 });
    expect(JSON.stringify(status.body)).not.toContain(secret);
    expect(JSON.stringify((await u.client.get('/api/user/self')).body)).not.toContain(secret);
    // a second setup is refused while two-factor is in force
    expect((await u.client.post('/api/user/2fa/setup')).body).toEqual({
      success: false,
      message: '用户已启用2FA，请先禁用后重新设置',
    });
  });

  it('asks for the code after the password; a wrong or replayed code is refused; the session starts only after', async () => {
    const u = await registerAndLogin(server);
    const { secret } = await enrol(u);
    const { browser, pending } = await passwordStep(server, u);
    // no session yet
    expect((await browser.get('/api/user/self', { 'New-Api-User': String(u.id) })).status).toBe(401);
    // without the browser's pending-login cookie, or with a forged one, there is nothing to complete
    expect((await codeStep(new ConsoleClient(server.url), '', await totp(secret))).body).toEqual(EXPIRED);
    expect((await codeStep(browser, 'twofa_login=forged', await totp(secret))).body).toEqual(EXPIRED);
    // a wrong code, then the code already used to enable (same time step): both refused, no session
    const used = await totp(secret);
    const wrong = String((Number(used) + 7) % 1_000_000).padStart(6, '0');
    expect((await codeStep(browser, pending, wrong)).body).toEqual(WRONG);
    const replay = await codeStep(browser, pending, used);
    expect(replay.body).toEqual(WRONG);
    expect(cookiesOf(replay).some((h) => h.startsWith('session='))).toBe(false);

    clock.advance(PERIOD_MS);
    const ok = await codeStep(browser, pending, await totp(secret));
    expect(ok.body, JSON.stringify(ok.body)).toMatchObject({ success: true, message: '', data: { id: u.id } });
    expect(Object.keys(ok.body.data).sort()).toEqual(['display_name', 'group', 'id', 'role', 'status', 'username']);
    expect(cookiesOf(ok).some((h) => h.startsWith('session='))).toBe(true);
    expect((await browser.get('/api/user/self')).body.data).toMatchObject({ id: u.id, username: u.username });
    // the pending login is used up
    clock.advance(PERIOD_MS);
    expect((await codeStep(browser, pending, await totp(secret))).body).toEqual(EXPIRED);
    // the successful code's failure count was reset
    expect(Number((await row(u.id))!.failed_attempts)).toBe(0);
  });

  it('expires a pending login after five minutes', async () => {
    const u = await registerAndLogin(server);
    const { secret } = await enrol(u);
    const { browser, pending } = await passwordStep(server, u);
    clock.advance(5 * 60_000 + 1000);
    expect((await codeStep(browser, pending, await totp(secret))).body).toEqual(EXPIRED);
  });

  it('accepts each backup code once, in any case and with or without the dash', async () => {
    const u = await registerAndLogin(server);
    const { backupCodes } = await enrol(u);
    const code = backupCodes[3];
    const first = await passwordStep(server, u);
    const ok = await codeStep(first.browser, first.pending, code.replace('-', '').toLowerCase());
    expect(ok.body).toMatchObject({ success: true, data: { id: u.id } });
    const used = (await backupRows(u.id)).filter((r) => r.is_used);
    expect(used).toHaveLength(1);
    expect(used[0].used_at).toBeTruthy();
    expect((await u.client.get('/api/user/2fa/status')).body.data.backup_codes_remaining).toBe(9);

    const second = await passwordStep(server, u);
    expect((await codeStep(second.browser, second.pending, code)).body).toEqual(WRONG);
    expect((await codeStep(second.browser, second.pending, backupCodes[4])).body.success).toBe(true);
  });

  it('locks the codes for five minutes after five failures in a row, the right code included', async () => {
    const u = await registerAndLogin(server);
    const { secret } = await enrol(u);
    clock.advance(PERIOD_MS);
    const { browser, pending } = await passwordStep(server, u);
    const good = await totp(secret);
    const wrong = String((Number(good) + 3) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < 4; i++) expect((await codeStep(browser, pending, wrong)).body).toEqual(WRONG);
    expect(Number((await row(u.id))!.failed_attempts)).toBe(4);
    expect((await codeStep(browser, pending, 'ZZZZ-ZZZZ')).body).toEqual(WRONG);
    const locked = await codeStep(browser, pending, good);
    expect(locked.body.success).toBe(false);
    expect(locked.body.message).toMatch(/^账户已被锁定，请在\d{4}-\d\d-\d\d \d\d:\d\d:\d\d后重试$/);
    expect((await u.client.get('/api/user/2fa/status')).body.data).toMatchObject({ enabled: true, locked: true });
    // the lock holds on the other code-checking calls too
    expect((await u.client.post('/api/user/2fa/disable', { code: good })).body.message).toMatch(/^账户已被锁定/);

    clock.advance(LOCK_MS);
    const again = await passwordStep(server, u);
    const res = await codeStep(again.browser, again.pending, await totp(secret));
    expect(res.body).toMatchObject({ success: true, data: { id: u.id } });
    expect((await u.client.get('/api/user/2fa/status')).body.data.locked).toBe(false);
  });

  it('regenerates ten backup codes against a TOTP code; the old ones stop working', async () => {
    const u = await registerAndLogin(server);
    const { secret, backupCodes } = await enrol(u);
    // a backup code does not regenerate them (new-api takes only a TOTP code here)
    expect((await u.client.post('/api/user/2fa/backup_codes', { code: backupCodes[0] })).body).toEqual(WRONG);
    clock.advance(PERIOD_MS);
    const res = await u.client.post('/api/user/2fa/backup_codes', { code: await totp(secret) });
    expect(res.body).toMatchObject({ success: true, message: '备用码重新生成成功' });
    const fresh = res.body.data.backup_codes as string[];
    expect(fresh).toHaveLength(10);
    expect(await backupRows(u.id)).toHaveLength(10);
    const login = await passwordStep(server, u);
    expect((await codeStep(login.browser, login.pending, backupCodes[0])).body).toEqual(WRONG);
    expect((await codeStep(login.browser, login.pending, fresh[0])).body.success).toBe(true);
  });

  it('disables with a code; then the password alone logs in', async () => {
    const u = await registerAndLogin(server);
    const { backupCodes } = await enrol(u);
    expect((await u.client.post('/api/user/2fa/disable', { code: 'AAAA-AAAA' })).body).toEqual(WRONG);
    expect((await u.client.post('/api/user/2fa/disable', { code: backupCodes[9] })).body).toEqual({
      success: true,
      message: '两步验证已禁用',
    });
    expect(await row(u.id)).toBeUndefined();
    expect(await backupRows(u.id)).toHaveLength(0);
    expect((await u.client.post('/api/user/2fa/disable', { code: backupCodes[8] })).body).toEqual({
      success: false,
      message: '用户未启用2FA',
    });
    const login = await new ConsoleClient(server.url).login(u.username, u.password);
    expect(login.body).toMatchObject({ success: true, data: { id: u.id } });
  });

  it('lets an admin reset the two-factor of a user below them only, ending that user’s sessions', async () => {
    const admin = await userWithRole(server, root, 10);
    const peer = await userWithRole(server, root, 10);
    const u = await registerAndLogin(server);
    await enrol(u);
    await enrol(peer);
    expect(
      (await admin.client.get(`/api/user/2fa/enabled?ids=${u.id},${peer.id},${admin.id}`)).body.data.sort(),
    ).toEqual([u.id, peer.id].sort());
    const stats = await admin.client.get('/api/user/2fa/stats');
    expect(stats.body.data.enabled_users).toBeGreaterThanOrEqual(2);
    expect(stats.body.data.enabled_rate).toMatch(/^\d+\.\d%$/);
    // a common user may not
    expect((await u.client.delete(`/api/user/${peer.id}/2fa`)).body).toEqual({
      success: false,
      message: '无权进行此操作，权限不足',
    });
    expect((await admin.client.delete(`/api/user/${peer.id}/2fa`)).body).toEqual({
      success: false,
      message: '无权操作同级或更高级用户的2FA设置',
    });
    expect(await row(peer.id)).toBeTruthy();
    expect((await admin.client.delete(`/api/user/${root.userId}/2fa`)).body.success).toBe(false);
    expect((await admin.client.delete(`/api/user/${u.id}/2fa`)).body).toEqual({
      success: true,
      message: '用户2FA已被强制禁用',
    });
    expect(await row(u.id)).toBeUndefined();
    expect((await u.client.get('/api/user/self')).status).toBe(401);
    expect((await admin.client.delete(`/api/user/${u.id}/2fa`)).body).toEqual({
      success: false,
      message: '用户未启用2FA',
    });
    expect((await new ConsoleClient(server.url).login(u.username, u.password)).body.data.id).toBe(u.id);
    // root may reset an admin's
    expect((await root.delete(`/api/user/${peer.id}/2fa`)).body.success).toBe(true);
    // deleting a user removes their rows
    const gone = await registerAndLogin(server);
    await enrol(gone);
    expect((await root.delete(`/api/user/${gone.id}`)).body.success).toBe(true);
    expect(await row(gone.id)).toBeUndefined();
    expect(await backupRows(gone.id)).toHaveLength(0);
  });
});

// The password step on one node, the code step on another: the pending login is in Redis when configured, else in
// the shared database.
describe('two-factor login across two nodes', async () => {
  const redisUp = await redisAvailable();
  for (const store of ['database', 'redis'] as const) {
    it.skipIf(store === 'redis' && !redisUp)(`through the ${store}`, async () => {
      const clock = fixClock();
      const env: Record<string, string> = {
        CRITICAL_RATE_LIMIT_ENABLE: 'false',
        ...(store === 'redis' ? { REDIS_CONN_STRING: REDIS_URL } : {}),
      };
      const redisPrefix = uniqueName('gwt') + ':';
      const a = await startTestServer({ kind: 'sqlite', env, redisPrefix });
      const b = await startTestServer({ kind: 'sqlite', database: a.database, env, redisPrefix });
      try {
        await setupAndLoginRoot(a);
        const u = await registerAndLogin(a);
        const { secret } = await enrol(u);
        clock.advance(PERIOD_MS);
        const { browser, pending } = await passwordStep(a, u);
        if (store === 'database') {
          expect(await a.ctx.db.selectFrom('short_lived_entries').selectAll().execute()).toHaveLength(1);
        }
        const res = await codeStep(browser, pending, await totp(secret), b.url);
        expect(res.body, JSON.stringify(res.body)).toMatchObject({ success: true, data: { id: u.id } });
        const onB = new ConsoleClient(b.url);
        onB.cookie = browser.cookie;
        onB.userId = u.id;
        expect((await onB.get('/api/user/self')).body.data.id).toBe(u.id);
        // used up for both nodes
        clock.advance(PERIOD_MS);
        expect((await codeStep(browser, pending, await totp(secret), a.url)).body).toEqual(EXPIRED);
      } finally {
        vi.useRealTimers();
        await b.close();
        await a.close();
      }
    });
  }
});

describe('the code step is on the critical rate limit', () => {
  it('answers 429 once the budget of critical calls is spent', async () => {
    const server = await startTestServer({
      kind: 'sqlite',
      env: { CRITICAL_RATE_LIMIT: '3', CRITICAL_RATE_LIMIT_DURATION: '600' },
    });
    try {
      const step = () => new ConsoleClient(server.url).post('/api/user/login/2fa', { code: '123456' });
      for (let i = 0; i < 3; i++) expect((await step()).body).toEqual(EXPIRED);
      expect((await step()).status).toBe(429);
    } finally {
      await server.close();
    }
  });
});
