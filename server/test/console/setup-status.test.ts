import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { ROOT } from './fixtures.js';

const STATUS_KEYS = [
  'version',
  'start_time',
  'email_verification',
  'github_oauth',
  'github_client_id',
  'linuxdo_oauth',
  'linuxdo_client_id',
  'telegram_oauth',
  'telegram_bot_name',
  'system_name',
  'logo',
  'footer_html',
  'wechat_qrcode',
  'wechat_login',
  'server_address',
  'price',
  'min_topup',
  'turnstile_check',
  'turnstile_site_key',
  'top_up_link',
  'docs_link',
  'quota_per_unit',
  'display_in_currency',
  'enable_batch_update',
  'enable_drawing',
  'enable_task',
  'enable_data_export',
  'data_export_default_time',
  'default_collapse_sidebar',
  'enable_online_topup',
  'mj_notify_enabled',
  'chats',
  'demo_site_enabled',
  'self_use_mode_enabled',
  'oidc_enabled',
  'oidc_client_id',
  'oidc_authorization_endpoint',
  'setup',
  'chat_link',
  'chat_link2',
];

await describeEachDb('setup and status', (kind) => {
  let server: TestServer;
  let anon: ConsoleClient;
  beforeAll(async () => {
    server = await startTestServer({ kind, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false', VERSION: 'v9.9.9-test' } });
    anon = new ConsoleClient(server.url);
  });
  afterAll(async () => server?.close());

  it('reports not-set-up, validates the wizard, survives a concurrent double submit and refuses a second setup', async () => {
    const before = await anon.get('/api/setup');
    expect(before.status).toBe(200);
    expect(before.body).toEqual({
      success: true,
      message: '',
      data: { status: false, root_init: false, database_type: kind },
    });
    expect((await anon.get('/api/status')).body.data.setup).toBe(false);

    const base = {
      username: ROOT.username,
      password: ROOT.password,
      confirmPassword: ROOT.password,
      SelfUseModeEnabled: true,
      DemoSiteEnabled: false,
    };
    const bad: Array<[Record<string, unknown>, string]> = [
      [{ ...base, username: '' }, '用户名不能为空'],
      [{ ...base, username: 'a'.repeat(13) }, '用户名长度不能超过12个字符'],
      [{ ...base, confirmPassword: 'other-pass' }, '两次输入的密码不一致'],
      [{ ...base, password: 'short', confirmPassword: 'short' }, '密码长度至少为8个字符'],
      [{ ...base, SelfUseModeEnabled: 'maybe' }, '请求参数有误'],
    ];
    for (const [body, message] of bad) {
      const res = await anon.post('/api/setup', body);
      expect(res.status, message).toBe(400);
      expect(res.body).toEqual({ success: false, message });
    }
    expect(await server.ctx.db.selectFrom('users').select('id').execute()).toEqual([]);
    expect(await server.ctx.db.selectFrom('setups').select('id').execute()).toEqual([]);

    // Two wizards submitted at the same moment: exactly one wins, one root, one setups row.
    const [a, b] = await Promise.all([
      anon.post('/api/setup', base),
      anon.post('/api/setup', { ...base, username: 'root2' }),
    ]);
    const results = [a, b].map((r) => r.body.success).sort();
    expect(results).toEqual([false, true]);
    const loser = a.body.success ? b : a;
    expect(loser.status).toBe(400);
    expect(loser.body.message).toBe('系统已经初始化完成');

    const users = await server.ctx.db.selectFrom('users').selectAll().execute();
    expect(users).toHaveLength(1);
    expect(users[0]).toMatchObject({ role: 100, status: 1, quota: 100000000, display_name: 'Root User' });
    expect(users[0].password).toMatch(/^\$2[aby]\$10\$/);
    expect(await server.ctx.db.selectFrom('setups').select(['id', 'version']).execute()).toEqual([
      { id: 1, version: 'v9.9.9-test' },
    ]);
    const opts = await server.ctx.db
      .selectFrom('options')
      .selectAll()
      .where('key', 'in', ['SelfUseModeEnabled', 'DemoSiteEnabled'])
      .orderBy('key')
      .execute();
    expect(opts).toEqual([
      { key: 'DemoSiteEnabled', value: 'false' },
      { key: 'SelfUseModeEnabled', value: 'true' },
    ]);

    const after = await anon.get('/api/setup');
    expect(after.body.data).toMatchObject({ status: true, root_init: true });
    const again = await anon.post('/api/setup', { ...base, username: 'other' });
    expect(again.status).toBe(400);
    expect(again.body).toEqual({ success: false, message: '系统已经初始化完成' });
    expect(await server.ctx.db.selectFrom('users').select('id').execute()).toHaveLength(1);

    const root = new ConsoleClient(server.url);
    const winner = a.body.success ? 'root' : 'root2';
    expect((await root.login(winner, ROOT.password)).body.success).toBe(true);
  });

  it('lets only one of two nodes sharing a database finish setup', async () => {
    const database = await createTestDatabase(kind);
    const env = { CRITICAL_RATE_LIMIT_ENABLE: 'false' };
    const n1 = await startTestServer({ kind, env, database });
    const n2 = await startTestServer({ kind, env, database });
    try {
      const body = (username: string) => ({
        username,
        password: ROOT.password,
        confirmPassword: ROOT.password,
        SelfUseModeEnabled: false,
        DemoSiteEnabled: false,
      });
      const [a, b] = await Promise.all([
        new ConsoleClient(n1.url).post('/api/setup', body('nodeone')),
        new ConsoleClient(n2.url).post('/api/setup', body('nodetwo')),
      ]);
      expect([a.body.success, b.body.success].sort()).toEqual([false, true]);
      expect((a.body.success ? b : a).status).toBe(400);
      const roots = await n1.ctx.db.selectFrom('users').select('username').where('role', '=', 100).execute();
      expect(roots).toHaveLength(1);
      expect(await n1.ctx.db.selectFrom('setups').select('id').execute()).toHaveLength(1);
      expect((await new ConsoleClient(n2.url).get('/api/setup')).body.data.status).toBe(true);
    } finally {
      await n2.close();
      await n1.close();
      await database.drop();
    }
  });

  it('treats a database that already has a root (older installs) as set up', async () => {
    const database = await createTestDatabase(kind);
    const node = await startTestServer({ kind, database });
    try {
      await node.ctx.db
        .insertInto('users')
        .values({ username: 'oldroot', password: 'x', role: 100, setting: '' })
        .execute();
      const res = await new ConsoleClient(node.url).get('/api/setup');
      expect(res.body.data).toMatchObject({ status: true, root_init: true });
      expect(await node.ctx.db.selectFrom('setups').select('id').execute()).toHaveLength(1);
      expect(
        (
          await new ConsoleClient(node.url).post('/api/setup', {
            username: 'x',
            password: 'password123',
            confirmPassword: 'password123',
          })
        ).status,
      ).toBe(400);
    } finally {
      await node.close();
      await database.drop();
    }
  });

  it('GET /api/status carries every status field with the option values', async () => {
    const res = await anon.get('/api/status');
    expect(res.status).toBe(200);
    expect(res.body.success).toBe(true);
    for (const k of STATUS_KEYS) expect(res.body.data, k).toHaveProperty(k);
    const d = res.body.data;
    expect(d.version).toBe('v9.9.9-test');
    expect(d.start_time).toBe(server.ctx.startTime);
    expect(d.setup).toBe(true);
    expect(d.self_use_mode_enabled).toBe(true);
    expect(d.demo_site_enabled).toBe(false);
    expect(d.quota_per_unit).toBe(500000);
    expect(d.price).toBe(7.3);
    expect(d.system_name).toBe('New API');
    expect(d.docs_link).toBe('https://docs.newapi.pro');
    expect(Array.isArray(d.chats)).toBe(true);
    expect(d.enable_online_topup).toBe(false);

    // enable_online_topup needs all three payment options
    await server.ctx.options.set('PayAddress', 'https://pay.example.com');
    await server.ctx.options.set('EpayId', '1001');
    expect((await anon.get('/api/status')).body.data.enable_online_topup).toBe(false);
    await server.ctx.options.set('EpayKey', 'k');
    expect((await anon.get('/api/status')).body.data.enable_online_topup).toBe(true);
  });

  it('serves notice, about and home page content from options', async () => {
    await server.ctx.options.set('Notice', '# 公告');
    await server.ctx.options.set('About', 'https://example.com/about');
    await server.ctx.options.set('HomePageContent', '<h1>hi</h1>');
    expect((await anon.get('/api/notice')).body).toEqual({ success: true, message: '', data: '# 公告' });
    expect((await anon.get('/api/about')).body).toEqual({
      success: true,
      message: '',
      data: 'https://example.com/about',
    });
    expect((await anon.get('/api/home_page_content')).body).toEqual({
      success: true,
      message: '',
      data: '<h1>hi</h1>',
    });
  });

  it('tags every response with X-Oneapi-Request-Id and answers unknown /api paths with a JSON 404', async () => {
    const res = await anon.get('/api/status');
    expect(res.headers.get('x-oneapi-request-id')).toMatch(/^\d{14}\d{9}[A-Za-z0-9]{8}$/);
    const missing = await anon.get('/api/definitely/not/here');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('x-oneapi-request-id')).toBeTruthy();
    expect(missing.body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(missing.body.error.message).toContain('/api/definitely/not/here');
  });
});
