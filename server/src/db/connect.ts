// Opens the database a DSN names (new-api-compat.md §1.4): empty or "local" → SQLite file, postgres:// → PostgreSQL,
// anything else → MySQL/MariaDB (Go-style `user:pass@tcp(host:port)/db?…` or a mysql:// URL).
import { dirname } from 'node:path';
import { ensurePrivateDir, ensurePrivateSqliteFiles } from '../lib/private-files.js';
import { Kysely, MysqlDialect, PostgresDialect, SqliteDialect } from 'kysely';
import BetterSqlite3 from 'better-sqlite3';
import type { Pool as PgPool, PoolClient as PgClient } from 'pg';
import { dbKindOf, type DbKind } from '../config.js';
import type { Database } from './schema.js';
import { writeLockOf } from './sqlite-write-lock.js';
import { CappedMap } from '../lib/bounded.js';

export interface Db {
  db: Kysely<Database>;
  kind: DbKind;
  close(): Promise<void>;
  /** SQLite only: the better-sqlite3 connection behind `db` (see sqliteHandle) */
  sqlite?: BetterSqlite3.Database;
}

const sqliteHandles = new WeakMap<Kysely<Database>, BetterSqlite3.Database>();

/**
 * The better-sqlite3 connection behind a Kysely instance opened by openDatabase (undefined for PostgreSQL/MySQL), for
 * synchronous prepared statements on the relay hot path. It is the same single connection Kysely uses: a caller must
 * not run statements while `inTransaction` is true (a Kysely transaction is open and awaiting), and must not await
 * inside its own transaction.
 */
export function sqliteHandle(db: Kysely<Database>): BetterSqlite3.Database | undefined {
  return sqliteHandles.get(db);
}

/**
 * SQL texts that run as named (server-side prepared) statements on PostgreSQL, each parsed and planned once per
 * connection instead of on every call: the relay's quota statements and log inserts. Planning on every call was most
 * of what an unnamed statement cost PostgreSQL in CPU: docs/perf/postgres-mysql-batching.md. Only fixed texts belong
 * here (a name per text, kept by every pooled connection for its life).
 */
const pgStatementNames = new Map<string, string>();

/** Runs `sql` as a named prepared statement on PostgreSQL from now on (idempotent; no effect on other databases). */
export function pgPrepared(sql: string): string {
  if (!pgStatementNames.has(sql)) pgStatementNames.set(sql, `gw_${pgStatementNames.size + 1}`);
  return sql;
}

/**
 * What a connection pooler in transaction mode answers when a named statement was prepared on another server
 * connection than the one that runs it: "prepared statement … does not exist" or "… already exists". new-api talks
 * to PostgreSQL with pgx's simple protocol, so such a pooler works with it; here the first such error turns naming off
 * for the pool and the statement runs again unnamed (it did not run: the error came at its Parse or Bind).
 */
const POOLER_STATEMENT_ERRORS = new Set(['26000', '42P05']);

const NAMED = Symbol('named statements');

/** The pool as Kysely sees it: clients whose query() names the texts pgPrepared() registered. */
function namingPool(pool: PgPool, onNamingOff?: (err: Error) => void): PgPool {
  let naming = true;
  const connect = async () => {
    const client: PgClient & { [NAMED]?: true } = await pool.connect();
    if (!client[NAMED]) {
      client[NAMED] = true;
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      const plain = (text: unknown, values?: unknown) => (values === undefined ? query(text) : query(text, values));
      client.query = ((text: unknown, values?: unknown) => {
        const name = naming && typeof text === 'string' ? pgStatementNames.get(text) : undefined;
        if (!name) return plain(text, values);
        return query({ name, text, values }).catch((err: { code?: string }) => {
          if (!POOLER_STATEMENT_ERRORS.has(err?.code ?? '')) throw err;
          if (naming) {
            naming = false;
            onNamingOff?.(err as Error);
          }
          return plain(text, values);
        });
      }) as typeof client.query;
    }
    return client;
  };
  return { connect, end: () => pool.end() } as unknown as PgPool;
}

// The PostgreSQL and MySQL drivers are imported only when the DSN selects them: each costs 15-20 MB of memory.
async function pgPool(connectionString: string, max: number, maxLifetimeSeconds: number): Promise<PgPool> {
  const pg = (await import('pg')).default;
  // BIGINT (int8) and NUMERIC come back from pg as strings; quotas fit well inside 2^53.
  pg.types.setTypeParser(20, (v) => Number(v));
  pg.types.setTypeParser(1700, (v) => Number(v));
  return new pg.Pool({ connectionString, max, maxLifetimeSeconds });
}

/** Parses a Go-style MySQL DSN (`user:pass@tcp(host:port)/db?params`) or a mysql:// URL. */
export function parseMysqlDsn(dsn: string): {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
} {
  if (dsn.startsWith('mysql://')) {
    const u = new URL(dsn);
    return {
      host: u.hostname || '127.0.0.1',
      port: Number(u.port || 3306),
      user: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      database: decodeURIComponent(u.pathname.replace(/^\//, '')),
    };
  }
  const m = /^(?:([^:@]*)(?::(.*))?@)?(?:tcp\(([^)]*)\))?\/([^?]*)/.exec(dsn);
  if (!m) throw new Error(`cannot parse MySQL DSN`);
  const [host, port] = (m[3] || '127.0.0.1:3306').split(':');
  return {
    user: m[1] ?? 'root',
    password: m[2] ?? '',
    host: host || '127.0.0.1',
    port: Number(port || 3306),
    database: m[4],
  };
}

// better-sqlite3 binds neither booleans nor Dates; convert them the way gorm's SQLite driver stores them.
function sqliteValue(v: unknown): unknown {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (v instanceof Date) return v.toISOString();
  return v;
}

const BEGIN = /^\s*begin\b/i;
/** INSERT/UPDATE/DELETE … RETURNING: run through all() (better-sqlite3 calls them readers) */
const RETURNING_WRITE = /^\s*(insert|update|delete|replace)\b/i;
const END = /^\s*(commit|end|rollback)\s*(transaction)?\s*;?\s*$/i;

/**
 * Kysely's writes on the main connection take the file's write lock (db/sqlite-write-lock.ts), so they never meet the
 * writer worker inside SQLite: a transaction holds it from BEGIN to COMMIT/ROLLBACK, a lone statement while it runs.
 */
function runWriting(
  database: BetterSqlite3.Database,
  sql: string,
  st: BetterSqlite3.Statement,
  params: unknown[],
): BetterSqlite3.RunResult {
  const lock = writeLockOf(database);
  if (BEGIN.test(sql)) {
    lock.acquire();
    try {
      return st.run(...params);
    } catch (err) {
      lock.release();
      throw err;
    }
  }
  if (END.test(sql)) {
    try {
      return st.run(...params);
    } finally {
      if (!database.inTransaction) lock.release();
    }
  }
  if (database.inTransaction) return st.run(...params);
  return lock.hold(() => st.run(...params));
}

/** Prepared statements kept per SQLite connection. */
const SQLITE_STATEMENTS_MAX = 1000;

export function wrapSqlite(
  database: BetterSqlite3.Database,
): ConstructorParameters<typeof SqliteDialect>[0]['database'] {
  // Prepared statements are reused per SQL text (the relay runs the same few statements on every request; preparing
  // each time was a measurable share of its CPU). Safe: Kysely serialises use of the single connection. Bounded: an
  // `IN (?, ?, …)` list makes one text per length, and console lists take ids from the caller.
  const statements = new CappedMap<string, BetterSqlite3.Statement>(SQLITE_STATEMENTS_MAX);
  return {
    statements,
    close: () => database.close(),
    prepare(sql: string) {
      let stmt = statements.get(sql);
      if (!stmt) {
        stmt = database.prepare(sql);
        statements.set(sql, stmt);
      }
      const st = stmt;
      return {
        reader: st.reader,
        all: (params: readonly unknown[]) =>
          RETURNING_WRITE.test(sql) && !database.inTransaction
            ? writeLockOf(database).hold(() => st.all(...params.map(sqliteValue)))
            : st.all(...params.map(sqliteValue)),
        run: (params: readonly unknown[]) => runWriting(database, sql, st, params.map(sqliteValue)),
        iterate: (params: readonly unknown[]) => st.iterate(...params.map(sqliteValue)),
      } as never;
    },
  } as never;
}

export interface OpenOptions {
  dsn: string;
  sqlitePath: string;
  sqliteBusyTimeoutMs?: number;
  /** PostgreSQL / MySQL: most connections open at once (SQL_MAX_OPEN_CONNS) */
  poolSize?: number;
  /** MySQL: connections kept while idle (SQL_MAX_IDLE_CONNS); PostgreSQL closes idle ones after 10 s instead */
  maxIdle?: number;
  /** PostgreSQL: seconds before a connection is replaced (SQL_MAX_LIFETIME; 0 never). mysql2 pools have no such limit */
  maxLifetimeSec?: number;
  /** errors of idle pooled connections (server restart, admin kill); the pool replaces them on next use */
  onIdleError?: (err: Error) => void;
  /** PostgreSQL: named statements failed as behind a transaction-mode pooler and are off for this pool from now on */
  onNamingOff?: (err: Error) => void;
}

export async function openDatabase(opts: OpenOptions): Promise<Db> {
  const kind = dbKindOf(opts.dsn);
  if (kind === 'sqlite') {
    if (opts.sqlitePath !== ':memory:') {
      ensurePrivateDir(dirname(opts.sqlitePath));
      ensurePrivateSqliteFiles(opts.sqlitePath);
    }
    const database = new BetterSqlite3(opts.sqlitePath, { timeout: opts.sqliteBusyTimeoutMs ?? 30000 });
    database.pragma('journal_mode = WAL');
    database.pragma('synchronous = NORMAL');
    database.pragma('foreign_keys = OFF');
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: wrapSqlite(database) }) });
    sqliteHandles.set(db, database);
    return { db, kind, close: () => db.destroy(), sqlite: database };
  }
  if (kind === 'postgres') {
    const pool = await pgPool(opts.dsn, opts.poolSize ?? 20, opts.maxLifetimeSec ?? 0);
    // Without a listener, an idle client's error (PostgreSQL restarted, connection terminated) crashes the process.
    pool.on('error', (err) => opts.onIdleError?.(err));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: namingPool(pool, opts.onNamingOff) }) });
    return { db, kind, close: () => db.destroy() };
  }
  const cfg = parseMysqlDsn(opts.dsn);
  const { createPool } = await import('mysql2');
  const pool = createPool({
    ...cfg,
    connectionLimit: opts.poolSize ?? 20,
    maxIdle: opts.maxIdle ?? opts.poolSize ?? 20,
    supportBigNumbers: true,
    bigNumberStrings: false,
    decimalNumbers: true,
    dateStrings: false,
    timezone: 'Z',
    charset: 'utf8mb4',
  });
  const db = new Kysely<Database>({ dialect: new MysqlDialect({ pool }) });
  return { db, kind, close: () => db.destroy() };
}
