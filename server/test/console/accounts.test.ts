import { afterAll, beforeAll, expect, it } from 'vitest';
import bcrypt from 'bcryptjs';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { registerAndLogin, setOption, setupAndLoginRoot, uname } from './fixtures.js';

await describeEachDb('accounts', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  beforeAll(async () => {
    server = await startTestServer({
      kind,
      env: { CRITICAL_RATE_LIMIT_ENABLE: 'false', GENERATE_DEFAULT_TOKEN: 'true' },
    });
    root = await setupAndLoginRoot(server);
  });
  afterAll(async () => server?.close());

  it('registers with validation, creates the default token, and logs in by username or email', async () => {
    const c = new ConsoleClient(server.url);
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ username: '', password: 'password123' }, '无效的参数'],
      [{ username: 'abcdefghijklm', password: 'password123' }, '输入不合法 用户名长度不能超过 12 个字符'],
      [{ username: 'shortpw', password: '1234567' }, '输入不合法 密码长度不得小于 8 位'],
      [{ username: 'longpw', password: 'x'.repeat(21) }, '输入不合法 密码长度不得大于 20 位'],
    ];
    for (const [body, message] of cases)
      expect((await c.post('/api/user/register', body)).body).toEqual({ success: false, message });

    const name = uname('reg');
    const reg = await c.post('/api/user/register', { username: name, password: 'password123' });
    expect(reg.body).toEqual({ success: true, message: '' });
    const dup = await c.post('/api/user/register', { username: name, password: 'password123' });
    expect(dup.body).toEqual({ success: false, message: '用户名已存在，或已注销' });

    const row = await server.ctx.db
      .selectFrom('users')
      .selectAll()
      .where('username', '=', name)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ role: 1, status: 1, group: 'default', display_name: name, quota: 0 });
    expect(row.aff_code).toMatch(/^[0-9A-Za-z]{4}$/);
    expect(await bcrypt.compare('password123', row.password)).toBe(true);
    const tokens = await server.ctx.db.selectFrom('tokens').selectAll().where('user_id', '=', row.id).execute();
    expect(tokens).toHaveLength(1);
    expect(tokens[0].name).toBe(`${name}的初始令牌`);
    expect(tokens[0].key).toMatch(/^[0-9A-Za-z]{48}$/);
    expect(!!tokens[0].unlimited_quota).toBe(true);
    expect(tokens[0].expired_time).toBe(-1);

    const login = await c.login(name, 'password123');
    expect(login.body).toEqual({
      success: true,
      message: '',
      data: { id: row.id, username: name, display_name: name, role: 1, status: 1, group: 'default' },
    });

    await server.ctx.db
      .updateTable('users')
      .set({ email: `${name}@example.com` })
      .where('id', '=', row.id)
      .execute();
    const byEmail = await new ConsoleClient(server.url).login(`${name}@example.com`, 'password123');
    expect(byEmail.body.data.id).toBe(row.id);
  });

  it('gives one failure message for unknown users, wrong passwords, disabled and deleted users', async () => {
    const msg = { success: false, message: '用户名或密码错误，或用户已被封禁' };
    const u = await registerAndLogin(server);
    const c = new ConsoleClient(server.url);
    expect((await c.post('/api/user/login', { username: 'nobody-here', password: 'password123' })).body).toEqual(msg);
    expect((await c.post('/api/user/login', { username: u.username, password: 'wrong-password' })).body).toEqual(msg);
    expect((await c.post('/api/user/login', { username: '', password: '' })).body).toEqual({
      success: false,
      message: '无效的参数',
    });

    const disabled = await root.post('/api/user/manage', { id: u.id, action: 'disable' });
    expect(disabled.body).toEqual({ success: true, message: '', data: { role: 1, status: 2 } });
    expect((await c.post('/api/user/login', { username: u.username, password: u.password })).body).toEqual(msg);
    // the still-open session of a banned user ends at once
    const banned = await u.client.get('/api/user/self');
    expect(banned.status).toBe(401);
    expect(banned.body).toEqual({ success: false, message: '无权进行此操作，未登录且未提供 access token' });
    await root.post('/api/user/manage', { id: u.id, action: 'enable' });
    expect((await c.post('/api/user/login', { username: u.username, password: u.password })).body.success).toBe(true);

    await root.post('/api/user/manage', { id: u.id, action: 'delete' });
    expect((await c.post('/api/user/login', { username: u.username, password: u.password })).body).toEqual(msg);
    expect(
      (
        await new ConsoleClient(server.url).post('/api/user/register', {
          username: u.username,
          password: 'password123',
        })
      ).body.message,
    ).toBe('用户名已存在，或已注销');
  });

  it('accepts a password hash written by new-api (Go bcrypt $2a$)', async () => {
    const name = uname('go');
    const goHash = (await bcrypt.hash('from-go-123', 10)).replace(/^\$2b\$/, '$2a$');
    await server.ctx.db.insertInto('users').values({ username: name, password: goHash, setting: '' }).execute();
    expect((await new ConsoleClient(server.url).login(name, 'from-go-123')).body.success).toBe(true);
  });

  it('honours the register and login switches', async () => {
    const c = new ConsoleClient(server.url);
    await setOption(root, 'RegisterEnabled', false);
    expect((await c.post('/api/user/register', { username: uname(), password: 'password123' })).body).toEqual({
      success: false,
      message: '管理员关闭了新用户注册',
    });
    await setOption(root, 'RegisterEnabled', true);
    await setOption(root, 'PasswordRegisterEnabled', 'false');
    expect((await c.post('/api/user/register', { username: uname(), password: 'password123' })).body.message).toBe(
      '管理员关闭了通过密码进行注册，请使用第三方账户验证的形式进行注册',
    );
    await setOption(root, 'PasswordRegisterEnabled', 'true');
    await setOption(root, 'PasswordLoginEnabled', false);
    expect((await c.post('/api/user/login', { username: 'root', password: 'x' })).body).toEqual({
      success: false,
      message: '管理员关闭了密码登录',
    });
    await setOption(root, 'PasswordLoginEnabled', true);
    await setOption(root, 'EmailVerificationEnabled', true);
    expect((await c.post('/api/user/register', { username: uname(), password: 'password123' })).body.message).toBe(
      '管理员开启了邮箱验证，请输入邮箱地址和验证码',
    );
    expect(
      (
        await c.post('/api/user/register', {
          username: uname(),
          password: 'password123',
          email: 'a@b.com',
          verification_code: '123456',
        })
      ).body.message,
    ).toBe('验证码错误或已过期');
    await setOption(root, 'EmailVerificationEnabled', false);
  });

  it('sets an HttpOnly, SameSite=Strict, 30-day session cookie and clears it on logout', async () => {
    const u = await registerAndLogin(server);
    const res = await fetch(server.url + '/api/user/login', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: u.username, password: u.password }),
    });
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('session='))!;
    expect(cookie).toBeTruthy();
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    expect(cookie).toMatch(/Max-Age=2592000/);
    expect(cookie).toMatch(/Path=\//);

    expect((await u.client.get('/api/user/self')).body.data.id).toBe(u.id);
    const out = await u.client.get('/api/user/logout');
    expect(out.body).toEqual({ success: true, message: '' });
    expect(u.client.cookie).toBe('');
    expect((await u.client.get('/api/user/self')).status).toBe(401);
  });

  it('enforces New-Api-User and accepts the access token with or without Bearer', async () => {
    const u = await registerAndLogin(server);
    const noHeader = await u.client.get('/api/user/self', { 'New-Api-User': '' });
    expect(noHeader.status).toBe(401);
    const mismatch = await u.client.get('/api/user/self', { 'New-Api-User': String(u.id + 1000) });
    expect(mismatch.status).toBe(401);
    expect(mismatch.body.success).toBe(false);

    const tokenRes = await u.client.get('/api/user/token');
    expect(tokenRes.body.success).toBe(true);
    const token: string = tokenRes.body.data;
    expect(token).toMatch(/^[0-9A-Za-z]{32}$/);
    const stored = await server.ctx.db
      .selectFrom('users')
      .select('access_token')
      .where('id', '=', u.id)
      .executeTakeFirstOrThrow();
    expect(stored.access_token?.trim()).toBe(token);

    for (const authorization of [token, `Bearer ${token}`]) {
      const res = await fetch(server.url + '/api/user/self', {
        headers: { authorization, 'New-Api-User': String(u.id) },
      });
      const body = (await res.json()) as any;
      expect(res.status).toBe(200);
      expect(body.data).toMatchObject({ id: u.id, username: u.username, access_token: token });
      expect(body.data).not.toHaveProperty('password');
    }
    const noUserHeader = await fetch(server.url + '/api/user/self', { headers: { authorization: token } });
    expect(noUserHeader.status).toBe(401);
    const wrongUser = await fetch(server.url + '/api/user/self', {
      headers: { authorization: token, 'New-Api-User': '1' },
    });
    expect(wrongUser.status).toBe(401);
    const bad = await fetch(server.url + '/api/user/self', {
      headers: { authorization: 'Bearer nope', 'New-Api-User': String(u.id) },
    });
    expect(((await bad.json()) as any).success).toBe(false);
    const none = await fetch(server.url + '/api/user/self', { headers: { 'New-Api-User': String(u.id) } });
    expect(none.status).toBe(401);

    // a new token replaces the old one
    const second = (await u.client.get('/api/user/token')).body.data;
    expect(second).not.toBe(token);
    const old = await fetch(server.url + '/api/user/self', {
      headers: { authorization: token, 'New-Api-User': String(u.id) },
    });
    expect(((await old.json()) as any).success).toBe(false);
  });

  it('updates and deletes the own account', async () => {
    const u = await registerAndLogin(server);
    const self = (await u.client.get('/api/user/self')).body.data;
    expect(self).toMatchObject({ id: u.id, username: u.username, quota: 0, aff_history_quota: 0, DeletedAt: null });

    expect((await u.client.put('/api/user/self', { display_name: 'x'.repeat(21) })).body.success).toBe(false);
    expect((await u.client.put('/api/user/self', { password: 'short' })).body.success).toBe(false);
    expect((await u.client.put('/api/user/self', { username: 'root' })).body).toEqual({
      success: false,
      message: '用户名已存在，或已注销',
    });
    expect((await u.client.put('/api/user/self', { password: 'newpassword1' })).body).toEqual({
      success: false,
      message: '请输入原密码',
    });
    const upd = await u.client.put('/api/user/self', {
      display_name: '新名字',
      password: 'newpassword1',
      original_password: u.password,
    });
    expect(upd.body).toEqual({ success: true, message: '' });
    expect(
      (await u.client.put('/api/user/self', { password: 'another-pass1', original_password: 'wrong' })).body,
    ).toEqual({
      success: false,
      message: '原密码错误',
    });
    const row = await server.ctx.db.selectFrom('users').selectAll().where('id', '=', u.id).executeTakeFirstOrThrow();
    expect(row.display_name).toBe('新名字');
    expect(row.username).toBe(u.username);
    expect(await bcrypt.compare('newpassword1', row.password)).toBe(true);
    expect((await new ConsoleClient(server.url).login(u.username, u.password)).body.success).toBe(false);

    expect((await root.delete('/api/user/self')).body).toEqual({ success: false, message: '不能删除超级管理员账户' });
    const del = await u.client.delete('/api/user/self');
    expect(del.body).toEqual({ success: true, message: '' });
    const gone = await server.ctx.db
      .selectFrom('users')
      .select('deleted_at')
      .where('id', '=', u.id)
      .executeTakeFirstOrThrow();
    expect(gone.deleted_at).toBeTruthy();
    expect((await new ConsoleClient(server.url).login(u.username, 'newpassword1')).body.success).toBe(false);
  });

  it('reports usable groups and stores notification settings', async () => {
    const u = await registerAndLogin(server);
    await server.ctx.db.updateTable('users').set({ group: 'team-a' }).where('id', '=', u.id).execute();
    await setOption(root, 'GroupRatio', JSON.stringify({ default: 1, vip: 2, svip: 3, 'team-a': 0.5 }));
    const groups = await u.client.get('/api/user/self/groups');
    expect(groups.body.data).toEqual({
      default: { ratio: 1, desc: '默认分组' },
      vip: { ratio: 2, desc: 'vip分组' },
      'team-a': { ratio: 0.5, desc: '用户分组' },
    });
    const anon = await new ConsoleClient(server.url).get('/api/user/groups');
    expect(anon.body.data).toEqual({ default: { ratio: 1, desc: '默认分组' }, vip: { ratio: 2, desc: 'vip分组' } });

    const bad: Array<[Record<string, unknown>, string]> = [
      [{ notify_type: 'sms', quota_warning_threshold: 100 }, '无效的通知类型'],
      [{ notify_type: 'email', quota_warning_threshold: 0 }, '预警阈值必须大于0'],
      [{ notify_type: 'webhook', quota_warning_threshold: 100, webhook_url: '' }, 'Webhook地址不能为空'],
      [
        { notify_type: 'webhook', quota_warning_threshold: 100, webhook_url: 'http://hook.example.com' },
        'Webhook地址必须以https://开头',
      ],
      [{ notify_type: 'email', quota_warning_threshold: 100, notification_email: 'not-an-email' }, '无效的邮箱地址'],
    ];
    for (const [body, message] of bad)
      expect((await u.client.put('/api/user/setting', body)).body).toEqual({ success: false, message });
    const good = await u.client.put('/api/user/setting', {
      notify_type: 'webhook',
      quota_warning_threshold: 500000,
      webhook_url: 'https://hook.example.com/x',
      webhook_secret: 's3cret',
      accept_unset_model_ratio_model: true,
    });
    expect(good.body.success).toBe(true);
    const row = await server.ctx.db
      .selectFrom('users')
      .select('setting')
      .where('id', '=', u.id)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(row.setting)).toEqual({
      notify_type: 'webhook',
      quota_warning_threshold: 500000,
      webhook_url: 'https://hook.example.com/x',
      webhook_secret: 's3cret',
      accept_unset_model_ratio_model: true,
    });
  });
});
