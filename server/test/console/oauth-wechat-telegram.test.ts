// WeChat (through a local mock wechat-server, its address and token injected through the options) and Telegram
// (widget fields signed here with a test bot token) logins, bindings, the unbinding rules and the races two
// callbacks for the same account used to win together (issue 33).
import { createHash, createHmac } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { registerAndLogin, setOption, setupAndLoginRoot, userWithRole } from './fixtures.js';
import { WECHAT_SERVER_TOKEN, startMockWechatServer, type MockWechatServer } from './mock-wechat-server.js';

const BOT_TOKEN = '123456:test-bot-token';
const LAST_WAY = { success: false, message: '解绑后将无法登录此账户，请先设置密码或绑定其他登录方式' };

/** The query string the Telegram widget hands over for this user, signed with `token`. */
function telegramQuery(fields: Record<string, string>, token = BOT_TOKEN): string {
  const lines = Object.keys(fields)
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join('\n');
  const hash = createHmac('sha256', createHash('sha256').update(token).digest()).update(lines).digest('hex');
  return new URLSearchParams({ ...fields, hash }).toString();
}

const nowSec = () => Math.floor(Date.now() / 1000);
let tgSeq = 5_000_000;
const tgUser = (extra: Record<string, string> = {}) => ({
  id: String(++tgSeq),
  first_name: 'Tele',
  username: `tg${tgSeq}`,
  auth_date: String(nowSec()),
  ...extra,
});

await describeEachDb('WeChat and Telegram logins, unbinding, sign-up races', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let wx: MockWechatServer;
  let wxSeq = 0;

  const userRow = (id: number) =>
    server.ctx.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const holders = async (column: 'wechat_id' | 'telegram_id', value: string) =>
    (await server.ctx.db.selectFrom('users').select('id').where(column, '=', value).execute()).map((r) => r.id);
  const userCount = async () =>
    Number(
      (
        await server.ctx.db
          .selectFrom('users')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const wechatId = () => `oWx${process.pid}_${++wxSeq}`;
  const wechatLogin = async (c: ConsoleClient, id: string) => {
    const res = await c.get(`/api/oauth/wechat?code=${wx.issueCode(id)}`);
    if (res.body?.success) c.userId = res.body.data.id;
    return res;
  };
  /** The widget's bind redirect, as the browser follows it (with its session cookie), not followed further. */
  const telegramBind = async (c: ConsoleClient, query: string) => {
    const res = await fetch(`${server.url}/api/oauth/telegram/bind?${query}`, {
      headers: { cookie: c.cookie, 'New-Api-User': String(c.userId) },
      redirect: 'manual',
    });
    const text = await res.text();
    return { status: res.status, location: res.headers.get('location'), body: text ? JSON.parse(text) : null };
  };

  beforeAll(async () => {
    wx = await startMockWechatServer();
    server = await startTestServer({ kind, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false' } });
    root = await setupAndLoginRoot(server);
  });
  afterAll(async () => {
    await server?.close();
    await wx?.close();
  });

  it('refuses both logins while switched off, then advertises them once configured', async () => {
    const anon = new ConsoleClient(server.url);
    expect((await anon.get('/api/oauth/wechat?code=x')).body).toEqual({
      success: false,
      message: '管理员未开启通过微信登录以及注册',
    });
    expect((await anon.get(`/api/oauth/telegram/login?${telegramQuery(tgUser())}`)).body).toEqual({
      success: false,
      message: '管理员未开启通过 Telegram 登录以及注册',
    });
    await setOption(root, 'WeChatServerAddress', `${wx.url}/`);
    await setOption(root, 'WeChatServerToken', WECHAT_SERVER_TOKEN);
    await setOption(root, 'WeChatAccountQRCodeImageURL', 'https://img.example.com/qr.png');
    await setOption(root, 'WeChatAuthEnabled', true);
    await setOption(root, 'TelegramBotToken', BOT_TOKEN);
    await setOption(root, 'TelegramBotName', 'gateway_bot');
    await setOption(root, 'TelegramOAuthEnabled', true);
    expect((await anon.get('/api/status')).body.data).toMatchObject({
      wechat_login: true,
      wechat_qrcode: 'https://img.example.com/qr.png',
      telegram_oauth: true,
      telegram_bot_name: 'gateway_bot',
    });
    // the credentials stay out of the option list
    const keys = (await root.get('/api/option/')).body.data.map((o: { key: string }) => o.key);
    expect(keys).not.toContain('WeChatServerToken');
    expect(keys).not.toContain('TelegramBotToken');
  });

  it('WeChat: signs up wechat_<n> with the code, sending the token, then logs the same user in', async () => {
    const id = wechatId();
    const c = new ConsoleClient(server.url);
    const res = await wechatLogin(c, id);
    expect(res.body.success, JSON.stringify(res.body)).toBe(true);
    expect(Object.keys(res.body.data).sort()).toEqual(['display_name', 'group', 'id', 'role', 'status', 'username']);
    expect(res.body.data).toMatchObject({ display_name: 'WeChat User', role: 1, status: 1 });
    expect(res.body.data.username).toMatch(/^wechat_\d+$/);
    expect(wx.authorizations.at(-1)).toBe(WECHAT_SERVER_TOKEN);
    expect((await userRow(res.body.data.id)).wechat_id).toBe(id);
    expect((await c.get('/api/user/self')).body.data).toMatchObject({ id: res.body.data.id, wechat_id: id });
    const again = await wechatLogin(new ConsoleClient(server.url), id);
    expect(again.body).toMatchObject({ success: true, data: { id: res.body.data.id } });
  });

  it('WeChat: a wrong or missing code, an unreachable, redirecting or non-JSON server', async () => {
    const anon = new ConsoleClient(server.url);
    const before = await userCount();
    expect((await anon.get('/api/oauth/wechat?code=nope')).body).toEqual({
      success: false,
      message: '验证码错误或已过期',
    });
    expect((await anon.get('/api/oauth/wechat')).body).toEqual({ success: false, message: '无效的参数' });
    wx.mode = 'redirect';
    try {
      expect((await wechatLogin(anon, wechatId())).body).toEqual({
        success: false,
        message: '微信服务器返回了无效的响应',
      });
      expect(wx.redirectHits).toBe(0);
      wx.mode = 'html';
      expect((await wechatLogin(anon, wechatId())).body.message).toBe('微信服务器返回了无效的响应');
    } finally {
      wx.mode = 'json';
    }
    await setOption(root, 'WeChatServerAddress', 'http://127.0.0.1:1');
    try {
      expect((await wechatLogin(anon, wechatId())).body).toEqual({
        success: false,
        message: '无法连接至微信服务器，请稍后重试！',
      });
    } finally {
      await setOption(root, 'WeChatServerAddress', wx.url);
    }
    expect(await userCount()).toBe(before);
  });

  it('WeChat: binds by GET ?code= and by POST {code}, once per WeChat account, signed-in callers only', async () => {
    const a = await registerAndLogin(server);
    const idA = wechatId();
    expect((await a.client.get(`/api/oauth/wechat/bind?code=${wx.issueCode(idA)}`)).body).toEqual({
      success: true,
      message: '',
    });
    expect((await userRow(a.id)).wechat_id).toBe(idA);
    const b = await registerAndLogin(server);
    const taken = await b.client.post('/api/oauth/wechat/bind', { code: wx.issueCode(idA) });
    expect(taken.body).toEqual({ success: false, message: '该微信账号已被绑定' });
    expect((await userRow(b.id)).wechat_id).toBe('');
    const idB = wechatId();
    expect((await b.client.post('/api/oauth/wechat/bind', { code: wx.issueCode(idB) })).body.success).toBe(true);
    expect((await userRow(b.id)).wechat_id).toBe(idB);
    expect((await new ConsoleClient(server.url).post('/api/oauth/wechat/bind', { code: 'x' })).status).toBe(401);
    // the bound account logs in as its user
    expect((await wechatLogin(new ConsoleClient(server.url), idA)).body).toMatchObject({ data: { id: a.id } });
  });

  it('WeChat: refuses a banned user and a sign-up while registration is closed', async () => {
    const id = wechatId();
    const first = await wechatLogin(new ConsoleClient(server.url), id);
    expect((await root.post('/api/user/manage', { id: first.body.data.id, action: 'disable' })).body.success).toBe(
      true,
    );
    expect((await wechatLogin(new ConsoleClient(server.url), id)).body).toEqual({
      success: false,
      message: '用户已被封禁',
    });
    await setOption(root, 'RegisterEnabled', false);
    try {
      const before = await userCount();
      expect((await wechatLogin(new ConsoleClient(server.url), wechatId())).body).toEqual({
        success: false,
        message: '管理员关闭了新用户注册',
      });
      expect(await userCount()).toBe(before);
    } finally {
      await setOption(root, 'RegisterEnabled', true);
    }
  });

  it('Telegram: refuses a signature dated beyond the allowed clock skew in the future, accepts one within it', async () => {
    await setOption(root, 'TelegramBotToken', BOT_TOKEN);
    await setOption(root, 'TelegramOAuthEnabled', true);
    const anon = new ConsoleClient(server.url);
    const tg = tgUser();
    const u = await registerAndLogin(server);
    expect((await telegramBind(u.client, telegramQuery(tg))).status).toBe(302);
    // signed for a day ahead: it would outlive the one-day limit on a signature's age
    for (const ahead of [24 * 3600, 10 * 60]) {
      const later = telegramQuery({ ...tg, auth_date: String(nowSec() + ahead) });
      expect((await anon.get(`/api/oauth/telegram/login?${later}`)).body).toEqual({
        success: false,
        message: 'Telegram 授权时间晚于服务器时间，请检查服务器时钟或重新登录',
      });
      // binding takes the same check
      expect((await telegramBind(u.client, later)).body).toEqual({
        success: false,
        message: 'Telegram 授权时间晚于服务器时间，请检查服务器时钟或重新登录',
      });
    }
    // a minute ahead: the two clocks may differ that much
    const skewed = telegramQuery({ ...tg, auth_date: String(nowSec() + 60) });
    expect((await anon.get(`/api/oauth/telegram/login?${skewed}`)).body).toMatchObject({
      success: true,
      data: { id: u.id },
    });
  });

  it('Telegram: checks the signature and its age, logs in only a bound account, binds with a redirect', async () => {
    const anon = new ConsoleClient(server.url);
    const tg = tgUser({ last_name: 'Gram', photo_url: 'https://t.me/i/userpic/1.jpg' });
    expect((await anon.get(`/api/oauth/telegram/login?${telegramQuery(tg)}`)).body).toEqual({
      success: false,
      message: '该 Telegram 账户未绑定',
    });
    const forged = telegramQuery(tg, '999:another-bot');
    expect((await anon.get(`/api/oauth/telegram/login?${forged}`)).body).toEqual({
      success: false,
      message: '无效的请求',
    });
    // a field changed after signing
    const tampered = telegramQuery(tg).replace(`id=${tg.id}`, `id=${Number(tg.id) + 1}`);
    expect((await anon.get(`/api/oauth/telegram/login?${tampered}`)).body.message).toBe('无效的请求');
    expect((await anon.get('/api/oauth/telegram/login')).body.message).toBe('无效的请求');

    const u = await registerAndLogin(server);
    const bound = await telegramBind(u.client, telegramQuery(tg));
    expect(bound.status).toBe(302);
    expect(bound.location).toBe('/setting');
    expect((await userRow(u.id)).telegram_id).toBe(tg.id);
    const login = await anon.get(`/api/oauth/telegram/login?${telegramQuery(tg)}`);
    expect(login.body).toMatchObject({ success: true, data: { id: u.id, username: u.username } });
    expect((await anon.get('/api/user/self', { 'New-Api-User': String(u.id) })).body.data.id).toBe(u.id);

    // a day-old signature is refused (new-api accepts it for ever)
    const old = tgUser({ auth_date: String(nowSec() - 2 * 24 * 3600) });
    expect((await anon.get(`/api/oauth/telegram/login?${telegramQuery(old)}`)).body).toEqual({
      success: false,
      message: 'Telegram 授权已过期，请重新登录',
    });
    // bound to another user, and no session
    const other = await registerAndLogin(server);
    expect((await telegramBind(other.client, telegramQuery(tg))).body).toEqual({
      success: false,
      message: '该 Telegram 账户已被绑定',
    });
    expect((await telegramBind(new ConsoleClient(server.url), telegramQuery(tgUser()))).status).toBe(401);
    // a banned owner is refused
    expect((await root.post('/api/user/manage', { id: u.id, action: 'disable' })).body.success).toBe(true);
    expect((await anon.get(`/api/oauth/telegram/login?${telegramQuery(tg)}`)).body).toEqual({
      success: false,
      message: '用户已被封禁',
    });
  });

  it('unbinding: allowed while a password, a mail-able address or another enabled login remains', async () => {
    // a password user may drop any binding
    const p = await registerAndLogin(server);
    const pw = wechatId();
    expect((await p.client.post('/api/oauth/wechat/bind', { code: wx.issueCode(pw) })).body.success).toBe(true);
    expect((await p.client.delete('/api/user/self/bindings/wechat')).body).toEqual({ success: true, message: '' });
    expect((await userRow(p.id)).wechat_id).toBe('');
    expect((await p.client.delete('/api/user/self/bindings/wechat')).body).toEqual({
      success: false,
      message: '该账户未绑定此登录方式',
    });
    expect((await p.client.delete('/api/user/self/bindings/myspace')).body).toEqual({
      success: false,
      message: '无效的绑定类型',
    });
    // the released account can be bound again, by anyone
    const q = await registerAndLogin(server);
    expect((await q.client.post('/api/oauth/wechat/bind', { code: wx.issueCode(pw) })).body.success).toBe(true);

    // a WeChat sign-up never saw its password: WeChat is its only way in
    const w = new ConsoleClient(server.url);
    const signup = await wechatLogin(w, wechatId());
    const wid = signup.body.data.id as number;
    expect((await w.delete('/api/user/self/bindings/wechat')).body).toEqual(LAST_WAY);
    // with Telegram bound as well, either one may go, but not both
    const tg = tgUser();
    expect((await telegramBind(w, telegramQuery(tg))).status).toBe(302);
    expect((await w.delete('/api/user/self/bindings/wechat')).body.success).toBe(true);
    expect((await w.delete('/api/user/self/bindings/telegram')).body).toEqual(LAST_WAY);
    // a binding whose login is switched off is no way in
    const w2 = new ConsoleClient(server.url);
    await wechatLogin(w2, wechatId());
    expect((await telegramBind(w2, telegramQuery(tgUser()))).status).toBe(302);
    await setOption(root, 'TelegramOAuthEnabled', false);
    try {
      expect((await w2.delete('/api/user/self/bindings/wechat')).body).toEqual(LAST_WAY);
    } finally {
      await setOption(root, 'TelegramOAuthEnabled', true);
    }
    // an email address counts once mail can be sent (a reset gives a password)
    await server.ctx.db
      .updateTable('users')
      .set({ email: `w${wid}@example.com` })
      .where('id', '=', wid)
      .execute();
    await setOption(root, 'SMTPServer', 'smtp.example.com');
    try {
      expect((await w.delete('/api/user/self/bindings/telegram')).body.success).toBe(true);
      expect((await userRow(wid)).telegram_id).toBe('');
      expect((await w.delete('/api/user/self/bindings/email')).body).toEqual(LAST_WAY);
    } finally {
      await setOption(root, 'SMTPServer', '');
    }
    // a password set for it since (here by an admin) is a way in
    const w3 = new ConsoleClient(server.url);
    const s3 = await wechatLogin(w3, wechatId());
    expect((await w3.delete('/api/user/self/bindings/wechat')).body).toEqual(LAST_WAY);
    expect((await root.put('/api/user/', { id: s3.body.data.id, password: 'newpass1234' })).body.success).toBe(true);
    const relogged = new ConsoleClient(server.url);
    expect((await relogged.login(s3.body.data.username, 'newpass1234')).body.success).toBe(true);
    expect((await relogged.delete('/api/user/self/bindings/wechat')).body.success).toBe(true);

    // a registered passkey is a way in while passkey login is on
    const w4 = new ConsoleClient(server.url);
    const s4 = await wechatLogin(w4, wechatId());
    await server.ctx.db
      .insertInto('passkey_credentials')
      .values({ user_id: s4.body.data.id, credential_id: `cred-${s4.body.data.id}`, public_key: 'pk' })
      .execute();
    expect((await w4.delete('/api/user/self/bindings/wechat')).body).toEqual(LAST_WAY);
    await setOption(root, 'passkey.enabled', true);
    try {
      expect((await w4.delete('/api/user/self/bindings/wechat')).body.success).toBe(true);
    } finally {
      await setOption(root, 'passkey.enabled', false);
    }
  });

  it('unbinding by an admin: any binding of a user below them, as new-api', async () => {
    const w = new ConsoleClient(server.url);
    const id = wechatId();
    const signup = await wechatLogin(w, id);
    const uid = signup.body.data.id as number;
    const admin = await userWithRole(server, root, 10);
    // the last way in does not stop an admin
    expect((await admin.client.delete(`/api/user/${uid}/bindings/wechat`)).body).toEqual({
      success: true,
      message: 'success',
    });
    expect((await userRow(uid)).wechat_id).toBe('');
    expect((await admin.client.delete(`/api/user/${uid}/bindings/nothing`)).body).toEqual({
      success: false,
      message: '无效的绑定类型',
    });
    expect((await admin.client.delete(`/api/user/${root.userId}/bindings/email`)).body).toEqual({
      success: false,
      message: '无权更新同权限等级或更高权限等级的用户信息',
    });
    const peer = await userWithRole(server, root, 10);
    expect((await admin.client.delete(`/api/user/${peer.id}/bindings/email`)).body.success).toBe(false);
    const plain = await registerAndLogin(server);
    expect((await plain.client.delete(`/api/user/${uid}/bindings/wechat`)).body).toEqual({
      success: false,
      message: '无权进行此操作，权限不足',
    });
    // the account is free again: logging in with it signs up a new user
    const again = await wechatLogin(new ConsoleClient(server.url), id);
    expect(again.body.success).toBe(true);
    expect(again.body.data.id).not.toBe(uid);
  });

  it('two sign-up callbacks for the same WeChat account at once make one user, and both log into it', async () => {
    const id = wechatId();
    const before = await userCount();
    wx.holdUntil = 2;
    const [a, b] = await Promise.all([
      new ConsoleClient(server.url).get(`/api/oauth/wechat?code=${wx.issueCode(id)}`),
      new ConsoleClient(server.url).get(`/api/oauth/wechat?code=${wx.issueCode(id)}`),
    ]);
    expect(a.body.success, JSON.stringify(a.body)).toBe(true);
    expect(b.body.success, JSON.stringify(b.body)).toBe(true);
    expect(a.body.data.id).toBe(b.body.data.id);
    expect(await holders('wechat_id', id)).toEqual([a.body.data.id]);
    expect(await userCount()).toBe(before + 1);
    const claim = await server.ctx.db
      .selectFrom('identity_claims')
      .selectAll()
      .where('provider', '=', 'wechat')
      .where('external_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(Number(claim.user_id)).toBe(a.body.data.id);
  });

  it('two users binding the same WeChat account at once: one gets it, the other is told it is bound', async () => {
    const id = wechatId();
    const [u1, u2] = [await registerAndLogin(server), await registerAndLogin(server)];
    wx.holdUntil = 2;
    const answers = await Promise.all([
      u1.client.post('/api/oauth/wechat/bind', { code: wx.issueCode(id) }),
      u2.client.post('/api/oauth/wechat/bind', { code: wx.issueCode(id) }),
    ]);
    const bodies = answers.map((r) => r.body);
    expect(bodies).toContainEqual({ success: true, message: '' });
    expect(bodies).toContainEqual({ success: false, message: '该微信账号已被绑定' });
    const winner = bodies[0].success ? u1.id : u2.id;
    expect(await holders('wechat_id', id)).toEqual([winner]);
  });

  it('a claim whose holder lost the account outside this server is taken over', async () => {
    const a = await registerAndLogin(server);
    const id = wechatId();
    expect((await a.client.post('/api/oauth/wechat/bind', { code: wx.issueCode(id) })).body.success).toBe(true);
    // cleared behind the server's back (a manual edit): the claim is left pointing at a
    await server.ctx.db.updateTable('users').set({ wechat_id: '' }).where('id', '=', a.id).execute();
    const b = await registerAndLogin(server);
    expect((await b.client.post('/api/oauth/wechat/bind', { code: wx.issueCode(id) })).body.success).toBe(true);
    expect(await holders('wechat_id', id)).toEqual([b.id]);
  });
});
