// Every third-party login new-api offers has routes here now (WeChat and Telegram in api/login-bindings.ts, tested
// in oauth-wechat-telegram.test.ts): their switches need their credentials first, then they are stored and
// advertised by /api/status. services/login-methods.ts keeps the gate for any login added to new-api later.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { setOption, setupAndLoginRoot } from './fixtures.js';
import { loginSwitchProblem } from '../../src/services/login-methods.js';

const LOGINS: Array<{ option: string; status: string; credential: [string, string]; refusal: string }> = [
  {
    option: 'WeChatAuthEnabled',
    status: 'wechat_login',
    credential: ['WeChatServerAddress', 'https://wechat.example.com'],
    refusal: '无法启用微信登录，请先填入微信登录相关配置信息！',
  },
  {
    option: 'TelegramOAuthEnabled',
    status: 'telegram_oauth',
    credential: ['TelegramBotToken', '123:abc'],
    refusal: '无法启用 Telegram OAuth，请先填入 Telegram Bot Token！',
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

  const status = async () => (await new ConsoleClient(server.url).get('/api/status')).body.data;

  it('switches WeChat and Telegram on once their credentials are saved, and advertises them', async () => {
    for (const login of LOGINS) {
      const refused = await root.put('/api/option/', { key: login.option, value: true });
      expect(refused.body, login.option).toEqual({ success: false, message: login.refusal });
      expect(server.ctx.options.bool(login.option)).toBe(false);
      expect(loginSwitchProblem(login.option, 'true')).toBeNull();
      await setOption(root, ...login.credential);
      await setOption(root, login.option, true);
    }
    const s = await status();
    for (const login of LOGINS) expect(s[login.status], login.status).toBe(true);
    for (const login of LOGINS) await setOption(root, login.option, false);
    const after = await status();
    for (const login of LOGINS) expect(after[login.status], login.status).toBe(false);
  });
});
