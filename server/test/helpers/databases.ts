// Real databases for tests: a fresh SQLite file, or a uniquely named database on the local PostgreSQL and
// MariaDB servers, dropped afterwards. TEST_DBS=sqlite,postgres,mysql narrows the set. A server that is down
// fails the run when CI=true and skips its suite otherwise.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { describe, it } from 'vitest';
import pg from 'pg';
import mysql from 'mysql2/promise';

export type TestDbKind = 'sqlite' | 'postgres' | 'mysql';
export const ALL_DB_KINDS: TestDbKind[] = ['sqlite', 'postgres', 'mysql'];

export const PG_ADMIN_URL = process.env.TEST_PG_URL ?? 'postgres://root@127.0.0.1:5432/test';
export const MYSQL_ADMIN = {
  host: '127.0.0.1',
  port: Number(process.env.TEST_MYSQL_PORT ?? 3306),
  user: 'root',
  password: '',
};
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

export function requestedDbKinds(): TestDbKind[] {
  const raw = process.env.TEST_DBS?.trim();
  if (!raw) return ALL_DB_KINDS;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s): s is TestDbKind => (ALL_DB_KINDS as string[]).includes(s));
}

function portOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host });
    const done = (v: boolean) => {
      sock.destroy();
      resolve(v);
    };
    sock.setTimeout(1000, () => done(false));
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
  });
}

const PORTS: Record<TestDbKind, number> = { sqlite: 0, postgres: 5432, mysql: MYSQL_ADMIN.port };

/** Whether a database kind can be tested here; throws under CI=true when its server is down. */
export async function dbAvailable(kind: TestDbKind): Promise<boolean> {
  if (kind === 'sqlite') return true;
  const up = await portOpen(PORTS[kind]);
  if (!up && process.env.CI === 'true')
    throw new Error(`${kind} is not reachable on 127.0.0.1:${PORTS[kind]} (CI=true: a missing service is a failure)`);
  return up;
}

/**
 * One describe block per requested database kind, titled `<title> on <kind>`; a kind whose server is down is skipped
 * (a failure under CI=true, see dbAvailable). `except` leaves kinds out (e.g. SQLite for pool settings).
 */
export async function describeEachDb(
  title: string,
  body: (kind: TestDbKind) => void,
  except: TestDbKind[] = [],
): Promise<void> {
  const kinds = requestedDbKinds().filter((kind) => !except.includes(kind));
  for (const kind of kinds) describe.skipIf(!(await dbAvailable(kind)))(`${title} on ${kind}`, () => body(kind));
  // a suite for none of the requested kinds (TEST_DBS=sqlite, the pool suite) is skipped, not an empty file, which
  // vitest fails
  if (kinds.length === 0) describe.skip(`${title} (none of its databases is in TEST_DBS)`, () => it('runs', () => {}));
}

export async function redisAvailable(): Promise<boolean> {
  const up = await portOpen(6379);
  if (!up && process.env.CI === 'true')
    throw new Error('redis is not reachable on 127.0.0.1:6379 (CI=true: a missing service is a failure)');
  return up;
}

export interface TestDatabase {
  kind: TestDbKind;
  /** SQL_DSN value (empty for SQLite) */
  dsn: string;
  sqlitePath: string;
  drop(): Promise<void>;
}

export function uniqueName(prefix = 'gwt'): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

export async function createTestDatabase(kind: TestDbKind): Promise<TestDatabase> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'gwt-sqlite-'));
    return {
      kind,
      dsn: '',
      sqlitePath: join(dir, 'test.db'),
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const name = uniqueName();
  if (kind === 'postgres') {
    const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const url = new URL(PG_ADMIN_URL);
    url.pathname = `/${name}`;
    return {
      kind,
      dsn: url.toString(),
      sqlitePath: '',
      drop: async () => {
        const c = new pg.Client({ connectionString: PG_ADMIN_URL });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await c.end();
      },
    };
  }
  const conn = await mysql.createConnection(MYSQL_ADMIN);
  await conn.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4`);
  await conn.end();
  return {
    kind,
    dsn: `${MYSQL_ADMIN.user}:${MYSQL_ADMIN.password}@tcp(${MYSQL_ADMIN.host}:${MYSQL_ADMIN.port})/${name}?parseTime=true`,
    sqlitePath: '',
    drop: async () => {
      const c = await mysql.createConnection(MYSQL_ADMIN);
      await c.query(`DROP DATABASE IF EXISTS \`${name}\``);
      await c.end();
    },
  };
}
