// Third-party logins this server has no route for (WeChat and Telegram for now) can neither be switched on through the option
// API nor be advertised by /api/status, even when a database written by new-api has them switched on: the login page
// must not offer a button that cannot work.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { setOption, setupAndLoginRoot } from './fixtures.js';

// GitHub, OIDC, Linux DO and Discord have routes now (api/oauth.ts, tested in oauth.test.ts)
const LOGINS: Array<{ option: string; status: string; name: string; credential: [string, string] }> = [
  {
    option: 'WeChatAuthEnabled',
    status: 'wechat_login',
    name: '微信',
    credential: ['WeChatServerAddress', 'https://wechat.example.com'],
  },
  {
    option: 'TelegramOAuthEnabled',
    status: 'telegram_oauth',
    name: 'Telegram',
    credential: ['TelegramBotToken', '123:abc'],
  },
];

await describeEachDb('third-party login switches', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  beforeAll(async () => {
    server = await startTestServer({ kind, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false' } });
    root = await setupAndLoginRoot(server);
  });
  afterAll(async () => {
    await server?.close();
  });

  const stored = async (key: string) =>
    (await server.ctx.db.selectFrom('options').select('value').where('key', '=', key).executeTakeFirst())?.value;
  const status = async () => (await new ConsoleClient(server.url).get('/api/status')).body.data;

  it('refuses to switch on a login that has no route here, with its credentials saved, and stores nothing', async () => {
    for (const login of LOGINS) {
      await setOption(root, ...login.credential);
      const before = await stored(login.option);
      const res = await root.put('/api/option/', { key: login.option, value: true });
      expect(res.body, login.option).toEqual({
        success: false,
        message: `无法启用 ${login.name} 登录：本网关尚未实现该登录方式`,
      });
      expect(await stored(login.option)).toBe(before);
      expect(server.ctx.options.bool(login.option)).toBe(false);
      // switching it off is always accepted
      expect((await root.put('/api/option/', { key: login.option, value: false })).body.success).toBe(true);
    }
    const s = await status();
    for (const login of LOGINS) expect(s[login.status], login.status).toBe(false);
  });

  it('does not advertise the logins a database written by new-api has switched on', async () => {
    const db = server.ctx.db;
    for (const login of LOGINS) {
      for (const [key, value] of [login.credential, [login.option, 'true']]) {
        await db.deleteFrom('options').where('key', '=', key).execute();
        await db.insertInto('options').values({ key, value }).execute();
      }
    }
    await server.ctx.options.load();
    expect(server.ctx.options.bool('WeChatAuthEnabled')).toBe(true);
    const s = await status();
    for (const login of LOGINS) expect(s[login.status], login.status).toBe(false);
    // the rest of the status is still there
    expect(s).toMatchObject({ wechat_qrcode: '', telegram_bot_name: '', setup: true });
  });
});
