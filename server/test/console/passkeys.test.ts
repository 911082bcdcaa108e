// Passkeys (new-api-compat.md §9.8) with a software authenticator (helpers/soft-authenticator.ts): every registration
// and assertion is verified by @simplewebauthn/server against the relying party taken from ServerAddress.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { createTestDatabase, describeEachDb, REDIS_URL, redisAvailable, uniqueName } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { ConsoleClient, type ApiResponse } from '../helpers/console-client.js';
import { SoftAuthenticator, SOFT_AAGUID } from '../helpers/soft-authenticator.js';
import { registerAndLogin, setOption, setupAndLoginRoot, userWithRole } from './fixtures.js';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest, migrationNames } from '../../src/db/migrate.js';

const ORIGIN = 'https://gw.example.com';
const RP_ID = 'gw.example.com';
const CHALLENGE_MISSING = { success: false, message: 'Passkey 验证已过期或无效，请重新开始' };
const NOT_FOUND = { success: false, message: 'Passkey 验证失败，请重试或联系管理员' };

/** A browser: the console client's session cookie plus the passkey challenge cookie, and its authenticator. */
class Browser {
  challengeCookie = '';
  readonly client: ConsoleClient;

  constructor(
    base: string | ConsoleClient,
    readonly authenticator = new SoftAuthenticator(ORIGIN),
  ) {
    this.client = typeof base === 'string' ? new ConsoleClient(base) : base;
  }

  async call(method: string, path: string, body?: unknown): Promise<ApiResponse> {
    const before = this.client.cookie;
    const sent = [before, this.challengeCookie].filter(Boolean).join('; ');
    this.client.cookie = sent;
    const res = await this.client.request(method, path, body);
    if (this.client.cookie === sent) this.client.cookie = before;
    for (const h of res.headers.getSetCookie?.() ?? []) {
      const [pair] = h.split(';');
      if (pair.startsWith('passkey_challenge=')) this.challengeCookie = pair.endsWith('=') ? '' : pair;
    }
    return res;
  }

  async register(name?: string) {
    const begin = await this.call('POST', '/api/user/passkey/register/begin', {});
    expect(begin.body.success, JSON.stringify(begin.body)).toBe(true);
    const credential = this.authenticator.create(begin.body.data.options.publicKey);
    return this.call('POST', '/api/user/passkey/register/finish', name ? { ...credential, name } : credential);
  }

  async beginLogin() {
    const begin = await this.call('POST', '/api/user/passkey/login/begin', {});
    expect(begin.body.success, JSON.stringify(begin.body)).toBe(true);
    return begin.body.data.options.publicKey;
  }

  async login(lie: Parameters<SoftAuthenticator['get']>[1] = {}) {
    const options = await this.beginLogin();
    const res = await this.call('POST', '/api/user/passkey/login/finish', this.authenticator.get(options, lie));
    if (res.body?.success) this.client.userId = res.body.data.id;
    return res;
  }
}

await describeEachDb('passkeys (WebAuthn)', (kind) => {
  let server: TestServer;
  let root: ConsoleClient;

  const rows = (userId: number) =>
    server.ctx.db.selectFrom('passkey_credentials').selectAll().where('user_id', '=', userId).orderBy('id').execute();
  /** a signed-in user whose browser holds one registered passkey */
  async function userWithPasskey() {
    const u = await registerAndLogin(server);
    const browser = new Browser(u.client);
    expect((await browser.register()).body).toEqual({ success: true, message: 'Passkey 注册成功' });
    return { ...u, browser };
  }

  beforeAll(async () => {
    server = await startTestServer({ kind, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false' } });
    root = await setupAndLoginRoot(server);
    await setOption(root, 'ServerAddress', `${ORIGIN}/console`);
    await setOption(root, 'SystemName', 'Passkey Gateway');
  });
  afterAll(async () => {
    await server?.close();
  });

  it('is refused while switched off, then advertised in /api/status when switched on', async () => {
    const anon = new Browser(server.url);
    expect((await anon.client.get('/api/status')).body.data.passkey_login).toBe(false);
    expect((await anon.call('POST', '/api/user/passkey/login/begin', {})).body).toEqual({
      success: false,
      message: '管理员未启用 Passkey 登录',
    });
    const u = await registerAndLogin(server);
    expect((await new Browser(u.client).call('POST', '/api/user/passkey/register/begin', {})).body).toEqual({
      success: false,
      message: '管理员未启用 Passkey 登录',
    });
    await setOption(root, 'passkey.enabled', true);
    expect((await anon.client.get('/api/status')).body.data.passkey_login).toBe(true);
    // the user routes need a session
    expect((await new ConsoleClient(server.url).get('/api/user/passkey')).status).toBe(401);
    expect((await new ConsoleClient(server.url).post('/api/user/passkey/register/begin')).status).toBe(401);
  });

  it('refuses a ceremony when the server address is an IP, saying a host name is needed (issue 46, point 7)', async () => {
    await setOption(root, 'passkey.enabled', true);
    await setOption(root, 'ServerAddress', 'http://192.168.1.20:3000');
    try {
      const refusal = {
        success: false,
        message: 'Passkey 需要域名：服务器地址的主机是 IP 地址 192.168.1.20，浏览器不允许在 IP 地址上使用 Passkey',
      };
      const u = await registerAndLogin(server);
      expect((await new Browser(u.client).call('POST', '/api/user/passkey/register/begin', {})).body).toEqual(refusal);
      expect((await new Browser(server.url).call('POST', '/api/user/passkey/login/begin', {})).body).toEqual(refusal);
    } finally {
      await setOption(root, 'ServerAddress', `${ORIGIN}/console`);
    }
  });

  it('registers two passkeys and lists them without key material', async () => {
    const u = await registerAndLogin(server);
    const laptop = new Browser(u.client);
    const begin = await laptop.call('POST', '/api/user/passkey/register/begin', {});
    const options = begin.body.data.options.publicKey;
    // new-api's shape; the RP from ServerAddress, the user handle the decimal id, a discoverable credential
    expect(options).toMatchObject({
      rp: { id: RP_ID, name: 'Passkey Gateway' },
      user: { id: Buffer.from(String(u.id)).toString('base64url'), name: u.username },
      attestation: 'none',
      authenticatorSelection: { residentKey: 'required', userVerification: 'preferred' },
      excludeCredentials: [],
    });
    const cookie = (begin.headers.getSetCookie?.() ?? []).find((h) => h.startsWith('passkey_challenge='))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/Path=\/api\/user\/passkey/);
    const first = laptop.authenticator.create(options);
    expect((await laptop.call('POST', '/api/user/passkey/register/finish', { ...first, name: 'Laptop' })).body).toEqual(
      { success: true, message: 'Passkey 注册成功' },
    );

    // the second registration excludes the first, so the laptop cannot register twice; a phone can
    const phone = new Browser(u.client, new SoftAuthenticator(ORIGIN));
    const again = await phone.call('POST', '/api/user/passkey/register/begin', {});
    expect(again.body.data.options.publicKey.excludeCredentials).toEqual([
      { id: first.id, type: 'public-key', transports: ['internal', 'hybrid'] },
    ]);
    expect(() => laptop.authenticator.create(again.body.data.options.publicKey)).toThrow(/InvalidStateError/);
    const second = phone.authenticator.create(again.body.data.options.publicKey);
    // new-api's body form: the credential alone (the name defaults)
    expect((await phone.call('POST', '/api/user/passkey/register/finish', second)).body.success).toBe(true);

    const stored = await rows(u.id);
    expect(stored).toHaveLength(2);
    // new-api's encodings: standard base64 ids and COSE keys, the AAGUID's bytes
    expect(stored[0]).toMatchObject({
      credential_id: Buffer.from(first.id, 'base64url').toString('base64'),
      attestation_type: 'none',
      aaguid: SOFT_AAGUID.toString('base64'),
      name: 'Laptop',
      attachment: 'platform',
    });
    expect(Number(stored[0].sign_count)).toBe(0);
    expect(!!stored[0].backup_eligible).toBe(true);
    expect(stored[0].public_key.length).toBeGreaterThan(50);
    expect(stored[1].name).toBe('Passkey 2');

    const list = await u.client.get('/api/user/passkey');
    expect(list.body.success).toBe(true);
    expect(list.body.data).toMatchObject({ enabled: true, last_used_at: null });
    expect(list.body.data.passkeys.map((p: { name: string }) => p.name)).toEqual(['Laptop', 'Passkey 2']);
    for (const p of list.body.data.passkeys) {
      expect(Object.keys(p).sort()).toEqual([
        'attachment',
        'backup_eligible',
        'backup_state',
        'created_at',
        'id',
        'last_used_at',
        'name',
        'transports',
      ]);
      expect(Date.parse(p.created_at)).toBeGreaterThan(Date.now() - 60_000);
    }
    expect(JSON.stringify(list.body)).not.toContain(stored[0].public_key);
    expect(JSON.stringify(list.body)).not.toContain(first.id);
  });

  it('signs in without a user name: the same session and payload as a password login, the counter kept', async () => {
    const u = await userWithPasskey();
    // a fresh browser with the same authenticator (a synced passkey)
    const anon = new Browser(server.url, u.browser.authenticator);
    const options = await anon.beginLogin();
    expect(options).toMatchObject({ rpId: RP_ID, userVerification: 'preferred' });
    expect(options.allowCredentials ?? []).toEqual([]);
    const res = await anon.call('POST', '/api/user/passkey/login/finish', anon.authenticator.get(options));
    expect(res.body).toEqual({
      success: true,
      message: '',
      data: { id: u.id, username: u.username, display_name: u.username, role: 1, status: 1, group: 'default' },
    });
    anon.client.userId = u.id;
    expect((await anon.client.get('/api/user/self')).body.data).toMatchObject({ id: u.id, username: u.username });
    const [row] = await rows(u.id);
    expect(Number(row.sign_count)).toBe(1);
    expect(row.last_used_at).toBeTruthy();
    expect((await anon.client.get('/api/user/passkey')).body.data.last_used_at).toBeTruthy();
    // and again: the counter moves on
    expect((await new Browser(server.url, u.browser.authenticator).login()).body.success).toBe(true);
    expect(Number((await rows(u.id))[0].sign_count)).toBe(2);
  });

  it('refuses another origin or RP id, at registration and at login', async () => {
    const u = await registerAndLogin(server);
    const b = new Browser(u.client);
    for (const lie of [{ origin: 'https://evil.example.com' }, { rpId: 'evil.example.com' }]) {
      const begin = await b.call('POST', '/api/user/passkey/register/begin', {});
      const credential = b.authenticator.create(begin.body.data.options.publicKey, lie);
      b.authenticator.credentials.pop();
      const res = await b.call('POST', '/api/user/passkey/register/finish', credential);
      expect(res.body.success).toBe(false);
      expect(res.body.message).toMatch(/^Passkey 验证失败：.*(origin|RP ID)/i);
    }
    expect(await rows(u.id)).toHaveLength(0);

    expect((await b.register()).body.success).toBe(true);
    for (const lie of [{ origin: 'https://evil.example.com' }, { rpId: 'evil.example.com' }]) {
      const anon = new Browser(server.url, b.authenticator);
      const res = await anon.login(lie);
      expect(res.body.success).toBe(false);
      expect(res.body.message).toMatch(/^Passkey 验证失败：.*(origin|RP ID)/i);
      expect(anon.client.cookie).toBe('');
    }
  });

  it('takes a challenge once, and only from the browser it was given to', async () => {
    const u = await userWithPasskey();
    const a = new Browser(server.url, u.browser.authenticator);
    const options = await a.beginLogin();
    const cookie = a.challengeCookie;
    const assertion = a.authenticator.get(options);

    // another browser, without the cookie, sends the assertion
    const b = new Browser(server.url, u.browser.authenticator);
    expect((await b.call('POST', '/api/user/passkey/login/finish', assertion)).body).toEqual(CHALLENGE_MISSING);
    // another browser with its own challenge sends one signed over the first browser's challenge
    const own = await b.beginLogin();
    const signedForA = b.authenticator.get(own, { challenge: options.challenge });
    const res = await b.call('POST', '/api/user/passkey/login/finish', signedForA);
    expect(res.body.success).toBe(false);
    expect(res.body.message).toMatch(/^Passkey 验证失败：.*challenge/i);
    expect(b.client.cookie).toBe('');

    // the first browser's challenge was not spent by the others
    expect((await a.call('POST', '/api/user/passkey/login/finish', assertion)).body.success).toBe(true);
    // replayed, with the same cookie
    a.challengeCookie = cookie;
    expect((await a.call('POST', '/api/user/passkey/login/finish', assertion)).body).toEqual(CHALLENGE_MISSING);
    // a registration challenge does not serve a login, nor another user's registration
    const reg = await u.browser.call('POST', '/api/user/passkey/register/begin', {});
    const regCookie = u.browser.challengeCookie;
    const c = new Browser(server.url, u.browser.authenticator);
    c.challengeCookie = regCookie;
    const loginWithReg = c.authenticator.get({ ...options, challenge: reg.body.data.options.publicKey.challenge });
    expect((await c.call('POST', '/api/user/passkey/login/finish', loginWithReg)).body).toEqual(CHALLENGE_MISSING);
    const other = await registerAndLogin(server);
    const otherBrowser = new Browser(other.client);
    otherBrowser.challengeCookie = regCookie;
    const stolen = otherBrowser.authenticator.create(reg.body.data.options.publicKey);
    expect((await otherBrowser.call('POST', '/api/user/passkey/register/finish', stolen)).body).toEqual(
      CHALLENGE_MISSING,
    );
    expect(await rows(other.id)).toHaveLength(0);
  });

  it('refuses a counter that goes backwards and flags the passkey', async () => {
    const u = await userWithPasskey();
    expect((await new Browser(server.url, u.browser.authenticator).login({ counter: 5 })).body.success).toBe(true);
    const res = await new Browser(server.url, u.browser.authenticator).login({ counter: 3 });
    expect(res.body.success).toBe(false);
    expect(res.body.message).toMatch(/^Passkey 验证失败：.*counter/i);
    const [row] = await rows(u.id);
    expect(!!row.clone_warning).toBe(true);
    expect(Number(row.sign_count)).toBe(5);
  });

  it('refuses an assertion whose user handle names another user', async () => {
    const u = await userWithPasskey();
    const res = await new Browser(server.url, u.browser.authenticator).login({
      userHandle: Buffer.from(String(u.id + 1)),
    });
    expect(res.body).toEqual({ success: false, message: '用户句柄与凭证不匹配' });
  });

  it('removes one passkey, which then no longer signs in, while the other still does', async () => {
    const u = await userWithPasskey();
    const phone = new Browser(u.client, new SoftAuthenticator(ORIGIN));
    expect((await phone.register('Phone')).body.success).toBe(true);
    const [laptopRow, phoneRow] = await rows(u.id);
    // not another user's
    const stranger = await registerAndLogin(server);
    expect((await stranger.client.delete(`/api/user/passkey/${laptopRow.id}`)).body).toEqual({
      success: false,
      message: 'Passkey 不存在',
    });
    expect((await u.client.delete('/api/user/passkey/abc')).body).toEqual({
      success: false,
      message: 'Passkey 不存在',
    });
    expect((await u.client.delete(`/api/user/passkey/${laptopRow.id}`)).body).toEqual({
      success: true,
      message: 'Passkey 已解绑',
    });
    expect((await rows(u.id)).map((r) => r.id)).toEqual([phoneRow.id]);
    expect((await new Browser(server.url, u.browser.authenticator).login()).body).toEqual(NOT_FOUND);
    expect((await new Browser(server.url, phone.authenticator).login()).body.success).toBe(true);
    // new-api's DELETE without an id removes them all
    expect((await u.client.delete('/api/user/passkey')).body).toEqual({ success: true, message: 'Passkey 已解绑' });
    expect(await rows(u.id)).toHaveLength(0);
    expect((await u.client.get('/api/user/passkey')).body.data).toEqual({
      enabled: false,
      last_used_at: null,
      passkeys: [],
    });
  });

  it('refuses a banned or deleted user with new-api messages', async () => {
    const banned = await userWithPasskey();
    expect((await root.post('/api/user/manage', { id: banned.id, action: 'disable' })).body.success).toBe(true);
    const res = await new Browser(server.url, banned.browser.authenticator).login();
    expect(res.body).toEqual({ success: false, message: '该用户已被禁用' });
    const deleted = await userWithPasskey();
    expect((await root.post('/api/user/manage', { id: deleted.id, action: 'delete' })).body.success).toBe(true);
    expect((await new Browser(server.url, deleted.browser.authenticator).login()).body).toEqual({
      success: false,
      message: '用户已注销',
    });
  });

  it('lets an admin reset the passkeys of a user below them only', async () => {
    const admin = await userWithRole(server, root, 10);
    const u = await userWithPasskey();
    const peer = await userWithRole(server, root, 10);
    await new Browser(peer.client).register();
    expect((await u.client.delete(`/api/user/${peer.id}/reset_passkey`)).body).toEqual({
      success: false,
      message: '无权进行此操作，权限不足',
    });
    expect((await admin.client.delete(`/api/user/${peer.id}/reset_passkey`)).body).toEqual({
      success: false,
      message: '无权更新同权限等级或更高权限等级的用户信息',
    });
    expect(await rows(peer.id)).toHaveLength(1);
    expect((await admin.client.delete(`/api/user/${u.id}/reset_passkey`)).body).toEqual({
      success: true,
      message: 'Passkey 已重置',
    });
    expect(await rows(u.id)).toHaveLength(0);
    expect((await admin.client.delete(`/api/user/${u.id}/reset_passkey`)).body).toEqual({
      success: false,
      message: '该用户尚未绑定 Passkey',
    });
    expect((await root.delete(`/api/user/${peer.id}/reset_passkey`)).body.success).toBe(true);
  });

  it('changes nothing for a malformed finish', async () => {
    const u = await registerAndLogin(server);
    const b = new Browser(u.client);
    await b.call('POST', '/api/user/passkey/register/begin', {});
    const res = await b.call('POST', '/api/user/passkey/register/finish', { id: 'x', response: 'nope' });
    expect(res.body).toEqual({ success: false, message: '无效的参数' });
    const anon = new Browser(server.url);
    await anon.beginLogin();
    expect((await anon.call('POST', '/api/user/passkey/login/finish', [])).body).toEqual({
      success: false,
      message: '无效的参数',
    });
    expect(await rows(u.id)).toHaveLength(0);
  });

  it('lets a user hold several passkeys in a table new-api created with one per user', async () => {
    const tdb = await createTestDatabase(kind);
    const { db: typed, close } = await openDatabase({ dsn: tdb.dsn, sqlitePath: tdb.sqlitePath });
    const db = typed as unknown as Kysely<any>;
    const q = (id: string) => (kind === 'mysql' ? `\`${id}\`` : `"${id}"`);
    try {
      await migrateToLatest(db, kind);
      // new-api's one-per-user unique index in place of ours, and 0010 not yet applied
      const index = 'idx_passkey_credentials_user_id';
      await sql
        .raw(kind === 'mysql' ? `DROP INDEX ${q(index)} ON ${q('passkey_credentials')}` : `DROP INDEX ${q(index)}`)
        .execute(db);
      await sql.raw(`CREATE UNIQUE INDEX ${q(index)} ON ${q('passkey_credentials')} (${q('user_id')})`).execute(db);
      await db.deleteFrom('kysely_migration').where('name', '>=', '0010_passkeys').execute();
      const row = (n: number) => ({ user_id: 7, credential_id: `cred${n}`, public_key: 'pk' });
      await db.insertInto('passkey_credentials').values(row(1)).execute();
      await expect(db.insertInto('passkey_credentials').values(row(2)).execute()).rejects.toThrow();

      expect(await migrateToLatest(db, kind)).toEqual(migrationNames(kind).filter((name) => name >= '0010'));
      await db.insertInto('passkey_credentials').values(row(2)).execute();
      // the credential id stays unique
      await expect(db.insertInto('passkey_credentials').values(row(2)).execute()).rejects.toThrow();
      const n = await db.selectFrom('passkey_credentials').select(db.fn.countAll().as('n')).executeTakeFirst();
      expect(Number(n?.n)).toBe(2);
    } finally {
      await close();
      await tdb.drop();
    }
  });
});

// A ceremony begun on one node finishes on another: the challenge is kept in Redis when configured, else in the
// shared database, never in one process's memory.
describe('passkey challenges shared between two nodes', async () => {
  const redisUp = await redisAvailable();
  for (const store of ['database', 'redis'] as const) {
    it.skipIf(store === 'redis' && !redisUp)(`through the ${store}`, async () => {
      const env: Record<string, string> = {
        CRITICAL_RATE_LIMIT_ENABLE: 'false',
        ...(store === 'redis' ? { REDIS_CONN_STRING: REDIS_URL } : {}),
      };
      const redisPrefix = uniqueName('gwt') + ':';
      const n1 = await startTestServer({ kind: 'sqlite', env, redisPrefix });
      const n2 = await startTestServer({ kind: 'sqlite', database: n1.database, env, redisPrefix });
      try {
        const root = await setupAndLoginRoot(n1);
        await setOption(root, 'ServerAddress', ORIGIN);
        await setOption(root, 'passkey.enabled', true);
        await n2.ctx.options.load();
        const u = await registerAndLogin(n1);
        // register: begun on node 1, finished on node 2 (the same browser, the same cookies)
        const onNode1 = new Browser(u.client);
        const begin = await onNode1.call('POST', '/api/user/passkey/register/begin', {});
        const onNode2 = new Browser(new ConsoleClient(n2.url), onNode1.authenticator);
        Object.assign(onNode2.client, { cookie: u.client.cookie, userId: u.id });
        onNode2.challengeCookie = onNode1.challengeCookie;
        const credential = onNode1.authenticator.create(begin.body.data.options.publicKey);
        const done = await onNode2.call('POST', '/api/user/passkey/register/finish', credential);
        expect(done.body, JSON.stringify(done.body)).toEqual({ success: true, message: 'Passkey 注册成功' });
        // login: begun on node 2, finished on node 1, then replayed on node 2
        const anon2 = new Browser(n2.url, onNode1.authenticator);
        const assertion = onNode1.authenticator.get(await anon2.beginLogin());
        const anon1 = new Browser(n1.url, onNode1.authenticator);
        anon1.challengeCookie = anon2.challengeCookie;
        expect((await anon1.call('POST', '/api/user/passkey/login/finish', assertion)).body.data.id).toBe(u.id);
        expect((await anon2.call('POST', '/api/user/passkey/login/finish', assertion)).body).toEqual(CHALLENGE_MISSING);
        if (store === 'database')
          expect(await n1.ctx.db.selectFrom('short_lived_entries').selectAll().execute()).toEqual([]);
      } finally {
        await n2.close();
        await n1.close();
      }
    });
  }
});
