// Third-party logins against local mock providers (mock-oauth-provider.ts): the state handshake, sign-up, login,
// binding and the refusals, with the provider endpoints injected through the server's configuration
// (OAUTH_ENDPOINTS_JSON) and the OIDC endpoints found by discovery.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeEachDb, REDIS_URL, redisAvailable, uniqueName } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient, type ApiResponse } from '../helpers/console-client.js';
import { registerAndLogin, setOption, setupAndLoginRoot } from './fixtures.js';
import {
  CLIENTS,
  endpointsEnv,
  startMockOAuthProvider,
  type MockOAuthProvider,
  type Vendor,
} from './mock-oauth-provider.js';
import { registerVerificationCode } from '../../src/services/verification.js';
import { userUrlFetch } from '../../src/lib/safe-fetch.js';

const STATE_MISMATCH = { success: false, message: 'state is empty or not same' };

interface IssuedState {
  state: string;
  cookie: string;
}

async function newState(c: ConsoleClient, aff?: string): Promise<IssuedState> {
  const res = await c.get(`/api/oauth/state${aff ? `?aff=${aff}` : ''}`);
  expect(res.body).toMatchObject({ success: true, message: '' });
  const cookie = (res.headers.getSetCookie?.() ?? []).find((h) => h.startsWith('oauth_state='));
  expect(cookie).toBeTruthy();
  return { state: res.body.data as string, cookie: cookie!.split(';')[0] };
}

/** The provider's redirect back: the browser brings its cookies (the session's and the state's). */
async function callback(
  c: ConsoleClient,
  vendor: Vendor,
  code: string,
  issued: IssuedState | null,
  state = issued?.state ?? '',
): Promise<ApiResponse> {
  const before = c.cookie;
  const sent = [before, issued?.cookie].filter(Boolean).join('; ');
  c.cookie = sent;
  const res = await c.get(`/api/oauth/${vendor}?code=${code}&state=${state}`);
  if (c.cookie === sent) c.cookie = before;
  if (res.body?.success && res.body.data?.id) c.userId = res.body.data.id;
  return res;
}

await describeEachDb('third-party login (OAuth)', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;
  let idp: MockOAuthProvider;
  let rootAff: string;
  let rootId: number;

  const userRow = (id: number) =>
    server.ctx.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  /** GitHub's numeric user id of each login name used here (one account per name unless a test says otherwise) */
  const githubIds = new Map<string, number>();
  const ghId = (login: string) => {
    if (!githubIds.has(login)) githubIds.set(login, 10_000 + githubIds.size);
    return githubIds.get(login)!;
  };
  const githubUser = (login: string, extra: Record<string, unknown> = {}) => ({
    login,
    id: ghId(login),
    node_id: 'MDQ6VXNlcjE=',
    type: 'User',
    name: `The ${login}`,
    email: `${login}@users.example.com`,
    ...extra,
  });
  const githubLogin = async (c: ConsoleClient, login: string, aff?: string) =>
    callback(c, 'github', idp.issueCode('github', githubUser(login)), await newState(c, aff));

  beforeAll(async () => {
    idp = await startMockOAuthProvider();
    server = await startTestServer({
      kind,
      env: { CRITICAL_RATE_LIMIT_ENABLE: 'false', OAUTH_ENDPOINTS_JSON: endpointsEnv(idp.url) },
    });
    // the OIDC discovery document is fetched like a user-chosen URL: the mock provider's port plays a public host
    userUrlFetch(server.ctx).policy = {
      treatAsPublic: (address, port) => address === '127.0.0.1' && port === Number(new URL(idp.url).port),
    };
    root = await setupAndLoginRoot(server);
    rootId = root.userId!;
    rootAff = (await root.get('/api/user/aff')).body.data;
    await setOption(root, 'ServerAddress', 'https://gw.example.com');
    await setOption(root, 'GitHubClientId', CLIENTS.github.id);
    await setOption(root, 'GitHubClientSecret', CLIENTS.github.secret);
    await setOption(root, 'LinuxDOClientId', CLIENTS.linuxdo.id);
    await setOption(root, 'LinuxDOClientSecret', CLIENTS.linuxdo.secret);
    await setOption(root, 'discord.client_id', CLIENTS.discord.id);
    await setOption(root, 'discord.client_secret', CLIENTS.discord.secret);
    await setOption(root, 'oidc.client_id', CLIENTS.oidc.id);
    await setOption(root, 'oidc.client_secret', CLIENTS.oidc.secret);
    await setOption(root, 'oidc.well_known', `${idp.url}/oidc/.well-known/openid-configuration`);
    await setOption(root, 'oidc.authorization_endpoint', `${idp.url}/oidc/authorize`);
  });
  afterAll(async () => {
    await server?.close();
    await idp?.close();
  });

  it('refuses a login that is switched off, then advertises each one switched on in /api/status', async () => {
    const anon = new ConsoleClient(server.url);
    const res = await callback(anon, 'github', idp.issueCode('github', githubUser('off')), await newState(anon));
    expect(res.body).toEqual({ success: false, message: '管理员未开启通过 GitHub 登录以及注册' });
    for (const key of ['GitHubOAuthEnabled', 'LinuxDOOAuthEnabled', 'discord.enabled', 'oidc.enabled'])
      await setOption(root, key, true);
    const status = (await anon.get('/api/status')).body.data;
    expect(status).toMatchObject({
      github_oauth: true,
      github_client_id: CLIENTS.github.id,
      linuxdo_oauth: true,
      linuxdo_client_id: CLIENTS.linuxdo.id,
      discord_oauth: true,
      discord_client_id: CLIENTS.discord.id,
      oidc_enabled: true,
      oidc_client_id: CLIENTS.oidc.id,
      oidc_authorization_endpoint: `${idp.url}/oidc/authorize`,
    });
    // the secrets stay out of the option list
    const keys = (await root.get('/api/option/')).body.data.map((o: { key: string }) => o.key);
    expect(keys).not.toContain('discord.client_secret');
  });

  it('signs up a new GitHub account with the invite code given with the state, then logs it in again', async () => {
    const c = new ConsoleClient(server.url);
    const res = await githubLogin(c, 'octocat', rootAff);
    expect(res.body.success, JSON.stringify(res.body)).toBe(true);
    expect(Object.keys(res.body.data).sort()).toEqual(['display_name', 'group', 'id', 'role', 'status', 'username']);
    expect(res.body.data).toMatchObject({ display_name: 'The octocat', role: 1, status: 1, group: 'default' });
    expect(res.body.data.username).toMatch(/^github_\d+$/);
    const row = await userRow(res.body.data.id);
    expect(row).toMatchObject({
      github_id: `id:${ghId('octocat')}`,
      email: 'octocat@users.example.com',
      inviter_id: rootId,
    });
    // the token call carried the client credentials and the code as JSON
    const sent = idp.tokenRequests.at(-1)!;
    expect(sent.body).toMatchObject({ client_id: CLIENTS.github.id, client_secret: CLIENTS.github.secret });
    // the session cookie works like a password login's
    expect((await c.get('/api/user/self')).body.data).toMatchObject({ id: row.id, github_id: `id:${ghId('octocat')}` });

    const again = new ConsoleClient(server.url);
    const second = await githubLogin(again, 'octocat');
    expect(second.body).toMatchObject({ success: true, data: { id: row.id } });
  });

  it('answers 403 to a missing, foreign, mismatched or reused state', async () => {
    const c = new ConsoleClient(server.url);
    const code = () => idp.issueCode('github', githubUser('stateful'));
    const issued = await newState(c);
    // no state, and a state without this browser's cookie
    for (const res of [
      await callback(c, 'github', code(), issued, ''),
      await callback(c, 'github', code(), null, issued.state),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body).toEqual(STATE_MISMATCH);
    }
    const other = await newState(new ConsoleClient(server.url));
    const mismatched = await callback(c, 'github', code(), issued, other.state);
    expect(mismatched.status).toBe(403);
    const first = await callback(c, 'github', code(), issued);
    expect(first.body.success, JSON.stringify(first.body)).toBe(true);
    const reused = await callback(new ConsoleClient(server.url), 'github', code(), issued);
    expect(reused.status).toBe(403);
    expect(reused.body).toEqual(STATE_MISMATCH);
  });

  it('shows the provider failing the code exchange with new-api message', async () => {
    const c = new ConsoleClient(server.url);
    const res = await callback(c, 'github', 'not-a-code', await newState(c));
    expect(res.body).toEqual({ success: false, message: 'GitHub 获取 Token 失败，请检查设置！' });
  });

  it('binds a provider account to the signed-in user, and refuses one bound to another user', async () => {
    const u = await registerAndLogin(server);
    const res = await callback(
      u.client,
      'github',
      idp.issueCode('github', githubUser('bind-me')),
      await newState(u.client),
    );
    expect(res.body).toEqual({ success: true, message: 'bind' });
    expect((await userRow(u.id)).github_id).toBe(`id:${ghId('bind-me')}`);
    const other = await registerAndLogin(server);
    const taken = await callback(
      other.client,
      'github',
      idp.issueCode('github', githubUser('bind-me')),
      await newState(other.client),
    );
    expect(taken.body).toEqual({ success: false, message: '该 GitHub 账户已被绑定' });
    expect((await userRow(other.id)).github_id).toBe('');
    // the bound account now logs in as that user
    const anon = new ConsoleClient(server.url);
    expect((await githubLogin(anon, 'bind-me')).body).toMatchObject({ success: true, data: { id: u.id } });
  });

  it('refuses a banned or deleted user, and a sign-up while registration is closed', async () => {
    const banned = await githubLogin(new ConsoleClient(server.url), 'to-ban');
    const bannedId = banned.body.data.id;
    expect((await root.post('/api/user/manage', { id: bannedId, action: 'disable' })).body.success).toBe(true);
    expect((await githubLogin(new ConsoleClient(server.url), 'to-ban')).body).toEqual({
      success: false,
      message: '用户已被封禁',
    });
    const gone = await githubLogin(new ConsoleClient(server.url), 'to-delete');
    expect((await root.post('/api/user/manage', { id: gone.body.data.id, action: 'delete' })).body.success).toBe(true);
    expect((await githubLogin(new ConsoleClient(server.url), 'to-delete')).body).toEqual({
      success: false,
      message: '用户已注销',
    });

    await setOption(root, 'RegisterEnabled', false);
    try {
      expect((await githubLogin(new ConsoleClient(server.url), 'latecomer')).body).toEqual({
        success: false,
        message: '管理员关闭了新用户注册',
      });
      // an existing binding still logs in
      expect((await githubLogin(new ConsoleClient(server.url), 'octocat')).body.success).toBe(true);
    } finally {
      await setOption(root, 'RegisterEnabled', true);
    }
  });

  describe("GitHub bindings by GitHub's numeric user id", () => {
    beforeAll(() => setOption(root, 'GitHubOAuthEnabled', true));
    const githubClaims = (userId: number) =>
      server.ctx.db
        .selectFrom('identity_claims')
        .select('external_id')
        .where('provider', '=', 'github')
        .where('user_id', '=', userId)
        .execute();
    /** A GitHub login as the account with this numeric id, under whatever login name it has now. */
    const loginAs = async (c: ConsoleClient, login: string, id: number) =>
      callback(c, 'github', idp.issueCode('github', githubUser(login, { id })), await newState(c));

    it('does not let a recycled login name into the account bound to the first holder of the name', async () => {
      const first = await loginAs(new ConsoleClient(server.url), 'alice', 1);
      expect(first.body.success, JSON.stringify(first.body)).toBe(true);
      const aliceId = first.body.data.id;
      expect((await userRow(aliceId)).github_id).toBe('id:1');
      // alice renames herself on GitHub; someone else (id 2) takes the name
      const squatter = await loginAs(new ConsoleClient(server.url), 'alice', 2);
      expect(squatter.body.success, JSON.stringify(squatter.body)).toBe(true);
      expect(squatter.body.data.id).not.toBe(aliceId);
      expect((await userRow(squatter.body.data.id)).github_id).toBe('id:2');
      // with registration closed, the name alone opens nothing
      await setOption(root, 'RegisterEnabled', false);
      try {
        expect((await loginAs(new ConsoleClient(server.url), 'alice', 3)).body).toEqual({
          success: false,
          message: '管理员关闭了新用户注册',
        });
        // alice under her new name still reaches her account
        const renamed = await loginAs(new ConsoleClient(server.url), 'alice-renamed', 1);
        expect(renamed.body).toMatchObject({ success: true, data: { id: aliceId } });
      } finally {
        await setOption(root, 'RegisterEnabled', true);
      }
    });

    it('moves a binding new-api made by login name to the id at its next login; the name then opens nothing', async () => {
      const u = await registerAndLogin(server);
      // as new-api leaves it: the login name in github_id (and its claim, as the migration adopts it)
      await server.ctx.db.updateTable('users').set({ github_id: 'legacy-bob' }).where('id', '=', u.id).execute();
      await server.ctx.db
        .insertInto('identity_claims')
        .values({ provider: 'github', external_id: 'legacy-bob', user_id: u.id, claimed_at: 0 })
        .execute();
      // another user cannot bind the account while the old binding may be its owner's
      const other = await registerAndLogin(server);
      expect((await loginAs(other.client, 'legacy-bob', 77)).body).toEqual({
        success: false,
        message: '该 GitHub 账户已被绑定',
      });

      const res = await loginAs(new ConsoleClient(server.url), 'legacy-bob', 77);
      expect(res.body).toMatchObject({ success: true, data: { id: u.id } });
      expect((await userRow(u.id)).github_id).toBe('id:77');
      expect(await githubClaims(u.id)).toEqual([{ external_id: 'id:77' }]);
      // the moved binding answers to the id, under any name, and no longer to the name
      expect((await loginAs(new ConsoleClient(server.url), 'bob-renamed', 77)).body).toMatchObject({
        data: { id: u.id },
      });
      const recycled = await loginAs(new ConsoleClient(server.url), 'legacy-bob', 78);
      expect(recycled.body.success).toBe(true);
      expect(recycled.body.data.id).not.toBe(u.id);

      // unbinding and binding again keep working on the id
      expect((await u.client.delete('/api/user/self/bindings/github')).body).toMatchObject({ success: true });
      expect((await userRow(u.id)).github_id).toBe('');
      expect(await githubClaims(u.id)).toEqual([]);
      expect((await loginAs(u.client, 'bob-renamed', 77)).body).toEqual({ success: true, message: 'bind' });
      expect((await userRow(u.id)).github_id).toBe('id:77');
    });

    it('refuses a GitHub answer without its numeric id', async () => {
      const c = new ConsoleClient(server.url);
      const res = await callback(c, 'github', idp.issueCode('github', { login: 'no-id' }), await newState(c));
      expect(res.body).toEqual({ success: false, message: 'GitHub 获取用户信息为空！请检查设置！' });
    });
  });

  it('signs up through Linux DO (HTTP Basic client credentials) and Discord (its username when free)', async () => {
    const ld = new ConsoleClient(server.url);
    const ldInfo = { id: 12345, username: 'neo', name: 'Neo', active: true, trust_level: 2, silenced: false };
    const res = await callback(ld, 'linuxdo', idp.issueCode('linuxdo', ldInfo), await newState(ld));
    expect(res.body.success, JSON.stringify(res.body)).toBe(true);
    expect(res.body.data.username).toMatch(/^linuxdo_\d+$/);
    expect(await userRow(res.body.data.id)).toMatchObject({ linux_do_id: '12345', display_name: 'Neo' });
    const sent = idp.tokenRequests.at(-1)!;
    expect(sent.authorization).toBe(
      `Basic ${Buffer.from(`${CLIENTS.linuxdo.id}:${CLIENTS.linuxdo.secret}`).toString('base64')}`,
    );
    expect(sent.body).toMatchObject({ grant_type: 'authorization_code' });
    expect(sent.body.redirect_uri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/oauth\/linuxdo$/);

    const dc = new ConsoleClient(server.url);
    const dcInfo = {
      id: '80351110224678912',
      username: 'nelly',
      discriminator: '0',
      global_name: 'Nelly',
      avatar: null,
      email: 'nelly@discord.example.com',
      verified: true,
    };
    const d = await callback(dc, 'discord', idp.issueCode('discord', dcInfo), await newState(dc));
    expect(d.body).toMatchObject({ success: true, data: { username: 'nelly', display_name: 'Nelly' } });
    expect(await userRow(d.body.data.id)).toMatchObject({
      discord_id: '80351110224678912',
      email: 'nelly@discord.example.com',
    });
    expect(idp.tokenRequests.at(-1)!.body.redirect_uri).toBe('https://gw.example.com/oauth/discord');
  });

  it('OIDC: endpoints by discovery, preferred_username when free, email required, discovery failure', async () => {
    const info = (sub: string, extra: Record<string, unknown> = {}) => ({
      sub,
      email: `${sub}@idp.example.com`,
      email_verified: true,
      name: `Person ${sub}`,
      preferred_username: 'alice',
      ...extra,
    });
    const a = new ConsoleClient(server.url);
    const first = await callback(a, 'oidc', idp.issueCode('oidc', info('sub-1')), await newState(a));
    expect(first.body).toMatchObject({ success: true, data: { username: 'alice', display_name: 'Person sub-1' } });
    expect(await userRow(first.body.data.id)).toMatchObject({ oidc_id: 'sub-1', email: 'sub-1@idp.example.com' });
    expect(idp.tokenRequests.at(-1)!.body).toMatchObject({
      client_id: CLIENTS.oidc.id,
      client_secret: CLIENTS.oidc.secret,
      grant_type: 'authorization_code',
      redirect_uri: 'https://gw.example.com/oauth/oidc',
    });

    const b = new ConsoleClient(server.url);
    const second = await callback(b, 'oidc', idp.issueCode('oidc', info('sub-2')), await newState(b));
    expect(second.body.data.username).toMatch(/^oidc_\d+$/);

    const noEmail = await callback(
      b,
      'oidc',
      idp.issueCode('oidc', info('sub-3', { email: undefined })),
      await newState(b),
    );
    expect(noEmail.body).toEqual({ success: false, message: 'OIDC 获取用户信息为空！请检查设置！' });

    idp.discoveryUp = false;
    try {
      const down = await callback(b, 'oidc', idp.issueCode('oidc', info('sub-4')), await newState(b));
      expect(down.body).toEqual({
        success: false,
        message: '获取 OIDC 配置失败，请检查网络状况和 Well-Known URL 是否正确',
      });
    } finally {
      idp.discoveryUp = true;
    }
  });

  it('OIDC: a discovery document on a local, private or reserved address, or on this host, is not fetched', async () => {
    const policy = userUrlFetch(server.ctx).policy;
    const wellKnown = `${idp.url}/oidc/.well-known/openid-configuration`;
    const failed = { success: false, message: '获取 OIDC 配置失败，请检查网络状况和 Well-Known URL 是否正确' };
    const info = { sub: 'sub-private', email: 'sub-private@idp.example.com' };
    const before = idp.discoveryRequests;
    try {
      // the provider's listener as what it is (loopback), then as a public address this host carries
      const asLoopback = {};
      const asThisHost = {
        ...policy,
        interfaces: () => ({
          eth0: [
            {
              address: '127.0.0.1',
              netmask: '255.0.0.0',
              family: 'IPv4' as const,
              mac: '02:00:00:00:00:01',
              internal: false,
              cidr: null,
            },
          ],
        }),
      };
      for (const p of [asLoopback, asThisHost]) {
        // the address is checked when a connection opens: the kept-alive one of the test above goes first
        await userUrlFetch(server.ctx).close();
        userUrlFetch(server.ctx).policy = p;
        const c = new ConsoleClient(server.url);
        const res = await callback(c, 'oidc', idp.issueCode('oidc', info), await newState(c));
        expect(res.body).toEqual(failed);
      }
      await server.ctx.options.set('oidc.well_known', 'http://169.254.169.254/.well-known/openid-configuration');
      userUrlFetch(server.ctx).policy = policy;
      const c = new ConsoleClient(server.url);
      expect((await callback(c, 'oidc', idp.issueCode('oidc', info), await newState(c))).body).toEqual(failed);
      expect(idp.discoveryRequests).toBe(before);
    } finally {
      userUrlFetch(server.ctx).policy = policy;
      await server.ctx.options.set('oidc.well_known', wellKnown);
    }
  });

  it('binds an email with a verification code, once', async () => {
    const u = await registerAndLogin(server);
    const email = `bind-${u.id}@example.com`;
    await registerVerificationCode(server.ctx, email, 'abc123', 'v');
    const q = (code: string) => `/api/oauth/email/bind?email=${encodeURIComponent(email)}&code=${code}`;
    expect((await u.client.get(q('zzz999'))).body).toEqual({ success: false, message: '验证码错误或已过期' });
    expect((await u.client.get(q('abc123'))).body).toEqual({ success: true, message: '' });
    expect((await userRow(u.id)).email).toBe(email);
    expect((await u.client.get(q('abc123'))).body).toEqual({ success: false, message: '验证码错误或已过期' });
    // signed-in callers only
    expect((await new ConsoleClient(server.url).get(q('abc123'))).status).toBe(401);

    // new-api's later form: POST with a JSON body
    const other = `bind2-${u.id}@example.com`;
    await registerVerificationCode(server.ctx, other, 'def456', 'v');
    expect((await u.client.post('/api/oauth/email/bind', { email: other, code: 'nope' })).body).toEqual({
      success: false,
      message: '验证码错误或已过期',
    });
    expect((await userRow(u.id)).email).toBe(email);
    expect((await u.client.post('/api/oauth/email/bind', { email: other, code: 'def456' })).body).toEqual({
      success: true,
      message: '',
    });
    expect((await userRow(u.id)).email).toBe(other);
  });
});

// A state issued by one node is accepted, once, by another node of the same deployment: through Redis when it is
// configured, else through the shared database.
describe('OAuth state shared between two nodes', async () => {
  const redisUp = await redisAvailable();
  for (const store of ['database', 'redis'] as const) {
    it.skipIf(store === 'redis' && !redisUp)(`through the ${store}`, async () => {
      const idp = await startMockOAuthProvider();
      const env: Record<string, string> = {
        CRITICAL_RATE_LIMIT_ENABLE: 'false',
        OAUTH_ENDPOINTS_JSON: endpointsEnv(idp.url),
        ...(store === 'redis' ? { REDIS_CONN_STRING: REDIS_URL } : {}),
      };
      const redisPrefix = uniqueName('gwt') + ':';
      const n1 = await startTestServer({ kind: 'sqlite', env, redisPrefix });
      const n2 = await startTestServer({ kind: 'sqlite', database: n1.database, env, redisPrefix });
      try {
        const root = await setupAndLoginRoot(n1);
        await setOption(root, 'GitHubClientId', CLIENTS.github.id);
        await setOption(root, 'GitHubClientSecret', CLIENTS.github.secret);
        await setOption(root, 'GitHubOAuthEnabled', true);
        await n2.ctx.options.load();
        const browser = new ConsoleClient(n1.url);
        const issued = await newState(browser);
        const onNode2 = new ConsoleClient(n2.url);
        const code = () => idp.issueCode('github', { login: 'roaming', id: 7, name: 'Roaming' });
        const res = await callback(onNode2, 'github', code(), issued);
        expect(res.body.success, JSON.stringify(res.body)).toBe(true);
        expect((await callback(browser, 'github', code(), issued)).status).toBe(403);
      } finally {
        await n2.close();
        await n1.close();
        await idp.close();
      }
    });
  }
});
