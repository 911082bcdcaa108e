import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDb, REDIS_URL, redisAvailable } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { registerAndLogin, setOption, setupAndLoginRoot, uname } from './fixtures.js';
import { startFakeSmtp } from './fake-smtp.js';
import {
  PURPOSE_EMAIL_VERIFICATION,
  PURPOSE_PASSWORD_RESET,
  registerVerificationCode,
} from '../../src/services/verification.js';

/** Submits one reset link `times` times at once; the answers. */
async function resetsAtOnce(server: TestServer, email: string, token: string, times: number) {
  return Promise.all(
    Array.from(
      { length: times },
      async () => (await new ConsoleClient(server.url).post('/api/user/reset', { email, token })).body,
    ),
  );
}

/** A user with an address and a reset token for it, as the mailed link carries. */
async function userWithResetToken(server: TestServer) {
  const u = await registerAndLogin(server);
  const email = `${u.username}@example.com`;
  await server.ctx.db.updateTable('users').set({ email }).where('id', '=', u.id).execute();
  const token = 'a1b2c3d4'.repeat(4);
  await registerVerificationCode(server.ctx, email, token, PURPOSE_PASSWORD_RESET);
  return { ...u, email, token };
}

/** Exactly one success among the answers, its new password the one that now logs in. */
async function expectOneReset(
  server: TestServer,
  username: string,
  answers: Array<{ success: boolean; data?: string }>,
) {
  const won = answers.filter((a) => a.success);
  expect(won).toHaveLength(1);
  expect(answers.filter((a) => !a.success)).toEqual(
    Array.from({ length: answers.length - 1 }, () => ({ success: false, message: '重置链接非法或已过期' })),
  );
  expect((await new ConsoleClient(server.url).login(username, won[0].data!)).body.success).toBe(true);
}

await describeEachDb('email verification and password reset', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let smtp: Awaited<ReturnType<typeof startFakeSmtp>>;
  beforeAll(async () => {
    smtp = await startFakeSmtp();
    server = await startTestServer({ kind, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false' } });
    root = await setupAndLoginRoot(server);
    await setOption(root, 'SMTPServer', '127.0.0.1');
    await setOption(root, 'SMTPPort', smtp.port);
    await setOption(root, 'SMTPAccount', 'bot@gateway.test');
    await setOption(root, 'SMTPToken', 'pw');
    await setOption(root, 'ServerAddress', 'https://gw.example.com');
  });
  afterAll(async () => {
    await server?.close();
    await smtp?.close();
  });

  it('registers with an emailed verification code, once', async () => {
    await setOption(root, 'EmailVerificationEnabled', true);
    const anon = new ConsoleClient(server.url);
    const email = `${uname('m')}@example.com`;
    expect((await anon.get('/api/verification?email=not-an-email')).body).toEqual({
      success: false,
      message: '无效的参数',
    });
    const sent = await anon.get(`/api/verification?email=${encodeURIComponent(email)}`);
    expect(sent.body).toEqual({ success: true, message: '' });
    const mail = smtp.mails.at(-1)!;
    expect(mail.to).toEqual([email]);
    expect(mail.subject).toBe('New API邮箱验证邮件');
    const code = /<strong>([0-9a-f]{6})<\/strong>/.exec(mail.body)?.[1];
    expect(code).toBeTruthy();

    const username = uname('mv');
    expect(
      (await anon.post('/api/user/register', { username, password: 'password123', email, verification_code: '000000' }))
        .body.message,
    ).toBe('验证码错误或已过期');
    expect(
      (await anon.post('/api/user/register', { username, password: 'password123', email, verification_code: code }))
        .body,
    ).toEqual({
      success: true,
      message: '',
    });
    const row = await server.ctx.db
      .selectFrom('users')
      .select(['email'])
      .where('username', '=', username)
      .executeTakeFirstOrThrow();
    expect(row.email).toBe(email);
    // the code is spent
    expect(
      (
        await anon.post('/api/user/register', {
          username: uname('mv'),
          password: 'password123',
          email,
          verification_code: code,
        })
      ).body.success,
    ).toBe(false);
    // the address is now taken
    expect((await anon.get(`/api/verification?email=${encodeURIComponent(email)}`)).body).toEqual({
      success: false,
      message: '邮箱地址已被占用',
    });

    await setOption(root, 'EmailDomainWhitelist', 'allowed.com');
    await setOption(root, 'EmailDomainRestrictionEnabled', true);
    expect((await anon.get('/api/verification?email=x@other.com')).body.message).toBe(
      '管理员启用了邮箱域名白名单，您的邮箱地址的域名不在白名单中',
    );
    await setOption(root, 'EmailAliasRestrictionEnabled', true);
    expect((await anon.get('/api/verification?email=a%2Bb@allowed.com')).body.message).toBe(
      '管理员已启用邮箱地址别名限制，您的邮箱地址由于包含特殊符号而被拒绝。',
    );
    await setOption(root, 'EmailAliasRestrictionEnabled', false);
    await setOption(root, 'EmailDomainRestrictionEnabled', false);
    await setOption(root, 'EmailVerificationEnabled', false);
  });

  it('resets a password by emailed link, answering unknown addresses the same way', async () => {
    const u = await registerAndLogin(server);
    const email = `${u.username}@example.com`;
    await server.ctx.db.updateTable('users').set({ email }).where('id', '=', u.id).execute();
    const anon = new ConsoleClient(server.url);

    const before = smtp.mails.length;
    const unknown = await anon.get('/api/reset_password?email=nobody@example.com');
    expect(unknown.body).toEqual({ success: true, message: '' });
    expect(smtp.mails.length).toBe(before);

    const known = await anon.get(`/api/reset_password?email=${encodeURIComponent(email)}`);
    expect(known.body).toEqual(unknown.body);
    expect(smtp.mails.length).toBe(before + 1);
    const mail = smtp.mails.at(-1)!;
    expect(mail.subject).toBe('New API密码重置');
    const link = /https:\/\/gw\.example\.com\/user\/reset\?email=([^&]+)&token=([0-9a-f]{32})/.exec(mail.body);
    expect(link).toBeTruthy();
    expect(decodeURIComponent(link![1])).toBe(email);

    expect((await anon.post('/api/user/reset', { email, token: 'f'.repeat(32) })).body).toEqual({
      success: false,
      message: '重置链接非法或已过期',
    });
    const reset = await anon.post('/api/user/reset', { email, token: link![2] });
    expect(reset.body.success).toBe(true);
    const newPassword: string = reset.body.data;
    expect(newPassword).toMatch(/^[0-9A-Za-z]{12}$/);
    expect((await new ConsoleClient(server.url).login(u.username, u.password)).body.success).toBe(false);
    expect((await new ConsoleClient(server.url).login(u.username, newPassword)).body.success).toBe(true);
    expect((await anon.post('/api/user/reset', { email, token: link![2] })).body.success).toBe(false);
  });

  // issue 39: the code was checked, then deleted in a second step, so requests racing with it all passed the check
  it('spends a reset link once when it is submitted ten times at once', async () => {
    const u = await userWithResetToken(server);
    await expectOneReset(server, u.username, await resetsAtOnce(server, u.email, u.token, 10));
  });

  it('registers one account when five sign-ups race with the same emailed code', async () => {
    await setOption(root, 'EmailVerificationEnabled', true);
    try {
      const email = `${uname('race')}@example.com`;
      await registerVerificationCode(server.ctx, email, 'c0ffee', PURPOSE_EMAIL_VERIFICATION);
      const answers = await Promise.all(
        Array.from({ length: 5 }, async () => {
          const body = { username: uname('rc'), password: 'password123', email, verification_code: 'c0ffee' };
          return (await new ConsoleClient(server.url).post('/api/user/register', body)).body;
        }),
      );
      expect(answers.filter((a) => a.success)).toHaveLength(1);
      for (const a of answers.filter((x) => !x.success))
        expect(a.message).toMatch(/^(验证码错误或已过期|用户名已存在.*)$/);
      const holders = await server.ctx.db.selectFrom('users').select('id').where('email', '=', email).execute();
      expect(holders).toHaveLength(1);
    } finally {
      await setOption(root, 'EmailVerificationEnabled', false);
    }
  });
});

describe('a reset link spent once through Redis', async () => {
  const redisUp = await redisAvailable();
  it.skipIf(!redisUp)('spends a reset link once when it is submitted ten times at once', async () => {
    const server = await startTestServer({
      kind: 'sqlite',
      env: { CRITICAL_RATE_LIMIT_ENABLE: 'false', REDIS_CONN_STRING: REDIS_URL },
    });
    try {
      await setupAndLoginRoot(server);
      expect(server.ctx.redis).toBeTruthy();
      const u = await userWithResetToken(server);
      await expectOneReset(server, u.username, await resetsAtOnce(server, u.email, u.token, 10));
    } finally {
      await server.close();
    }
  });
});

// A code mailed by one node is accepted by another node of the same deployment: through Redis when it is configured,
// else through the shared database (never one process's memory).
describe('verification codes shared between two nodes', async () => {
  const redisUp = await redisAvailable();
  for (const store of ['database', 'redis'] as const) {
    it.skipIf(store === 'redis' && !redisUp)(
      `a code sent by one node is accepted by another node, through the ${store}`,
      async () => {
        const smtp = await startFakeSmtp();
        const env: Record<string, string> = {
          CRITICAL_RATE_LIMIT_ENABLE: 'false',
          ...(store === 'redis' ? { REDIS_CONN_STRING: REDIS_URL } : {}),
        };
        const n1 = await startTestServer({ kind: 'sqlite', env });
        const n2 = await startTestServer({ kind: 'sqlite', database: n1.database, env });
        // both nodes of one deployment share the key prefix
        (n2.ctx as { redisPrefix: string }).redisPrefix = n1.ctx.redisPrefix;
        try {
          const root = await setupAndLoginRoot(n1);
          for (const [k, v] of [
            ['SMTPServer', '127.0.0.1'],
            ['SMTPPort', String(smtp.port)],
            ['SMTPAccount', 'bot@gateway.test'],
            ['EmailVerificationEnabled', 'true'],
          ]) {
            await setOption(root, k, v);
          }
          await n2.ctx.options.load();
          const email = `${uname('r')}@example.com`;
          const sent = await new ConsoleClient(n1.url).get(`/api/verification?email=${email}`);
          expect(sent.body, JSON.stringify(sent.body)).toMatchObject({ success: true });
          const code = /<strong>([0-9a-f]{6})<\/strong>/.exec(smtp.mails.at(-1)!.body)![1];
          const username = uname('rv');
          const reg = await new ConsoleClient(n2.url).post('/api/user/register', {
            username,
            password: 'password123',
            email,
            verification_code: code,
          });
          expect(reg.body).toEqual({ success: true, message: '' });
          // the code was used up: the same code on the first node is refused
          const again = await new ConsoleClient(n1.url).post('/api/user/register', {
            username: uname('rv'),
            password: 'password123',
            email,
            verification_code: code,
          });
          expect(again.body).toMatchObject({ success: false, message: '验证码错误或已过期' });
        } finally {
          await n2.close();
          await n1.close();
          await smtp.close();
        }
      },
    );
  }
});
