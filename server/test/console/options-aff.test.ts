import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { DEFAULT_MODEL_RATIO } from '../../src/services/pricing/defaults.js';
import { registerAndLogin, setOption, setupAndLoginRoot } from './fixtures.js';

await describeEachDb('options and invites', (kind) => {
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

  it('lists options without credentials', async () => {
    await setOption(root, 'SMTPToken', 'smtp-password');
    await setOption(root, 'GitHubClientSecret', 'gh-secret');
    const res = await root.get('/api/option/');
    expect(res.body.success).toBe(true);
    const keys = new Set((res.body.data as Array<{ key: string; value: string }>).map((o) => o.key));
    expect(keys.has('SystemName')).toBe(true);
    expect(keys.has('GitHubClientId')).toBe(true);
    for (const secret of [
      'SMTPToken',
      'GitHubClientSecret',
      'TurnstileSecretKey',
      'EpayKey',
      'TelegramBotToken',
      'WeChatServerToken',
      'oidc.client_secret',
      'WorkerValidKey',
    ]) {
      expect(keys.has(secret), secret).toBe(false);
    }
    expect(JSON.stringify(res.body)).not.toContain('smtp-password');
    const noSlash = await root.get('/api/option');
    expect(noSlash.body.data.length).toBe(res.body.data.length);
  });

  it('stores booleans and numbers as text and validates values', async () => {
    await setOption(root, 'DrawingEnabled', false);
    expect(await stored('DrawingEnabled')).toBe('false');
    await setOption(root, 'QuotaForNewUser', 2500);
    expect(await stored('QuotaForNewUser')).toBe('2500');
    await setOption(root, 'SystemName', '我的网关');
    expect((await new ConsoleClient(server.url).get('/api/status')).body.data.system_name).toBe('我的网关');

    const refuse = async (key: string, value: unknown, message: string) => {
      const before = await stored(key);
      const res = await root.put('/api/option/', { key, value });
      expect(res.body, key).toEqual({ success: false, message });
      expect(await stored(key)).toBe(before);
    };
    await refuse('NoSuchOption', 'x', '未知的配置项：NoSuchOption');
    await refuse('DrawingEnabled', 'yes', 'DrawingEnabled 的值必须是 true 或 false');
    await refuse('QuotaPerUnit', 'abc', 'QuotaPerUnit 的值必须是数字');
    await refuse('ModelRatio', '{bad json', 'ModelRatio 不是合法的 JSON 字符串');
    await refuse('Chats', '[', 'Chats 不是合法的 JSON 字符串');
    await refuse('GroupRatio', '[1,2]', 'GroupRatio 不是合法的 JSON 字符串');
    await refuse('GroupRatio', '{"default":1,"cheap":-0.5}', '分组 cheap 的倍率不能为负数');
    await refuse('EmailDomainWhitelist', 'gmail.com,not a domain', '邮箱域名白名单格式不正确');
    await refuse('RelayErrorLanguage', 'fr', 'RelayErrorLanguage 的值必须是 zh 或 en');
    await refuse(
      'GitHubOAuthEnabled',
      true,
      '无法启用 GitHub OAuth，请先填入 GitHub Client Id 以及 GitHub Client Secret！',
    );
    await refuse('oidc.enabled', 'true', '无法启用 OIDC 登录，请先填入 OIDC Client Id 以及 OIDC Client Secret！');
    await refuse(
      'LinuxDOOAuthEnabled',
      true,
      '无法启用 LinuxDO OAuth，请先填入 LinuxDO Client Id 以及 LinuxDO Client Secret！',
    );
    await refuse('WeChatAuthEnabled', true, '无法启用微信登录，请先填入微信登录相关配置信息！');
    await refuse('TurnstileCheckEnabled', true, '无法启用 Turnstile 校验，请先填入 Turnstile 校验相关配置信息！');
    await refuse('TelegramOAuthEnabled', true, '无法启用 Telegram OAuth，请先填入 Telegram Bot Token！');
    await setOption(root, 'EmailDomainWhitelist', '');
    await refuse('EmailDomainRestrictionEnabled', true, '无法启用邮箱域名限制，请先填入限制的邮箱域名！');

    // with the credentials saved first, the switches turn on (the logins themselves: test/console/oauth*.test.ts)
    await setOption(root, 'TurnstileSiteKey', 'site-key');
    await setOption(root, 'TurnstileCheckEnabled', true);
    await setOption(root, 'TurnstileCheckEnabled', false);
    await setOption(root, 'WeChatServerAddress', 'https://wechat.example.com');
    await setOption(root, 'WeChatAuthEnabled', true);
    await setOption(root, 'GitHubClientId', 'gh-id');
    await setOption(root, 'GitHubOAuthEnabled', true);
    const status = (await new ConsoleClient(server.url).get('/api/status')).body.data;
    expect(status).toMatchObject({ wechat_login: true, github_oauth: true, github_client_id: 'gh-id' });
    await setOption(root, 'GitHubOAuthEnabled', false);
    await setOption(root, 'WeChatAuthEnabled', false);
    await setOption(root, 'GroupRatio', '{"default":1,"vip":1.5,"free":0}');
    expect((await root.get('/api/group/')).body.data).toEqual(['default', 'vip', 'free']);

    const badBody = await fetch(server.url + '/api/option/', {
      method: 'PUT',
      headers: { 'content-type': 'application/json', cookie: root.cookie, 'New-Api-User': String(root.userId) },
      body: '{not json',
    });
    expect(badBody.status).toBe(400);
    expect(((await badBody.json()) as any).success).toBe(false);
    expect((await root.put('/api/option/', { value: 'x' })).status).toBe(400);
  });

  it('resets ModelRatio to the compiled defaults', async () => {
    await setOption(root, 'ModelRatio', '{"only-model":3}');
    expect(server.ctx.options.json('ModelRatio', {})).toEqual({ 'only-model': 3 });
    const res = await root.post('/api/option/rest_model_ratio');
    expect(res.body).toEqual({ success: true, message: '' });
    expect(JSON.parse((await stored('ModelRatio'))!)).toEqual(DEFAULT_MODEL_RATIO);
    expect(server.ctx.options.json('ModelRatio', {})).toEqual(DEFAULT_MODEL_RATIO);
  });

  it('pays invite rewards on registration and writes system logs', async () => {
    await setOption(root, 'QuotaForNewUser', 1000);
    await setOption(root, 'QuotaForInvitee', 200);
    await setOption(root, 'QuotaForInviter', 3_000_000);
    const inviter = await registerAndLogin(server);
    const aff = await inviter.client.get('/api/user/aff');
    expect(aff.body.data).toMatch(/^[0-9A-Za-z]{4}$/);
    expect((await inviter.client.get('/api/user/aff')).body.data).toBe(aff.body.data);

    const invitee = await registerAndLogin(server, undefined, undefined, { aff_code: aff.body.data });
    const inviteeRow = await server.ctx.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', invitee.id)
      .executeTakeFirstOrThrow();
    expect(inviteeRow.quota).toBe(1200);
    expect(inviteeRow.inviter_id).toBe(inviter.id);
    expect(inviteeRow.aff_code).not.toBe(aff.body.data);
    const inviterRow = await server.ctx.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', inviter.id)
      .executeTakeFirstOrThrow();
    expect(inviterRow).toMatchObject({ quota: 1000, aff_count: 1, aff_quota: 3_000_000, aff_history: 3_000_000 });

    const logs = await server.ctx.logDb
      .selectFrom('logs')
      .select(['user_id', 'type', 'content'])
      .where('user_id', 'in', [inviter.id, invitee.id])
      .orderBy('id')
      .execute();
    expect(logs).toEqual([
      { user_id: inviter.id, type: 4, content: '新用户注册赠送 ＄0.002000 额度' },
      { user_id: invitee.id, type: 4, content: '新用户注册赠送 ＄0.002000 额度' },
      { user_id: invitee.id, type: 4, content: '使用邀请码赠送 ＄0.000400 额度' },
      { user_id: inviter.id, type: 4, content: '邀请用户赠送 ＄6.000000 额度' },
    ]);

    // an unknown code registers without rewards
    const stranger = await registerAndLogin(server, undefined, undefined, { aff_code: 'zzzz-none' });
    const strangerRow = await server.ctx.db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', stranger.id)
      .executeTakeFirstOrThrow();
    expect(strangerRow).toMatchObject({ quota: 1000, inviter_id: 0 });

    // a user the admin creates starts with the same quota and its log line, as in new-api (issue 46, point 9)
    const made = `made${Date.now() % 1_000_000}`;
    expect((await root.post('/api/user/', { username: made, password: 'password123' })).body).toEqual({
      success: true,
      message: '',
    });
    const madeRow = await server.ctx.db
      .selectFrom('users')
      .select(['id', 'quota'])
      .where('username', '=', made)
      .executeTakeFirstOrThrow();
    expect(madeRow.quota).toBe(1000);
    expect(
      await server.ctx.logDb.selectFrom('logs').select(['type', 'content']).where('user_id', '=', madeRow.id).execute(),
    ).toEqual([{ type: 4, content: '新用户注册赠送 ＄0.002000 额度' }]);
    await setOption(root, 'QuotaForNewUser', 0);
    await setOption(root, 'QuotaForInvitee', 0);
    await setOption(root, 'QuotaForInviter', 0);
  });

  it('transfers invite quota atomically: minimum one unit, never more than aff_quota, no double spend', async () => {
    const u = await registerAndLogin(server);
    await server.ctx.db.updateTable('users').set({ aff_quota: 1_200_000, quota: 7 }).where('id', '=', u.id).execute();
    expect((await u.client.post('/api/user/aff_transfer', { quota: 499_999 })).body).toEqual({
      success: false,
      message: '划转失败 转移额度最小为＄1.000000 额度！',
    });
    expect((await u.client.post('/api/user/aff_transfer', { quota: 2_000_000 })).body).toEqual({
      success: false,
      message: '划转失败 邀请额度不足！',
    });
    expect((await u.client.post('/api/user/aff_transfer', { quota: 'much' })).body).toEqual({
      success: false,
      message: '无效的参数',
    });

    // ten concurrent transfers of 500000 against 1200000: exactly two succeed
    const results = await Promise.all(
      Array.from({ length: 10 }, () => u.client.post('/api/user/aff_transfer', { quota: 500_000 })),
    );
    const wins = results.filter((r) => r.body.success);
    expect(wins).toHaveLength(2);
    expect(wins[0].body.message).toBe('划转成功');
    const row = await server.ctx.db.selectFrom('users').selectAll().where('id', '=', u.id).executeTakeFirstOrThrow();
    expect(row.aff_quota).toBe(200_000);
    expect(row.quota).toBe(1_000_007);
    expect(row.aff_quota + row.quota).toBe(1_200_007);
  });
});
