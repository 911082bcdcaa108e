// The switch from new-api: its database, with the tables exactly as its AutoMigrate creates them on each database
// (test/fixtures/new-api/<kind>.sql) and rows as new-api writes them, is taken over as it is. The gateway starts on
// it (its migrations run) and everything stored keeps working: logins, the channel (its OpenAI organization
// included, which gorm stores as open_ai_organization), the token relaying and being charged, old logs, redemption.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import bcrypt from 'bcryptjs';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest, migrationNames } from '../../src/db/migrate.js';
import { createTestDatabase, describeEachDb, type TestDatabase, type TestDbKind } from '../helpers/databases.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { MockUpstream } from '../helpers/mock-upstream.js';
import { ConsoleClient } from '../helpers/console-client.js';
import { client, flushLogs, logsOf, tokenRow, userRow } from '../relay/fixtures.js';

const ROOT_PASSWORD = 'newapi-root-pw';
const MODEL = 'legacy-chat';
const TOKEN_KEY = 'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7dEf0hIj3kLm6n'; // 48 characters, stored without sk-
const REDEEM_KEY = '0123456789abcdef0123456789abcdef';
const ORG = 'org-from-new-api';

/** The DDL statements of a fixture file, comments dropped. */
function fixtureStatements(kind: TestDbKind, dir = 'new-api'): string[] {
  const text = readFileSync(new URL(`../fixtures/${dir}/${kind}.sql`, import.meta.url), 'utf8');
  return text
    .split('\n')
    .filter((line) => !line.startsWith('--'))
    .join('\n')
    .split(/;\s*\n/)
    .map((s) => s.trim().replace(/;$/, ''))
    .filter(Boolean);
}

/** Every table's column names, sorted. */
async function columnsByTable(db: Kysely<any>): Promise<Record<string, string[]>> {
  const tables = await db.introspection.getTables();
  return Object.fromEntries(tables.map((t) => [t.name, t.columns.map((c) => c.name).sort()]));
}

/** Creates new-api's tables and fills them as new-api does: setup done, root, an OpenAI channel, a token, logs, a code. */
async function buildNewApiDatabase(tdb: TestDatabase, upstreamUrl: string): Promise<Record<string, string[]>> {
  const { db, close } = await openDatabase({ dsn: tdb.dsn, sqlitePath: tdb.sqlitePath });
  const db_ = db as unknown as Kysely<any>;
  // new-api's drivers store booleans as 1/0 on SQLite and MySQL
  const bool = (v: boolean) => (tdb.kind === 'postgres' ? v : v ? 1 : 0);
  const now = Math.floor(Date.now() / 1000);
  try {
    for (const stmt of fixtureStatements(tdb.kind)) await sql.raw(stmt).execute(db_);
    for (const stmt of fixtureStatements(tdb.kind, 'new-api-subscriptions')) await sql.raw(stmt).execute(db_);
    const columns = await columnsByTable(db_);
    await db_
      .insertInto('setups')
      .values({ id: 1, version: 'v0.6.6', initialized_at: now - 86400 })
      .execute();
    // Go's bcrypt writes $2a$ hashes
    const hash = (await bcrypt.hash(ROOT_PASSWORD, 10)).replace(/^\$2[by]\$/, '$2a$');
    await db_
      .insertInto('users')
      .values({
        id: 1,
        username: 'root',
        password: hash,
        display_name: 'Root User',
        role: 100,
        status: 1,
        email: '',
        github_id: '',
        oidc_id: '',
        wechat_id: '',
        telegram_id: '',
        access_token: null,
        quota: 10_000_000,
        used_quota: 0,
        request_count: 0,
        group: 'default',
        aff_code: 'Xy7k',
        aff_count: 0,
        aff_quota: 0,
        aff_history: 0,
        inviter_id: 0,
        deleted_at: null,
        linux_do_id: '',
        setting: '',
      })
      .execute();
    await db_
      .insertInto('options')
      .values([
        { key: 'ModelRatio', value: JSON.stringify({ [MODEL]: 2 }) },
        { key: 'CompletionRatio', value: JSON.stringify({ [MODEL]: 3 }) },
        { key: 'SystemName', value: 'Old New API' },
      ])
      .execute();
    await db_
      .insertInto('channels')
      .values({
        id: 1,
        type: 1,
        key: 'sk-upstream-newapi',
        open_ai_organization: ORG,
        test_model: null,
        status: 1,
        name: 'openai-main',
        weight: 0,
        created_time: now - 86400,
        test_time: 0,
        response_time: 0,
        base_url: upstreamUrl,
        other: '',
        balance: 0,
        balance_updated_time: 0,
        models: MODEL,
        group: 'default',
        used_quota: 0,
        model_mapping: '',
        status_code_mapping: '',
        priority: 0,
        auto_ban: 1,
        other_info: '',
        tag: null,
        setting: null,
        param_override: null,
      })
      .execute();
    await db_
      .insertInto('abilities')
      .values({ group: 'default', model: MODEL, channel_id: 1, enabled: bool(true), priority: 0, weight: 0, tag: null })
      .execute();
    await db_
      .insertInto('tokens')
      .values({
        id: 1,
        user_id: 1,
        key: TOKEN_KEY,
        status: 1,
        name: 'old-token',
        created_time: now - 3600,
        accessed_time: now - 3600,
        expired_time: -1,
        remain_quota: 300_000,
        unlimited_quota: bool(false),
        model_limits_enabled: bool(false),
        model_limits: '',
        allow_ips: '',
        used_quota: 0,
        group: '',
        deleted_at: null,
      })
      .execute();
    const log = {
      user_id: 1,
      username: 'root',
      token_name: '',
      model_name: '',
      quota: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
      use_time: 0,
      is_stream: bool(false),
      channel_id: 0,
      token_id: 0,
      group: '',
      other: '',
    };
    await db_
      .insertInto('logs')
      .values([
        { ...log, id: 1, created_at: now - 7200, type: 1, content: '通过兑换码充值 ＄20.000000 额度，兑换码ID 7' },
        {
          ...log,
          id: 2,
          created_at: now - 3600,
          type: 2,
          content: '模型倍率 2.00，补全倍率 3.00，分组倍率 1.00',
          token_name: 'old-token',
          model_name: MODEL,
          quota: 128,
          prompt_tokens: 22,
          completion_tokens: 14,
          use_time: 2,
          channel_id: 1,
          token_id: 1,
          group: 'default',
          other: JSON.stringify({
            model_ratio: 2,
            completion_ratio: 3,
            group_ratio: 1,
            admin_info: { use_channel: ['1'] },
          }),
        },
      ])
      .execute();
    await db_
      .insertInto('redemptions')
      .values({
        id: 1,
        user_id: 1,
        key: REDEEM_KEY,
        status: 1,
        name: 'gift',
        quota: 500_000,
        created_time: now - 600,
        redeemed_time: 0,
        used_user_id: 0,
        deleted_at: null,
      })
      .execute();
    await insertNewApiSubscriptionRows(db_, bool, now);
    if (tdb.kind === 'postgres') {
      // explicit ids leave PostgreSQL's sequences behind; new-api's own inserts would have advanced them
      for (const t of [
        'users',
        'channels',
        'tokens',
        'logs',
        'redemptions',
        'setups',
        ...Object.keys(SUBSCRIPTION_ROWS),
      ])
        await sql.raw(`SELECT setval('${t}_id_seq', (SELECT MAX(id) FROM "${t}"))`).execute(db_);
    }
    return columns;
  } finally {
    await close();
  }
}

/** Subscription rows as new-api writes them: a plan, its paid order, the subscription it bought, a pre-consume. */
const SUBSCRIPTION_ROWS = {
  subscription_plans: {
    id: 3,
    title: 'Pro',
    subtitle: 'for heavy users',
    price_amount: 9.99,
    currency: 'USD',
    duration_unit: 'month',
    duration_value: 1,
    custom_seconds: 0,
    sort_order: 5,
    stripe_price_id: 'price_123',
    creem_product_id: '',
    max_purchase_per_user: 2,
    upgrade_group: 'vip',
    total_amount: 5_000_000,
    quota_reset_period: 'daily',
    quota_reset_custom_seconds: 0,
    created_at: 1_770_000_000,
    updated_at: 1_770_000_100,
  },
  subscription_orders: {
    id: 4,
    user_id: 1,
    plan_id: 3,
    money: 9.99,
    trade_no: 'SUB-NEWAPI-1',
    payment_method: 'balance',
    payment_provider: '',
    status: 'success',
    create_time: 1_770_000_200,
    complete_time: 1_770_000_201,
    provider_payload: '',
  },
  user_subscriptions: {
    id: 5,
    user_id: 1,
    plan_id: 3,
    amount_total: 5_000_000,
    amount_used: 1234,
    start_time: 1_770_000_201,
    end_time: 1_772_678_601,
    status: 'active',
    source: 'order',
    last_reset_time: 1_770_000_201,
    next_reset_time: 1_770_076_800,
    upgrade_group: 'vip',
    prev_user_group: 'default',
    created_at: 1_770_000_201,
    updated_at: 1_770_000_300,
  },
  subscription_pre_consume_records: {
    id: 6,
    request_id: 'req-newapi-1',
    user_id: 1,
    user_subscription_id: 5,
    pre_consumed: 1234,
    status: 'consumed',
    created_at: 1_770_000_300,
    updated_at: 1_770_000_300,
  },
};

async function insertNewApiSubscriptionRows(db: Kysely<any>, bool: (v: boolean) => boolean | number, now: number) {
  await db
    .insertInto('subscription_plans')
    .values({ ...SUBSCRIPTION_ROWS.subscription_plans, enabled: bool(true) })
    .execute();
  // a second plan, disabled, as new-api's PATCH leaves it
  await db
    .insertInto('subscription_plans')
    .values({ id: 2, title: 'Old', price_amount: 1, enabled: bool(false), created_at: now, updated_at: now })
    .execute();
  for (const table of ['subscription_orders', 'user_subscriptions', 'subscription_pre_consume_records'] as const)
    await db.insertInto(table).values(SUBSCRIPTION_ROWS[table]).execute();
}

await describeEachDb('a database written by new-api', (kind) => {
  let tdb: TestDatabase;
  let up: MockUpstream;
  let s: TestServer;
  let root: ConsoleClient;
  let newApiColumns: Record<string, string[]>;

  beforeAll(async () => {
    up = await MockUpstream.start();
    tdb = await createTestDatabase(kind);
    newApiColumns = await buildNewApiDatabase(tdb, up.url);
    s = await startTestServer({ database: tdb, env: { CRITICAL_RATE_LIMIT_ENABLE: 'false' } });
    root = new ConsoleClient(s.url);
  });
  afterAll(async () => {
    await s?.close();
    await up?.close();
    await tdb?.drop();
  });

  it('keeps new-api’s columns: the migrations add none beside them but our own max_input_tokens and discord_id', async () => {
    const after = await columnsByTable(s.ctx.db as unknown as Kysely<any>);
    for (const [table, before] of Object.entries(newApiColumns)) {
      const added = after[table].filter((c) => !before.includes(c));
      // users.discord_id: new-api's later column for Discord logins; tasks.group and tasks.private_data: its later
      // task engine's columns, midjourneys.video_url(s) its later video actions', channels.channel_info its later
      // multi-key channels', top_ups.payment_method its later payment methods', which this snapshot predates;
      // midjourneys.private_data is ours alone
      const ours: Record<string, string[]> = {
        channels: ['channel_info', 'max_input_tokens'],
        users: ['discord_id'],
        tasks: ['group', 'private_data'],
        midjourneys: ['private_data', 'video_url', 'video_urls'],
        top_ups: ['payment_method'],
      };
      expect({ table, added }).toEqual({ table, added: ours[table] ?? [] });
    }
    const status = await root.get('/api/status');
    expect(status.body.data.system_name).toBe('Old New API');
  });

  it('fills channel_info of the channels written before the column (new-api cannot read a NULL one)', async () => {
    const rows = await (s.ctx.db as unknown as Kysely<any>).selectFrom('channels').select('channel_info').execute();
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) {
      const info = typeof r.channel_info === 'string' ? JSON.parse(r.channel_info) : r.channel_info;
      expect(info).toEqual({
        is_multi_key: false,
        multi_key_size: 0,
        multi_key_status_list: null,
        multi_key_polling_index: 0,
        multi_key_mode: '',
      });
    }
  });

  it('reads back the plans, orders, subscriptions and pre-consume records new-api wrote', async () => {
    const db = s.ctx.db;
    const plan = await db.selectFrom('subscription_plans').selectAll().where('id', '=', 3).executeTakeFirstOrThrow();
    expect({ ...plan, enabled: !!plan.enabled }).toEqual({ ...SUBSCRIPTION_ROWS.subscription_plans, enabled: true });
    const old = await db.selectFrom('subscription_plans').selectAll().where('id', '=', 2).executeTakeFirstOrThrow();
    // gorm's column defaults fill what new-api's insert left out
    expect({ ...old, enabled: !!old.enabled }).toMatchObject({
      enabled: false,
      currency: 'USD',
      duration_unit: 'month',
      duration_value: 1,
      total_amount: 0,
      quota_reset_period: 'never',
      subtitle: '',
    });
    for (const table of ['subscription_orders', 'user_subscriptions', 'subscription_pre_consume_records'] as const) {
      const rows = await db.selectFrom(table).selectAll().execute();
      expect({ table, rows }).toEqual({ table, rows: [SUBSCRIPTION_ROWS[table]] });
    }
    // the tables of ours beside them start empty: a plan without limits is new-api's single window
    expect(await db.selectFrom('subscription_plan_limits').selectAll().execute()).toEqual([]);
    expect(await db.selectFrom('subscription_usage').selectAll().execute()).toEqual([]);
    // gorm's unique trade_no still refuses a second order with the same number
    await expect(
      db
        .insertInto('subscription_orders')
        .values({ ...SUBSCRIPTION_ROWS.subscription_orders, id: 99 })
        .execute(),
    ).rejects.toThrow();
  });

  it('logs root in with the password new-api hashed', async () => {
    expect((await root.login('root', 'wrong-password')).body.success).toBe(false);
    const res = await root.login('root', ROOT_PASSWORD);
    expect(res.body).toMatchObject({ success: true, data: { id: 1, username: 'root', role: 100, status: 1 } });
  });

  it('lists the plans new-api wrote through new-api’s routes, as new-api’s JSON', async () => {
    const { created_at, updated_at, ...fields } = SUBSCRIPTION_ROWS.subscription_plans;
    const admin = await root.get('/api/subscription/admin/plans');
    expect(admin.body.success).toBe(true);
    expect(admin.body.data.map((v: any) => [v.plan.id, v.plan.enabled, v.limits])).toEqual([
      [3, true, null],
      [2, false, null],
    ]);
    expect(admin.body.data[0].plan).toEqual({ ...fields, enabled: true, created_at, updated_at });
    const mine = await root.get('/api/subscription/plans');
    expect(mine.body.data.map((v: any) => v.plan.id)).toEqual([3]);
  });

  it('lists the logs new-api wrote', async () => {
    const res = await root.get('/api/log/?p=1&page_size=10');
    expect(res.body.success).toBe(true);
    expect(res.body.data.total).toBe(2);
    expect(res.body.data.items.map((l: any) => [l.id, l.type, l.quota])).toEqual([
      [2, 2, 128],
      [1, 1, 0],
    ]);
  });

  it('sends the organization new-api stored upstream and shows it in the console API', async () => {
    up.reset();
    const r = await client(s, TOKEN_KEY).chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(r.choices[0].message.content).toBe('Hello world!');
    expect(up.requests).toHaveLength(1);
    expect(up.requests[0].headers.authorization).toBe('Bearer sk-upstream-newapi');
    expect(up.requests[0].headers['openai-organization']).toBe(ORG);

    const one = await root.get('/api/channel/1');
    expect(one.body).toMatchObject({ success: true, data: { id: 1, name: 'openai-main', openai_organization: ORG } });
    expect(one.body.data).not.toHaveProperty('key');
    expect(one.body.data).not.toHaveProperty('open_ai_organization');
    const list = await root.get('/api/channel/?p=0&page_size=10');
    expect(list.body.data.map((c: any) => c.openai_organization)).toEqual([ORG]);
  });

  it('charges the relayed request to the unit on new-api’s rows and logs it', async () => {
    await flushLogs(s);
    // 11 prompt + 7 completion × 3 = 32, × model ratio 2 = 64
    expect(await userRow(s, 1)).toEqual({ quota: 10_000_000 - 64, used_quota: 64, request_count: 1 });
    expect(await tokenRow(s, 1)).toMatchObject({ remain_quota: 300_000 - 64, used_quota: 64 });
    const ch = await s.ctx.db.selectFrom('channels').select('used_quota').where('id', '=', 1).executeTakeFirstOrThrow();
    expect(Number(ch.used_quota)).toBe(64);
    const consume = (await logsOf(s, 1)).filter((l) => l.type === 2);
    expect(
      consume.map((l) => [
        l.quota,
        l.prompt_tokens,
        l.completion_tokens,
        l.token_name,
        l.token_id,
        l.channel_id,
        l.model_name,
      ]),
    ).toEqual([
      [128, 22, 14, 'old-token', 1, 1, MODEL],
      [64, 11, 7, 'old-token', 1, 1, MODEL],
    ]);
  });

  it('writes an organization edited in the console to new-api’s column', async () => {
    const res = await root.put('/api/channel/', { id: 1, openai_organization: 'org-edited' });
    expect(res.body).toMatchObject({ success: true, data: { openai_organization: 'org-edited' } });
    const db = s.ctx.db as unknown as Kysely<any>;
    const row = await db
      .selectFrom('channels')
      .select('open_ai_organization')
      .where('id', '=', 1)
      .executeTakeFirstOrThrow();
    expect(row.open_ai_organization).toBe('org-edited');
  });

  it('redeems new-api’s code once', async () => {
    const before = (await userRow(s, 1)).quota;
    expect((await root.post('/api/user/topup', { key: REDEEM_KEY })).body).toEqual({
      success: true,
      message: '',
      data: 500_000,
    });
    expect((await root.post('/api/user/topup', { key: REDEEM_KEY })).body).toEqual({
      success: false,
      message: '该兑换码已被使用',
    });
    expect((await userRow(s, 1)).quota).toBe(before + 500_000);
    const code = await s.ctx.db
      .selectFrom('redemptions')
      .select(['status', 'used_user_id'])
      .where('id', '=', 1)
      .executeTakeFirstOrThrow();
    expect(code).toEqual({ status: 3, used_user_id: 1 });
  });
});

await describeEachDb('a database an earlier gateway version migrated', (kind) => {
  it('moves the organizations stored under our old column name to new-api’s, never over a value new-api wrote', async () => {
    const tdb = await createTestDatabase(kind);
    const { db: typed, close } = await openDatabase({ dsn: tdb.dsn, sqlitePath: tdb.sqlitePath });
    const db = typed as unknown as Kysely<any>;
    const q = (id: string) => (kind === 'mysql' ? `\`${id}\`` : `"${id}"`);
    const orgs = async () =>
      (
        await db
          .selectFrom('channels')
          .select(['name', 'open_ai_organization', 'openai_organization'])
          .orderBy('id')
          .execute()
      ).map((r) => [r.name, r.open_ai_organization, r.openai_organization]);
    try {
      await migrateToLatest(db, kind);
      // the schema as the earlier version left a database it created: our column only, 0007 not applied
      await sql
        .raw(
          `ALTER TABLE ${q('channels')} ADD COLUMN ${q('openai_organization')} ${kind === 'mysql' ? 'longtext' : 'text'}`,
        )
        .execute(db);
      await sql.raw(`ALTER TABLE ${q('channels')} DROP COLUMN ${q('open_ai_organization')}`).execute(db);
      // migrations run in order: the later ones are un-recorded too, and run again (each is idempotent)
      await db.deleteFrom('kysely_migration').where('name', '>=', '0007_new_api_column_names').execute();
      await db.insertInto('channels').values({ key: 'k1', name: 'ours', openai_organization: 'org-ours' }).execute();
      await db.insertInto('channels').values({ key: 'k2', name: 'none', openai_organization: null }).execute();

      expect(await migrateToLatest(db, kind)).toEqual(migrationNames(kind).filter((name) => name >= '0007'));
      expect(await orgs()).toEqual([
        ['ours', 'org-ours', 'org-ours'],
        ['none', null, null],
      ]);

      // a database new-api created, then run by the earlier version (both columns), migrated again
      await db.deleteFrom('kysely_migration').where('name', '>=', '0007_new_api_column_names').execute();
      await db
        .insertInto('channels')
        .values({ key: 'k3', name: 'new-api', open_ai_organization: 'org-new-api', openai_organization: null })
        .execute();
      await db
        .insertInto('channels')
        .values({ key: 'k4', name: 'both', open_ai_organization: 'org-kept', openai_organization: 'org-ignored' })
        .execute();
      await db
        .insertInto('channels')
        .values({ key: 'k5', name: 'empty', open_ai_organization: '', openai_organization: 'org-moved' })
        .execute();
      expect(await migrateToLatest(db, kind)).toEqual(migrationNames(kind).filter((name) => name >= '0007'));
      expect(await orgs()).toEqual([
        ['ours', 'org-ours', 'org-ours'],
        ['none', null, null],
        ['new-api', 'org-new-api', null],
        ['both', 'org-kept', 'org-ignored'],
        ['empty', 'org-moved', 'org-moved'],
      ]);
      expect(await migrateToLatest(db, kind)).toEqual([]);
    } finally {
      await close();
      await tdb.drop();
    }
  });
});
