import { expect, it } from 'vitest';
import { sql, type Kysely } from 'kysely';
import { openDatabase } from '../../src/db/connect.js';
import { migrateToLatest, migrationNames } from '../../src/db/migrate.js';
import { TABLES, ensureTables } from '../../src/db/tables.js';
import { adoptIdentityClaims } from '../../src/db/identity-claims.js';
import { createTestDatabase, describeEachDb } from '../helpers/databases.js';

await describeEachDb('migrations', (kind) => {
  it('creates every new-api table, is re-runnable, and stores 64-bit quotas', async () => {
    const tdb = await createTestDatabase(kind);
    const { db, close } = await openDatabase({ dsn: tdb.dsn, sqlitePath: tdb.sqlitePath });
    try {
      const first = await migrateToLatest(db, kind);
      expect(first).toEqual([
        '0001_new_api_schema',
        '0002_quota_columns_64bit',
        '0003_quota_holds',
        '0004_quota_hold_journal',
        '0005_hold_journal_without_rowid',
        '0006_sessions',
        '0007_new_api_column_names',
        '0008_oauth_states',
        ...migrationNames(kind).filter((name) => name >= '0009'),
      ]);
      expect(await migrateToLatest(db, kind)).toEqual([]);
      const tables = await db.introspection.getTables();
      const names = new Set(tables.map((t) => t.name));
      for (const t of TABLES) {
        expect(names.has(t.name), t.name).toBe(true);
        const cols = new Set(tables.find((x) => x.name === t.name)!.columns.map((c) => c.name));
        for (const c of t.columns) expect(cols.has(c.name), `${t.name}.${c.name}`).toBe(true);
      }
      const big = 9_000_000_000_000; // far above new-api's 32-bit cap
      await db.insertInto('users').values({ username: 'big', password: 'x', quota: big, setting: '' }).execute();
      const row = await db
        .selectFrom('users')
        .select(['quota', 'group', 'role', 'status'])
        .where('username', '=', 'big')
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ quota: big, group: 'default', role: 1, status: 1 });
      await db
        .insertInto('tokens')
        .values({ user_id: 1, key: 'k'.repeat(48), unlimited_quota: true })
        .execute();
      const tok = await db.selectFrom('tokens').select(['unlimited_quota', 'expired_time']).executeTakeFirstOrThrow();
      expect(!!tok.unlimited_quota).toBe(true);
      expect(tok.expired_time).toBe(-1);
      await expect(
        db.insertInto('users').values({ username: 'big', password: 'y', setting: '' }).execute(),
      ).rejects.toThrow();
      await sql`SELECT 1`.execute(db);
    } finally {
      await close();
      await tdb.drop();
    }
  });

  it('0012 claims the accounts bound before it for the lowest user id holding each, and can run again', async () => {
    const tdb = await createTestDatabase(kind);
    const { db, close } = await openDatabase({ dsn: tdb.dsn, sqlitePath: tdb.sqlitePath });
    try {
      await migrateToLatest(db, kind);
      const add = async (username: string, extra: Record<string, unknown>) => {
        await db
          .insertInto('users')
          .values({ username, password: 'x', setting: '', ...extra })
          .execute();
        return (await db.selectFrom('users').select('id').where('username', '=', username).executeTakeFirstOrThrow())
          .id;
      };
      // a past race bound one GitHub account twice; a deleted user keeps its WeChat binding
      const first = await add('first', { github_id: 'twice' });
      const second = await add('second', { github_id: 'twice', telegram_id: '42' });
      const gone = await add('gone', { wechat_id: 'wx-1', deleted_at: new Date() });
      // migrations run in order: the later ones are un-recorded too, and run again (each is idempotent)
      await sql`DELETE FROM kysely_migration WHERE name >= ${'0012_identity_claims'}`.execute(db);
      expect(await migrateToLatest(db, kind)).toEqual(migrationNames(kind).filter((name) => name >= '0012'));
      await adoptIdentityClaims(db, kind);
      const claims = await db
        .selectFrom('identity_claims')
        .select(['provider', 'external_id', 'user_id'])
        .orderBy('provider')
        .execute();
      expect(claims.map((c) => [c.provider, c.external_id, Number(c.user_id)])).toEqual([
        ['github', 'twice', first],
        ['telegram', '42', second],
        ['wechat', 'wx-1', gone],
      ]);
    } finally {
      await close();
      await tdb.drop();
    }
  });

  // SQLite only: the hold journal table exists on SQLite alone (PostgreSQL and MySQL keep pair rows), so this is
  // skipped on the other two databases
  it.runIf(kind === 'sqlite')(
    'rebuilds a hold journal created with a rowid as a WITHOUT ROWID table, keeping its rows',
    async () => {
      const tdb = await createTestDatabase(kind);
      const { db, close } = await openDatabase({ dsn: tdb.dsn, sqlitePath: tdb.sqlitePath });
      try {
        // the database of a version before 0005, with a dead node's journal still to recover
        await sql
          .raw(
            'CREATE TABLE kysely_migration (name varchar(255) NOT NULL PRIMARY KEY, timestamp varchar(255) NOT NULL)',
          )
          .execute(db);
        await sql
          .raw(
            'CREATE TABLE kysely_migration_lock (id varchar(255) NOT NULL PRIMARY KEY, is_locked integer DEFAULT 0 NOT NULL)',
          )
          .execute(db);
        await sql
          .raw(
            `CREATE TABLE "quota_hold_journal" ("node" varchar(64) NOT NULL, "seq" bigint NOT NULL, "holds" text NOT NULL, PRIMARY KEY ("node", "seq"))`,
          )
          .execute(db);
        await sql
          .raw(
            `INSERT INTO quota_hold_journal VALUES ('dead-node', 1, '[1,2,30,30]'), ('dead-node', 2, '[1,2,-30,-30]'), ('other', 7, '[3,0,5,0]')`,
          )
          .execute(db);
        for (const name of [
          '0001_new_api_schema',
          '0002_quota_columns_64bit',
          '0003_quota_holds',
          '0004_quota_hold_journal',
        ]) {
          await sql`INSERT INTO kysely_migration (name, timestamp) VALUES (${name}, '2026-11-01T00:00:00.000Z')`.execute(
            db,
          );
        }
        // the rest of the schema as 0001-0004 left it
        await ensureTables(db, kind);

        // (the later migrations run too)
        expect(await migrateToLatest(db, kind)).toContain('0005_hold_journal_without_rowid');
        const ddl = await sql<{ sql: string }>`SELECT sql FROM sqlite_master WHERE name = 'quota_hold_journal'`.execute(
          db,
        );
        expect(ddl.rows[0].sql).toMatch(/WITHOUT ROWID$/);
        const rows = await db.selectFrom('quota_hold_journal').selectAll().orderBy('node').orderBy('seq').execute();
        expect(rows).toEqual([
          { node: 'dead-node', seq: 1, holds: '[1,2,30,30]' },
          { node: 'dead-node', seq: 2, holds: '[1,2,-30,-30]' },
          { node: 'other', seq: 7, holds: '[3,0,5,0]' },
        ]);
        await expect(sql.raw(`INSERT INTO quota_hold_journal VALUES ('other', 7, '[]')`).execute(db)).rejects.toThrow(
          /UNIQUE/,
        );
        expect(await migrateToLatest(db, kind)).toEqual([]);
      } finally {
        await close();
        await tdb.drop();
      }
    },
  );

  it('0021 creates the subscription tables with gorm’s index names on a database migrated before it', async () => {
    const tdb = await createTestDatabase(kind);
    const { db, close } = await openDatabase({ dsn: tdb.dsn, sqlitePath: tdb.sqlitePath });
    const q = (id: string) => (kind === 'mysql' ? `\`${id}\`` : `"${id}"`);
    const subscriptionTables = TABLES.filter((t) => t.name.includes('subscription'));
    try {
      await migrateToLatest(db, kind);
      // the database as the version before 0021 left it
      for (const t of subscriptionTables) await sql.raw(`DROP TABLE ${q(t.name)}`).execute(db);
      await (db as unknown as Kysely<any>)
        .deleteFrom('kysely_migration')
        .where('name', 'in', ['0021_subscriptions', '0022_subscription_rolling_snapshot'])
        .execute();
      expect(await migrateToLatest(db, kind)).toEqual(['0021_subscriptions', '0022_subscription_rolling_snapshot']);
      expect(subscriptionTables.map((t) => t.name).sort()).toEqual([
        'subscription_holds',
        'subscription_orders',
        'subscription_plan_limits',
        'subscription_plans',
        'subscription_pre_consume_records',
        'subscription_usage',
        'user_subscriptions',
      ]);
      for (const t of subscriptionTables)
        expect({ table: t.name, indexes: await indexNames(db, kind, t.name) }).toEqual({
          table: t.name,
          indexes: t.indexes.map((i) => i.name).sort(),
        });
      expect(await indexNames(db, kind, 'user_subscriptions')).toContain('idx_user_sub_active');

      // price_amount is decimal(10,6): six decimals exact, read back as a number; amounts are 64-bit
      const big = 9_000_000_000_000;
      await db
        .insertInto('subscription_plans')
        .values({ title: 'p', price_amount: 1234.123456, total_amount: big, enabled: true })
        .execute();
      const plan = await db.selectFrom('subscription_plans').selectAll().executeTakeFirstOrThrow();
      expect(plan).toMatchObject({
        price_amount: 1234.123456,
        total_amount: big,
        currency: 'USD',
        duration_unit: 'month',
        duration_value: 1,
        quota_reset_period: 'never',
      });
      await db
        .insertInto('subscription_usage')
        .values({ user_subscription_id: 1, user_id: 7, daily_limit: big, daily_end: 1_800_000_000 })
        .execute();
      expect(await db.selectFrom('subscription_usage').selectAll().executeTakeFirstOrThrow()).toMatchObject({
        user_subscription_id: 1,
        user_id: 7,
        main_limit: 0,
        daily_limit: big,
        daily_used: 0,
        daily_end: 1_800_000_000,
      });
      await db
        .insertInto('subscription_plan_limits')
        .values({ plan_id: 1, daily_amount: 5, models: 'a,b', groups: 'vip' })
        .execute();
      expect(await db.selectFrom('subscription_plan_limits').selectAll().executeTakeFirstOrThrow()).toEqual({
        plan_id: 1,
        rolling_seconds: 0,
        rolling_amount: 0,
        daily_amount: 5,
        weekly_amount: 0,
        monthly_amount: 0,
        models: 'a,b',
        groups: 'vip',
      });
      // one order per trade number; one hold per node, subscription, slot and period
      await db.insertInto('subscription_orders').values({ trade_no: 'T1', status: 'pending' }).execute();
      await expect(db.insertInto('subscription_orders').values({ trade_no: 'T1' }).execute()).rejects.toThrow();
      const hold = { node: 'n1', user_subscription_id: 1, slot: 'daily', period_end: 1_800_000_000, amount: 3 };
      await db.insertInto('subscription_holds').values(hold).execute();
      await expect(db.insertInto('subscription_holds').values(hold).execute()).rejects.toThrow();
      await db
        .insertInto('subscription_holds')
        .values({ ...hold, period_end: 1_800_086_400 })
        .execute();
      expect(await migrateToLatest(db, kind)).toEqual([]);
    } finally {
      await close();
      await tdb.drop();
    }
  });

  it('adds missing columns to a table created by an older schema', async () => {
    const tdb = await createTestDatabase(kind);
    const { db, close } = await openDatabase({ dsn: tdb.dsn, sqlitePath: tdb.sqlitePath });
    try {
      const idType =
        kind === 'sqlite'
          ? 'integer PRIMARY KEY AUTOINCREMENT'
          : kind === 'postgres'
            ? 'serial PRIMARY KEY'
            : 'int AUTO_INCREMENT PRIMARY KEY';
      const q = kind === 'mysql' ? '`' : '"';
      await sql
        .raw(`CREATE TABLE channels (id ${idType}, type int DEFAULT 0, ${q}key${q} text NOT NULL, name varchar(100))`)
        .execute(db);
      await sql
        .raw(
          `CREATE TABLE users (id ${idType}, username varchar(20) NOT NULL, password text NOT NULL, quota int DEFAULT 0)`,
        )
        .execute(db);
      await migrateToLatest(db, kind);
      await db.insertInto('channels').values({ key: 'sk-x', models: 'a,b', tag: 't' }).execute();
      const ch = await db.selectFrom('channels').select(['models', 'tag', 'priority']).executeTakeFirstOrThrow();
      expect(ch.models).toBe('a,b');
      if (kind !== 'sqlite') {
        await db
          .insertInto('users')
          .values({ username: 'u', password: 'p', quota: 5_000_000_000, setting: '' })
          .execute();
        const u = await db.selectFrom('users').select('quota').executeTakeFirstOrThrow();
        expect(u.quota).toBe(5_000_000_000);
      }
    } finally {
      await close();
      await tdb.drop();
    }
  });
});

/** The names of a table's indexes (primary keys and SQLite's automatic ones left out), sorted. */
async function indexNames(db: Kysely<any>, kind: string, table: string): Promise<string[]> {
  const rows =
    kind === 'sqlite'
      ? await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ${table}
          AND name NOT LIKE 'sqlite_autoindex%'`.execute(db)
      : kind === 'postgres'
        ? await sql<{ name: string }>`SELECT indexname AS name FROM pg_indexes WHERE tablename = ${table}
            AND indexname NOT LIKE '%_pkey'`.execute(db)
        : await sql<{ name: string }>`SELECT DISTINCT index_name AS name FROM information_schema.statistics
            WHERE table_schema = DATABASE() AND table_name = ${table} AND index_name <> 'PRIMARY'`.execute(db);
  return rows.rows.map((r) => r.name).sort();
}
