// Liveness and readiness (GET /healthz, GET /readyz in api/ops.ts). Ready means: the database (and the log database
// when LOG_SQL_DSN is set) answers, Redis answers when configured, every migration this version knows is recorded
// (a slave waits for its master's), and the process is not shutting down (shutdown.ts marks it first, so a load
// balancer polling /readyz stops sending work before the listener closes).
import { sql } from 'kysely';
import type { AppContext } from '../context.js';
import { migrationNames } from '../db/migrate.js';

/** Each check's time limit: an unreachable database must not hang the probe past the orchestrator's own timeout. */
const CHECK_TIMEOUT_MS = 2000;

const stopping = new WeakSet<AppContext>();

/** The process is stopping: /readyz answers 503 from now on. */
export function markShuttingDown(ctx: AppContext): void {
  stopping.add(ctx);
}

export interface Readiness {
  ready: boolean;
  /** check → "ok", or why it failed */
  checks: Record<string, string>;
}

function withTimeout<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

async function check(fn: () => Promise<void>, what: string): Promise<string> {
  try {
    await withTimeout(fn(), what);
    return 'ok';
  } catch (err) {
    return (err as Error).message || 'failed';
  }
}

export async function readiness(ctx: AppContext): Promise<Readiness> {
  const checks: Record<string, string> = {};
  const [database, logDatabase, redis, migrations] = await Promise.all([
    check(async () => void (await sql`SELECT 1`.execute(ctx.db)), 'database'),
    ctx.logDb !== ctx.db ? check(async () => void (await sql`SELECT 1`.execute(ctx.logDb)), 'log database') : null,
    ctx.redis ? check(() => pingRedis(ctx), 'redis') : null,
    check(() => migrationsDone(ctx), 'migrations'),
  ]);
  checks.database = database;
  if (logDatabase) checks.log_database = logDatabase;
  if (redis) checks.redis = redis;
  checks.migrations = migrations;
  checks.shutdown = stopping.has(ctx) ? 'shutting down' : 'ok';
  return { ready: Object.values(checks).every((v) => v === 'ok'), checks };
}

async function pingRedis(ctx: AppContext): Promise<void> {
  const redis = ctx.redis!;
  // a client reconnecting would queue the command: say so at once instead of waiting for the time limit
  if (redis.status !== 'ready') throw new Error(`redis is ${redis.status}`);
  await redis.ping();
}

async function migrationsDone(ctx: AppContext): Promise<void> {
  const rows = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(ctx.db);
  const applied = new Set(rows.rows.map((r) => r.name));
  const missing = migrationNames(ctx.dbKind).filter((n) => !applied.has(n));
  if (missing.length) throw new Error(`pending: ${missing.join(', ')}`);
}
