// The two-factor lockout against codes sent all at once (issue 39, point 2): every code takes one of the five tries
// before it is checked, in one conditional UPDATE, so a burst of guesses gets five checked at most and the right
// code sent after them meets the lock — on every database, PostgreSQL and MariaDB included, where a lock read before
// the check and counted after it let dozens through. The right code is sent once the burst is answered: sent with it,
// nothing orders it after the fifth wrong one (MariaDB's pool sometimes let it take one of the five tries, which is
// right). The clock is fixed (only Date is faked) as in two-factor.test.ts.
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { generate } from 'otplib';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient, type ApiResponse } from '../helpers/console-client.js';
import { registerAndLogin } from './fixtures.js';

const WRONG = '验证码或备用码错误，请重试';
const LOCKED = /^账户已被锁定，请在\d{4}-\d\d-\d\d \d\d:\d\d:\d\d后重试$/;
const MAX_TRIES = 5;
const PERIOD_MS = 30_000;

const totp = (secret: string) => generate({ secret, epoch: Math.floor(Date.now() / 1000) });
const pendingCookie = (res: ApiResponse) =>
  (res.headers.getSetCookie?.() ?? []).find((h) => h.startsWith('twofa_login='))?.split(';')[0] ?? '';

await describeEachDb('two-factor lockout under parallel codes', (kind) => {
  let server: TestServer;

  beforeAll(async () => {
    // 1 s into a TOTP period, so that the codes computed here are the server's
    vi.useFakeTimers({ toFake: ['Date'], now: Math.ceil(Date.now() / PERIOD_MS) * PERIOD_MS + 1000 });
    server = await startTestServer({ kind, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false' } });
  });
  afterAll(async () => {
    vi.useRealTimers();
    await server?.close();
  });

  /** A user with two-factor in force, and a browser at the code step of a password login. */
  async function atCodeStep() {
    const u = await registerAndLogin(server);
    const setup = await u.client.post('/api/user/2fa/setup');
    const { secret, backup_codes } = setup.body.data as { secret: string; backup_codes: string[] };
    expect((await u.client.post('/api/user/2fa/enable', { code: await totp(secret) })).body.success).toBe(true);
    vi.setSystemTime(Date.now() + PERIOD_MS); // the enabling code's step is spent
    return { user: u, secret, backupCodes: backup_codes, pending: await passwordStep(u) };
  }

  /** A password login of a user with two-factor: the pending-login cookie of its code step. */
  async function passwordStep(u: { username: string; password: string }) {
    const login = await new ConsoleClient(server.url).post('/api/user/login', {
      username: u.username,
      password: u.password,
    });
    expect(login.body.data.require_2fa).toBe(true);
    return pendingCookie(login);
  }

  /** Sends every code to the second step at once, from the same pending login. */
  async function sendAll(pending: string, codes: string[]) {
    return Promise.all(
      codes.map(async (code) => {
        const c = new ConsoleClient(server.url);
        c.cookie = pending;
        return (await c.post('/api/user/login/2fa', { code })).body as { success: boolean; message: string };
      }),
    );
  }

  const row = (userId: number) =>
    server.ctx.db.selectFrom('two_fas').selectAll().where('user_id', '=', userId).executeTakeFirstOrThrow();

  /** Sends a burst of wrong codes at once, then the right one: at most five checked, the right one locked out. */
  async function expectLockedAfterBurst(userId: number, pending: string, wrongs: string[], good: string) {
    const guesses = await sendAll(pending, wrongs);
    const checked = guesses.filter((a) => a.message === WRONG).length;
    const locked = guesses.filter((a) => LOCKED.test(a.message)).length;
    expect(checked).toBeLessThanOrEqual(MAX_TRIES);
    expect(checked + locked).toBe(guesses.length);
    const [right] = await sendAll(pending, [good]);
    expect(right.success).toBe(false);
    expect(right.message).toMatch(LOCKED);
    const after = await row(userId);
    expect(Number(after.failed_attempts)).toBe(MAX_TRIES);
    expect(after.locked_until).toBeTruthy();
  }

  it('checks at most five of 60 wrong TOTP codes sent at once, and refuses the right one after them', async () => {
    const { user, secret, pending } = await atCodeStep();
    const good = await totp(secret);
    const wrongs = Array.from({ length: 60 }, (_, i) => String((Number(good) + 1 + i) % 1_000_000).padStart(6, '0'));
    await expectLockedAfterBurst(user.id, pending, wrongs, good);
    expect((await user.client.get('/api/user/2fa/status')).body.data).toMatchObject({ enabled: true, locked: true });
    // the right code, sent alone afterwards, still meets the lock
    expect((await sendAll(pending, [good]))[0].message).toMatch(LOCKED);
  });

  it('checks at most five of 20 wrong backup codes sent at once; the right one stays unused', async () => {
    const { user, backupCodes, pending } = await atCodeStep();
    const wrongs = Array.from({ length: 20 }, (_, i) => `ZZZZ-${String(1000 + i)}`);
    await expectLockedAfterBurst(user.id, pending, wrongs, backupCodes[0]);
    const unused = await server.ctx.db
      .selectFrom('two_fa_backup_codes')
      .select('id')
      .where('user_id', '=', user.id)
      .where('is_used', '=', false)
      .execute();
    expect(unused).toHaveLength(10);
  });

  it('opens a new series of five tries once the lock has run out', async () => {
    const { user, secret, pending } = await atCodeStep();
    const good = await totp(secret);
    const wrong = String((Number(good) + 1) % 1_000_000).padStart(6, '0');
    await sendAll(
      pending,
      Array.from({ length: 8 }, () => wrong),
    );
    expect(Number((await row(user.id)).failed_attempts)).toBe(MAX_TRIES);
    vi.setSystemTime(Date.now() + 5 * 60_000 + PERIOD_MS);
    const again = await passwordStep(user);
    expect((await sendAll(again, [wrong]))[0].message).toBe(WRONG);
    expect(Number((await row(user.id)).failed_attempts)).toBe(1);
    expect((await sendAll(again, [await totp(secret)]))[0]).toMatchObject({ success: true, data: { id: user.id } });
    const after = await row(user.id);
    expect(Number(after.failed_attempts)).toBe(0);
    expect(after.locked_until).toBeNull();
  });
});
