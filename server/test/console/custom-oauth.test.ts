// Custom OAuth providers against a local mock provider (mock-custom-oauth.ts): root's CRUD with the write-only
// secret and the validation, discovery through the public-address-only client (the mock's one port declared public
// through the client's test policy, as the webhook tests do), the login callback with its sign-up, login, bind and
// refusals, the bindings routes, and the login page's listing in /api/status.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describeEachDb } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient, type ApiResponse } from '../helpers/console-client.js';
import { registerAndLogin, setOption, setupAndLoginRoot, userWithRole } from './fixtures.js';
import { CUSTOM_CLIENT, startMockCustomOAuth, type MockCustomOAuth } from './mock-custom-oauth.js';
import { userUrlFetch } from '../../src/lib/safe-fetch.js';

const STATE_MISMATCH = { success: false, message: 'state is empty or not same' };
const BASE = '/api/custom-oauth-provider/';

interface IssuedState {
  state: string;
  cookie: string;
}

async function newState(c: ConsoleClient): Promise<IssuedState> {
  const res = await c.get('/api/oauth/state');
  const cookie = (res.headers.getSetCookie?.() ?? []).find((h) => h.startsWith('oauth_state='));
  expect(cookie).toBeTruthy();
  return { state: res.body.data as string, cookie: cookie!.split(';')[0] };
}

/** The provider's redirect back to /api/oauth/<slug>, with the browser's cookies. */
async function callback(
  c: ConsoleClient,
  slug: string,
  code: string,
  issued: IssuedState | null,
  state = issued?.state ?? '',
): Promise<ApiResponse> {
  const before = c.cookie;
  const sent = [before, issued?.cookie].filter(Boolean).join('; ');
  c.cookie = sent;
  const res = await c.get(`/api/oauth/${slug}?code=${code}&state=${state}`);
  if (c.cookie === sent) c.cookie = before;
  if (res.body?.success && res.body.data?.id) c.userId = res.body.data.id;
  return res;
}

await describeEachDb('custom OAuth providers', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let idp: MockCustomOAuth;
  let acmeId: number;

  const acme = () => ({
    name: 'Acme',
    slug: 'acme',
    icon: 'acme-icon',
    enabled: true,
    client_id: CUSTOM_CLIENT.id,
    client_secret: CUSTOM_CLIENT.secret,
    authorization_endpoint: `${idp.url}/authorize`,
    token_endpoint: `${idp.url}/token`,
    user_info_endpoint: `${idp.url}/userinfo`,
    scopes: 'openid profile',
    user_id_field: 'data.user.id',
    username_field: 'data.user.login',
    display_name_field: 'data.user.profile.nick',
    email_field: 'data.emails.0',
  });
  const person = (id: number, login: string, extra: Record<string, unknown> = {}) => ({
    data: { user: { id, login, profile: { nick: `Nick ${login}` } }, emails: [`${login}@acme.example.com`] },
    ...extra,
  });
  const login = async (c: ConsoleClient, id: number, name: string) =>
    callback(c, 'acme', idp.issueCode(person(id, name)), await newState(c));
  const providerRow = (id: number) =>
    server.ctx.db.selectFrom('custom_oauth_providers').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const bindingRows = (userId: number) =>
    server.ctx.db.selectFrom('user_oauth_bindings').selectAll().where('user_id', '=', userId).execute();
  const providerCount = async () =>
    (await server.ctx.db.selectFrom('custom_oauth_providers').select('id').execute()).length;

  beforeAll(async () => {
    idp = await startMockCustomOAuth();
    server = await startTestServer({ kind, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false' } });
    // the mock's port stands for a public host (discovery only reaches public addresses)
    userUrlFetch(server.ctx).policy = {
      treatAsPublic: (address, port) => address === '127.0.0.1' && port === idp.port,
    };
    root = await setupAndLoginRoot(server);
    await setOption(root, 'ServerAddress', 'https://gw.example.com');
  });
  afterAll(async () => {
    await server?.close();
    await idp?.close();
  });

  it('creates a provider, and never answers its client secret', async () => {
    const res = await root.post(BASE, acme());
    expect(res.body).toMatchObject({ success: true, message: '创建成功', data: { slug: 'acme', enabled: true } });
    acmeId = res.body.data.id;
    expect(res.body.data).not.toHaveProperty('client_secret');
    expect((await providerRow(acmeId)).client_secret).toBe(CUSTOM_CLIENT.secret);
    for (const read of [await root.get(BASE), await root.get(`${BASE}${acmeId}`)]) {
      expect(read.body.success).toBe(true);
      expect(JSON.stringify(read.body)).not.toContain(CUSTOM_CLIENT.secret);
      expect(JSON.stringify(read.body)).not.toContain('client_secret');
    }
    expect((await root.get(`${BASE}${acmeId}`)).body.data).toMatchObject({
      name: 'Acme',
      user_id_field: 'data.user.id',
      auth_style: 0,
      kind: 'oauth_code',
    });
  });

  it('refuses bad input and changes nothing', async () => {
    const before = await providerCount();
    const cases: Array<[Record<string, unknown>, string | RegExp]> = [
      [{ ...acme(), slug: 'Not a slug!' }, /^无效的请求参数: slug/],
      [{ ...acme(), slug: 'github' }, '该 Slug 与内置 OAuth 提供商冲突'],
      [{ ...acme(), slug: 'state' }, '该 Slug 与内置 OAuth 提供商冲突'],
      [{ ...acme(), slug: 'ACME' }, '该 Slug 已被使用'],
      [{ ...acme(), slug: 'other', token_endpoint: '' }, 'Token 端点不能为空'],
      [{ ...acme(), slug: 'other', token_endpoint: 'javascript:alert(1)' }, /^无效的请求参数: token_endpoint/],
      [{ ...acme(), slug: 'other', kind: 'jwt_direct' }, /^无效的请求参数: kind/],
      [{ ...acme(), slug: 'other', enabled: 'yes' }, /^无效的请求参数: enabled/],
      [{ ...acme(), slug: 'other', auth_style: 7 }, /^无效的请求参数: auth_style/],
      [{ ...acme(), slug: 'other', user_id_field: 'a..b' }, /^无效的请求参数: user_id_field/],
      [{ slug: 'nameless' }, /^无效的请求参数: name/],
    ];
    for (const [body, message] of cases) {
      const res = await root.post(BASE, body);
      expect(res.status).toBe(200);
      expect(res.body.success, JSON.stringify(body)).toBe(false);
      expect(res.body.message).toMatch(message);
    }
    expect(await providerCount()).toBe(before);
    // an update with a bad field leaves the row as it was
    const row = await providerRow(acmeId);
    expect((await root.put(`${BASE}${acmeId}`, { slug: 'discord' })).body).toEqual({
      success: false,
      message: '该 Slug 与内置 OAuth 提供商冲突',
    });
    expect((await root.put(`${BASE}${acmeId}`, { token_endpoint: '' })).body.success).toBe(false);
    expect(await providerRow(acmeId)).toEqual(row);
    expect((await root.put(`${BASE}999999`, { name: 'x' })).body).toEqual({
      success: false,
      message: '未找到该 OAuth 提供商',
    });
    expect((await root.get(`${BASE}abc`)).body).toEqual({ success: false, message: '无效的 ID' });
  });

  it('keeps the stored secret when an update leaves it empty, replaces it when one is given', async () => {
    const keep = await root.put(`${BASE}${acmeId}`, { name: 'Acme', client_secret: '' });
    expect(keep.body).toMatchObject({ success: true, message: '更新成功' });
    expect((await providerRow(acmeId)).client_secret).toBe(CUSTOM_CLIENT.secret);
    await root.put(`${BASE}${acmeId}`, { client_secret: 'rotated' });
    expect((await providerRow(acmeId)).client_secret).toBe('rotated');
    await root.put(`${BASE}${acmeId}`, { client_secret: CUSTOM_CLIENT.secret });
  });

  it('is root-only', async () => {
    const admin = await userWithRole(server, root, 10);
    expect((await admin.client.get(BASE)).body.success).toBe(false);
    expect((await admin.client.post(BASE, { ...acme(), slug: 'sneaky' })).body.success).toBe(false);
    expect((await new ConsoleClient(server.url).get(BASE)).status).toBe(401);
  });

  it('fetches a discovery document from a public address only', async () => {
    const wk = `${idp.url}/.well-known/openid-configuration`;
    const direct = await root.post(`${BASE}discovery`, { well_known_url: wk });
    expect(direct.body).toMatchObject({
      success: true,
      data: { well_known_url: wk, discovery: { token_endpoint: `${idp.url}/token` } },
    });
    const byIssuer = await root.post(`${BASE}discovery`, { issuer_url: `${idp.url}/` });
    expect(byIssuer.body.data.well_known_url).toBe(wk);
    expect((await root.post(`${BASE}discovery`, {})).body).toEqual({
      success: false,
      message: '请先填写 Discovery URL 或 Issuer URL',
    });
    expect((await root.post(`${BASE}discovery`, { well_known_url: 'ftp://x/y' })).body).toEqual({
      success: false,
      message: 'Discovery URL 无效，仅支持 http/https',
    });
    const broken = await root.post(`${BASE}discovery`, {
      well_known_url: `${idp.url}/broken/.well-known/openid-configuration`,
    });
    expect(broken.body.message).toMatch(/^解析 Discovery 配置失败/);
    // the gateway's own port is not declared public: refused before any connection
    const inward = await root.post(`${BASE}discovery`, { issuer_url: server.url });
    expect(inward.body).toEqual({
      success: false,
      message: '获取 Discovery 配置失败: 该地址指向本机、内网或保留地址，不允许访问',
    });
  });

  it('lists the enabled providers with their public fields in /api/status', async () => {
    const other = await root.post(BASE, { ...acme(), name: 'Off', slug: 'off-one', enabled: false });
    expect(other.body.success).toBe(true);
    const listed = (await new ConsoleClient(server.url).get('/api/status')).body.data.custom_oauth_providers;
    expect(listed).toEqual([
      {
        id: acmeId,
        name: 'Acme',
        slug: 'acme',
        icon: 'acme-icon',
        client_id: CUSTOM_CLIENT.id,
        authorization_endpoint: `${idp.url}/authorize`,
        scopes: 'openid profile',
      },
    ]);
    expect((await root.delete(`${BASE}${other.body.data.id}`)).body).toEqual({ success: true, message: '删除成功' });
    expect(await server.ctx.db.selectFrom('custom_oauth_providers').select('id').execute()).toHaveLength(1);
  });

  it('signs up a new account with the mapped fields, then logs it in again', async () => {
    const c = new ConsoleClient(server.url);
    const res = await login(c, 1001, 'wile');
    expect(res.body, JSON.stringify(res.body)).toMatchObject({
      success: true,
      data: { username: 'wile', display_name: 'Nick wile', role: 1, status: 1 },
    });
    const id = res.body.data.id;
    expect((await c.get('/api/user/self')).body.data).toMatchObject({ id, email: 'wile@acme.example.com' });
    expect(await bindingRows(id)).toMatchObject([{ provider_id: acmeId, provider_user_id: '1001' }]);
    expect(idp.tokenRequests.at(-1)!.body).toMatchObject({
      client_id: CUSTOM_CLIENT.id,
      client_secret: CUSTOM_CLIENT.secret,
      grant_type: 'authorization_code',
      redirect_uri: 'https://gw.example.com/oauth/acme',
    });
    const again = await login(new ConsoleClient(server.url), 1001, 'renamed');
    expect(again.body).toMatchObject({ success: true, data: { id } });
    // a taken username falls back to <slug>_<n>
    const second = await login(new ConsoleClient(server.url), 1002, 'wile');
    expect(second.body.data.username).toMatch(/^acme_\d+$/);
  });

  it('sends the client credentials with HTTP Basic when configured', async () => {
    await root.put(`${BASE}${acmeId}`, { auth_style: 2 });
    idp.credentialsIn = 'basic';
    try {
      const res = await login(new ConsoleClient(server.url), 1003, 'basic-user');
      expect(res.body.success, JSON.stringify(res.body)).toBe(true);
      const sent = idp.tokenRequests.at(-1)!;
      expect(sent.authorization).toBe(
        `Basic ${Buffer.from(`${CUSTOM_CLIENT.id}:${CUSTOM_CLIENT.secret}`).toString('base64')}`,
      );
      expect(sent.body.client_secret).toBeUndefined();
    } finally {
      idp.credentialsIn = 'body';
      await root.put(`${BASE}${acmeId}`, { auth_style: 0 });
    }
  });

  it('answers 403 to a wrong state without calling the provider, and 404 to an unknown slug', async () => {
    const c = new ConsoleClient(server.url);
    const issued = await newState(c);
    const calls = idp.tokenRequests.length;
    const other = await newState(new ConsoleClient(server.url));
    for (const res of [
      await callback(c, 'acme', idp.issueCode(person(1, 'x')), issued, other.state),
      await callback(c, 'acme', idp.issueCode(person(1, 'x')), null, issued.state),
      await callback(c, 'acme', idp.issueCode(person(1, 'x')), issued, ''),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual(STATE_MISMATCH);
    }
    expect(idp.tokenRequests.length).toBe(calls);
    const unknown = await callback(c, 'nobody', 'code', await newState(c));
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ success: false, message: '未找到该 OAuth 提供商' });
  });

  it('shows a failed exchange and an answer without the id field with the built-ins messages', async () => {
    const c = new ConsoleClient(server.url);
    expect((await callback(c, 'acme', 'bogus', await newState(c))).body).toEqual({
      success: false,
      message: 'Acme 获取 Token 失败，请检查设置！',
    });
    const noId = await callback(c, 'acme', idp.issueCode({ data: { user: { login: 'x' } } }), await newState(c));
    expect(noId.body).toEqual({ success: false, message: 'Acme 获取用户信息为空！请检查设置！' });
  });

  it('binds the account to the signed-in user, and refuses an account already bound', async () => {
    const u = await registerAndLogin(server);
    const res = await callback(u.client, 'acme', idp.issueCode(person(2001, 'binder')), await newState(u.client));
    expect(res.body).toEqual({ success: true, message: 'bind' });
    expect(await bindingRows(u.id)).toMatchObject([{ provider_id: acmeId, provider_user_id: '2001' }]);
    const other = await registerAndLogin(server);
    const taken = await callback(
      other.client,
      'acme',
      idp.issueCode(person(2001, 'binder')),
      await newState(other.client),
    );
    expect(taken.body).toEqual({ success: false, message: '该 Acme 账户已被绑定' });
    expect(await bindingRows(other.id)).toEqual([]);
    // the bound account logs in as that user
    expect((await login(new ConsoleClient(server.url), 2001, 'binder')).body).toMatchObject({
      success: true,
      data: { id: u.id },
    });
  });

  it('refuses a banned user, a sign-up while registration is closed, and a disabled provider', async () => {
    const banned = await login(new ConsoleClient(server.url), 3001, 'to-ban');
    expect((await root.post('/api/user/manage', { id: banned.body.data.id, action: 'disable' })).body.success).toBe(
      true,
    );
    expect((await login(new ConsoleClient(server.url), 3001, 'to-ban')).body).toEqual({
      success: false,
      message: '用户已被封禁',
    });

    await setOption(root, 'RegisterEnabled', false);
    try {
      const before = await server.ctx.db.selectFrom('users').select('id').execute();
      expect((await login(new ConsoleClient(server.url), 3002, 'latecomer')).body).toEqual({
        success: false,
        message: '管理员关闭了新用户注册',
      });
      expect(await server.ctx.db.selectFrom('users').select('id').execute()).toHaveLength(before.length);
      expect((await login(new ConsoleClient(server.url), 1001, 'wile')).body.success).toBe(true);
    } finally {
      await setOption(root, 'RegisterEnabled', true);
    }

    await root.put(`${BASE}${acmeId}`, { enabled: false });
    try {
      expect((await login(new ConsoleClient(server.url), 1001, 'wile')).body).toEqual({
        success: false,
        message: '管理员未开启通过 Acme 登录以及注册',
      });
      expect((await new ConsoleClient(server.url).get('/api/status')).body.data.custom_oauth_providers).toEqual([]);
    } finally {
      await root.put(`${BASE}${acmeId}`, { enabled: true });
    }
  });

  it('lists and unbinds the user own bindings, keeping the last way in', async () => {
    const c = new ConsoleClient(server.url);
    const signedUp = await callback(
      c,
      'acme',
      idp.issueCode({ data: { user: { id: 4001, login: 'only-way' } } }),
      await newState(c),
    );
    const id = signedUp.body.data.id;
    expect((await c.get('/api/user/oauth/bindings')).body).toEqual({
      success: true,
      message: '',
      data: [
        {
          provider_id: acmeId,
          provider_name: 'Acme',
          provider_slug: 'acme',
          provider_icon: 'acme-icon',
          provider_user_id: '4001',
        },
      ],
    });
    // no email, no other login, a password never shown: the binding is the only way back in
    expect((await c.delete(`/api/user/oauth/bindings/${acmeId}`)).body).toEqual({
      success: false,
      message: '解绑后将无法登录此账户，请先设置密码或绑定其他登录方式',
    });
    expect(await bindingRows(id)).toHaveLength(1);
    // an address mail can reach gives a password by reset
    await server.ctx.db.updateTable('users').set({ email: 'only-way@example.com' }).where('id', '=', id).execute();
    await server.ctx.options.set('SMTPServer', 'smtp.example.com');
    expect((await c.delete(`/api/user/oauth/bindings/${acmeId}`)).body).toEqual({
      success: true,
      message: '解绑成功',
    });
    expect(await bindingRows(id)).toEqual([]);
    await server.ctx.options.set('SMTPServer', '');
    expect((await c.delete(`/api/user/oauth/bindings/${acmeId}`)).body).toEqual({
      success: false,
      message: '未找到该绑定',
    });
    expect((await c.delete('/api/user/oauth/bindings/x')).body).toEqual({
      success: false,
      message: '无效的提供商 ID',
    });
  });

  it('lets admins list and unbind the bindings of users below them; refuses deleting a provider in use', async () => {
    const holder = await login(new ConsoleClient(server.url), 5001, 'held');
    const holderId = holder.body.data.id;
    const admin = await userWithRole(server, root, 10);
    const listed = await admin.client.get(`/api/user/${holderId}/oauth/bindings`);
    expect(listed.body).toMatchObject({ success: true, data: [{ provider_id: acmeId, provider_user_id: '5001' }] });
    const rootId = root.userId!;
    expect((await admin.client.get(`/api/user/${rootId}/oauth/bindings`)).body).toEqual({
      success: false,
      message: '无权操作同级或更高等级用户的绑定',
    });
    expect((await admin.client.delete(`/api/user/${admin.id}/oauth/bindings/${acmeId}`)).body.success).toBe(false);
    const common = await registerAndLogin(server);
    expect((await common.client.get(`/api/user/${holderId}/oauth/bindings`)).body.success).toBe(false);

    expect((await root.delete(`${BASE}${acmeId}`)).body).toEqual({
      success: false,
      message: '该 OAuth 提供商还有用户绑定，无法删除。请先解除所有用户绑定。',
    });
    expect((await admin.client.delete(`/api/user/${holderId}/oauth/bindings/${acmeId}`)).body).toEqual({
      success: true,
      message: '解绑成功',
    });
    expect(await bindingRows(holderId)).toEqual([]);
  });
});
