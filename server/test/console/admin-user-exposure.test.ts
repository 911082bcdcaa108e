// An admin must not be able to become root: user lists, searches and reads never carry anyone's access token, settings
// (webhook secret) or password hash, and root's own access token acts as root only.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { setupAndLoginRoot, userWithRole } from './fixtures.js';

/** What the console's user page shows, and nothing else. */
const ADMIN_VIEW_KEYS = [
  'DeletedAt',
  'aff_count',
  'aff_history_quota',
  'display_name',
  'email',
  'github_id',
  'group',
  'id',
  'inviter_id',
  'linux_do_id',
  'oidc_id',
  'quota',
  'request_count',
  'role',
  'status',
  'telegram_id',
  'used_quota',
  'username',
  'wechat_id',
];

await describeEachDb('admin user reads expose no credentials', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let rootId: number;
  beforeAll(async () => {
    server = await startTestServer({ kind, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false' } });
    root = await setupAndLoginRoot(server);
    rootId = root.userId!;
  });
  afterAll(async () => server?.close());

  /** Gives the user a webhook secret, as the personal page would store it. */
  async function setWebhookSecret(id: number, secret: string) {
    const setting = JSON.stringify({
      notify_type: 'webhook',
      quota_warning_threshold: 1000,
      webhook_url: 'https://hooks.example.com/x',
      webhook_secret: secret,
    });
    await server.ctx.db.updateTable('users').set({ setting }).where('id', '=', id).execute();
  }

  it('an admin lists, searches and reads users and finds no token, secret or hash of anyone; root token acts as root only', async () => {
    const admin = await userWithRole(server, root, 10);
    const user = await userWithRole(server, root, 1);

    // root, the admin and a user each obtain an access token the legitimate way, and store a webhook secret
    const rootToken: string = (await root.get('/api/user/token')).body.data;
    const adminToken: string = (await admin.client.get('/api/user/token')).body.data;
    const userToken: string = (await user.client.get('/api/user/token')).body.data;
    for (const t of [rootToken, adminToken, userToken]) expect(t).toMatch(/^[0-9A-Za-z]{32}$/);
    await setWebhookSecret(rootId, 'root-webhook-secret-1');
    await setWebhookSecret(admin.id, 'admin-webhook-secret-2');
    await setWebhookSecret(user.id, 'user-webhook-secret-3');
    const hashes = (await server.ctx.db.selectFrom('users').select('password').execute()).map((r) => r.password);
    const secrets = [rootToken, adminToken, userToken, 'webhook-secret', ...hashes];

    const a = admin.client;
    const reads = [
      await a.get('/api/user/?p=1&page_size=100'),
      await a.get('/api/user/search?keyword=&p=1&page_size=100'),
      await a.get('/api/user/search?keyword=root'),
      await a.get(`/api/user/search?keyword=${rootId}`),
      await a.get(`/api/user/${rootId}`),
      await a.get(`/api/user/${user.id}`),
      // root's own reads of others are no different
      await root.get('/api/user/?p=1&page_size=100'),
      await root.get(`/api/user/${admin.id}`),
    ];
    for (const res of reads) {
      const text = JSON.stringify(res.body);
      for (const s of secrets) expect(text).not.toContain(s);
      expect(text).not.toMatch(/access_token|setting|password|aff_code|aff_quota"/);
    }
    // the list and search do include root and the others, with exactly the fields the user page shows
    const listed = reads[0].body.data.items as Record<string, unknown>[];
    expect(listed.map((u) => u.id)).toEqual(expect.arrayContaining([rootId, admin.id, user.id]));
    for (const u of listed) expect(Object.keys(u).sort()).toEqual(ADMIN_VIEW_KEYS);
    expect((reads[2].body.data.items as Record<string, unknown>[]).map((u) => u.id)).toContain(rootId);
    expect(reads[5].body.data).toMatchObject({ id: user.id, username: user.username, role: 1, status: 1, quota: 0 });
    expect(Object.keys(reads[5].body.data).sort()).toEqual(ADMIN_VIEW_KEYS);
    expect(reads[4].body).toEqual({ success: false, message: '无权获取同级或更高等级用户的信息' });

    // each user still sees their own token and secret where the console needs them
    const own = (await a.get('/api/user/self')).body.data;
    expect(own.access_token).toBe(adminToken);
    expect(JSON.parse(own.setting).webhook_secret).toBe('admin-webhook-secret-2');

    // root's token, obtained by root, works for root and for nobody else
    const withToken = (token: string, as: number, path = '/api/option/') =>
      fetch(server.url + path, { headers: { authorization: `Bearer ${token}`, 'New-Api-User': String(as) } });
    const asRoot = await withToken(rootToken, rootId);
    expect(asRoot.status).toBe(200);
    expect(((await asRoot.json()) as any).success).toBe(true);
    const asAdmin = await withToken(rootToken, admin.id);
    expect(asAdmin.status).toBe(401);
    expect(((await asAdmin.json()) as any).success).toBe(false);
    const adminOwn = await withToken(adminToken, admin.id);
    expect(await adminOwn.json()).toEqual({ success: false, message: '无权进行此操作，权限不足' });
  });
});
