// Batched inserts into the logs table (ctx.logDb), off the request path, so a request never waits on the log DB:
//   - a SQLite file: rows go to the file's writer worker (services/sqlite-worker.ts) every few ms (BUSY_LOOP) or
//     WORKER_ROWS rows, as flat value lists;
//   - PostgreSQL / MySQL (and an in-memory SQLite): rows queue in memory and are inserted every ~1 s or BATCH_ROWS rows.
// Both are flushed once more on shutdown (ctx.onClose).
// A consume-log row that records a charge goes with that charge (addCharged): on a SQLite file the worker writes the
// row and the request's settlement in one transaction; elsewhere services/billing/ inserts the row in its settlement
// flush's transaction. A row and its charge are durable together or not at all.
import { CompiledQuery } from 'kysely';
import type BetterSqlite3 from 'better-sqlite3';
import type { AppContext } from '../context.js';
import { pgPrepared, sqliteHandle } from '../db/connect.js';
import type { NewLog } from '../db/schema.js';
import { writeLockOf } from '../db/sqlite-write-lock.js';
import { sqliteWorker, type ChargeSql, type SqliteWorker } from './sqlite-worker.js';

// Hand-built multi-row INSERT: Kysely's builder spends noticeable CPU compiling 200-row value lists.
const COLUMNS = [
  ['user_id', 0],
  ['created_at', 0],
  ['type', 0],
  ['content', ''],
  ['username', ''],
  ['token_name', ''],
  ['model_name', ''],
  ['quota', 0],
  ['prompt_tokens', 0],
  ['completion_tokens', 0],
  ['use_time', 0],
  ['is_stream', false],
  ['channel_id', 0],
  ['token_id', 0],
  ['group', ''],
  ['other', ''],
] as const;

/**
 * PostgreSQL: the rows as one array per column (`unnest`), so the text is the same for any number of rows and runs as a
 * named prepared statement, which costs PostgreSQL less CPU per row than parsing and planning a many-row VALUES list
 * each time: docs/perf/postgres-mysql-batching.md.
 */
const PG_LOG_INSERT = pgPrepared(
  `INSERT INTO "logs" (${COLUMNS.map(([c]) => `"${c}"`).join(', ')}) SELECT * FROM unnest(${COLUMNS.map(
    ([, def], j) =>
      `$${j + 1}::${typeof def === 'number' ? 'bigint' : typeof def === 'boolean' ? 'boolean' : 'text'}[]`,
  ).join(', ')})`,
);

/** The multi-row INSERT of `rows` into `logs` for a database kind (PostgreSQL: one named statement for any count). */
export function insertQuery(kind: string, rows: NewLog[]): CompiledQuery {
  if (kind === 'postgres') {
    const arrays = COLUMNS.map(([c, def]) => rows.map((row) => (row as Record<string, unknown>)[c] ?? def));
    return CompiledQuery.raw(PG_LOG_INSERT, arrays);
  }
  const q = kind === 'mysql' ? '`' : '"';
  const cols = COLUMNS.map(([c]) => `${q}${c}${q}`).join(', ');
  const params: unknown[] = [];
  const tuples: string[] = [];
  for (const row of rows) {
    const ph: string[] = [];
    for (const [c, def] of COLUMNS) {
      let v = (row as Record<string, unknown>)[c] ?? def;
      if (c === 'is_stream') v = v ? 1 : 0;
      params.push(v);
      ph.push('?');
    }
    tuples.push(`(${ph.join(', ')})`);
  }
  return CompiledQuery.raw(`INSERT INTO ${q}logs${q} (${cols}) VALUES ${tuples.join(', ')}`, params);
}

/** One row's values in the order of SQLITE_ROW_INSERT's placeholders (what the writer worker is handed). */
export function pushSqliteValues(out: unknown[], row: NewLog): void {
  const r = row as Record<string, unknown>;
  for (const [c, def] of COLUMNS) {
    const v = r[c] ?? def;
    out.push(typeof v === 'boolean' ? (v ? 1 : 0) : v);
  }
}

/** The row whose values start at `values[i]` (pushSqliteValues' order). */
function rowOf(values: unknown[], i: number): NewLog {
  const row: Record<string, unknown> = {};
  COLUMNS.forEach(([c], j) => (row[c] = values[i + j]));
  return row as unknown as NewLog;
}

/** SQLite without a worker (in-memory database): one prepared multi-row INSERT per chunk size, run synchronously. */
class SqliteInsert {
  private readonly stmts = new Map<number, BetterSqlite3.Statement>();
  constructor(private readonly handle: BetterSqlite3.Database) {}

  get usable(): boolean {
    return this.handle.open && !this.handle.inTransaction;
  }

  run(rows: NewLog[]): void {
    let st = this.stmts.get(rows.length);
    if (!st) {
      st = this.handle.prepare(insertQuery('sqlite', rows).sql);
      this.stmts.set(rows.length, st);
    }
    const params: unknown[] = [];
    for (const row of rows) pushSqliteValues(params, row);
    writeLockOf(this.handle).hold(() => st.run(params));
  }
}

const FLUSH_MS = 1000;
const BATCH_ROWS = 200;
/** rows per INSERT: each statement blocks the event loop (SQLite is synchronous), so keep them short and yield between */
const CHUNK_ROWS = 50;
const MAX_QUEUE = 100_000;
/**
 * SQLite with a worker, while the event loop is busy less than BUSY_LOOP of the time (a quiet gateway): rows are handed
 * over every QUIET_POST_MS and the worker writes them at once, in transactions of a few rows; from BUSY_LOOP on, every
 * BUSY_POST_MS (or WORKER_ROWS rows), and the worker holds them up to a second to write them grouped by token
 * (log-row-grouping.ts, GROUP_MS). A few-row transaction costs more CPU per row than a 128-row one (every touched
 * index leaf is written at commit), but a 128-row transaction is a burst of CPU on the other core, and on a 2-core
 * machine the hops of the requests in flight queue behind it, which raised the one-connection tail latency.
 * A busy gateway takes the cheaper rows: there the CPU per row limits throughput. Busy is the main thread's event-loop
 * utilisation, not a rate of rows: the request rates of a one-connection client and of a saturated gateway depend on
 * the machine, so a rate threshold would too, and a saturated gateway just under it would pay the dearer rows and stay
 * under it; the one-connection probe stays below BUSY_LOOP in most windows, a 0-ms upstream at 32 connections above.
 * Measurements: docs/perf/log-writer.md.
 */
const BUSY_LOOP = 0.7;
/** how often the event-loop utilisation is read (at a hand-over) */
const LOOP_WINDOW_MS = 100;
/**
 * Short: rows kept longer on the main thread survive young-generation GCs and get copied. A busy gateway hands them
 * over less often, since its worker batches them anyway: one postMessage and one wake-up of the worker fewer per 2 ms.
 */
const QUIET_POST_MS = 2;
const BUSY_POST_MS = 10;
const WORKER_ROWS = 128;
/** one log row's INSERT, as the SQLite writer worker runs it (bench/sqlite-log-writes.mjs uses it too) */
export const SQLITE_ROW_INSERT = insertQuery('sqlite', [{} as NewLog]).sql;

/** the columns of SQLITE_ROW_INSERT, in order */
export const SQLITE_ROW_COLUMNS: readonly string[] = COLUMNS.map(([c]) => c);
const column = (name: string) => SQLITE_ROW_COLUMNS.indexOf(name);
/**
 * A busy gateway's rows are written grouped by token (log-row-grouping.ts, GROUP_MS): new-api's indexes on token_id and
 * token_name put each token's rows in a leaf page of its own, so rows of many tokens in turn dirtied (and wrote to the
 * WAL, and checkpointed) two leaves per row; a token's rows together share them.
 */
const GROUP_COLUMN = column('token_id');
/** text that repeats from row to row, kept once in the worker while the rows wait there */
const REPEATED_COLUMNS = ['content', 'username', 'token_name', 'model_name', 'group'].map(column);

/**
 * A request's settlement, as services/billing/ queues it: `quota` is taken from the user's balance and `remain` from
 * the token's (negative: given back), `used` / `count` added to the usage counters (and `used` to the channel's), and
 * `holdUser` / `holdToken` released from node `node`'s holds. tokenId 0: no token; channelId 0: no channel.
 */
export interface Charge {
  node: string;
  userId: number;
  tokenId: number;
  quota: number;
  remain: number;
  used: number;
  count: number;
  at: number;
  channelId: number;
  holdUser: number;
  holdToken: number;
}

/** a charge's values after its row's, in this order (the SQLite worker's addCharge reads them so) */
const CHARGE_COLUMNS = [
  'node',
  'userId',
  'tokenId',
  'quota',
  'remain',
  'used',
  'count',
  'at',
  'channelId',
  'holdUser',
  'holdToken',
] as const;
const CHARGED_COLS = COLUMNS.length + CHARGE_COLUMNS.length;
/** a charged row's repeated text: the log row's, and the node id */
const CHARGED_REPEATED = [...REPEATED_COLUMNS, COLUMNS.length];

/** What the writer does with charges whose worker died before taking them: the billing writes them (row and charge) */
export type OrphanCharges = (rows: NewLog[], charges: Charge[]) => void;

export class LogWriter {
  private queue: NewLog[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | null = null;

  private readonly fast: SqliteInsert | null;
  private readonly handle: BetterSqlite3.Database | undefined;
  /** SQLite file: the rows go to its writer worker (services/sqlite-worker.ts), flattened as they arrive */
  private worker: SqliteWorker | null = null;
  private pending: unknown[] = [];
  /** rows with their charges (CHARGED_COLS values each), for the worker */
  private charged: unknown[] = [];
  /** set by acceptCharges: the worker writes the main database's file, charges can go with their rows */
  private chargeSql: ChargeSql | null = null;
  private orphans: OrphanCharges | null = null;
  /** charges queued so far, and of them: the first `askedSeq` are covered by `chargeFlush`, `committedSeq` committed */
  private chargeSeq = 0;
  private askedSeq = 0;
  private committedSeq = 0;
  private chargeFlush: Promise<void> = Promise.resolve();
  private postTimer: NodeJS.Timeout | undefined;
  /** the event loop was busy less than BUSY_LOOP of the last window; `loop`: the utilisation read at windowStart */
  private quiet = true;
  private loop = performance.eventLoopUtilization();
  private windowStart = Date.now();
  /** when the oldest row still queued in this process was queued (0: nothing queued), for GET /metrics */
  private queuedSince = 0;

  constructor(private readonly ctx: AppContext) {
    this.handle = ctx.logDbKind === 'sqlite' ? sqliteHandle(ctx.logDb) : undefined;
    this.fast = this.handle ? new SqliteInsert(this.handle) : null;
  }

  async start(): Promise<void> {
    if (this.handle) this.worker = await sqliteWorker(this.ctx, this.handle);
    // the worker has timers of its own (and a busy gateway's rows wait there on purpose, to be grouped)
    this.timer = setInterval(() => void this.writeQueue(), FLUSH_MS);
    this.timer.unref();
  }

  /**
   * services/billing/: charges may travel with their rows when this writer's worker writes the main database's file
   * (`handle`, the main connection). `orphans` takes back what a worker that died had not been handed.
   */
  acceptCharges(handle: BetterSqlite3.Database, sql: ChargeSql, orphans: OrphanCharges): void {
    if (handle !== this.handle) return;
    this.chargeSql = sql;
    this.orphans = orphans;
  }

  /**
   * Queues a consume-log row together with its request's charge, to be committed in one transaction by the SQLite
   * worker; false (nothing queued) when there is no such worker: the caller writes both itself.
   */
  addCharged(row: NewLog, charge: Charge): boolean {
    if (!this.chargeSql || !this.worker?.usable) return false;
    if (!this.queuedSince) this.queuedSince = Date.now();
    pushSqliteValues(this.charged, row);
    for (const c of CHARGE_COLUMNS) this.charged.push(charge[c]);
    this.chargeSeq++;
    this.schedulePost();
    return true;
  }

  private schedulePost(): void {
    if (this.pending.length / COLUMNS.length + this.charged.length / CHARGED_COLS >= WORKER_ROWS) this.post();
    else if (!this.postTimer) this.postTimer = setTimeout(this.post, this.quiet ? QUIET_POST_MS : BUSY_POST_MS);
  }

  add(row: NewLog): void {
    if (!this.queuedSince) this.queuedSince = Date.now();
    if (this.worker?.usable) {
      pushSqliteValues(this.pending, row);
      this.schedulePost();
      return;
    }
    if (this.queue.length >= MAX_QUEUE) {
      this.ctx.log.error('log queue full, dropping a log row');
      return;
    }
    this.queue.push(row);
    if (this.queue.length >= BATCH_ROWS) void this.flush();
  }

  private readonly post = (): void => {
    if (this.postTimer) clearTimeout(this.postTimer);
    this.postTimer = undefined;
    if (!this.pending.length && !this.charged.length) return;
    const values = this.pending;
    const charged = this.charged;
    this.pending = [];
    this.charged = [];
    if (!this.queue.length) this.queuedSince = 0;
    this.checkLoad();
    const how = this.quiet ? { now: true } : { groupBy: GROUP_COLUMN, repeated: REPEATED_COLUMNS };
    if (this.worker?.usable) {
      if (values.length) this.worker.insert(SQLITE_ROW_INSERT, COLUMNS.length, values, how);
      if (charged.length) {
        const chargeHow = this.quiet ? how : { ...how, repeated: CHARGED_REPEATED };
        this.worker.insert(SQLITE_ROW_INSERT, CHARGED_COLS, charged, {
          ...chargeHow,
          ins: COLUMNS.length,
          charge: this.chargeSql!,
        });
      }
      return;
    }
    if (charged.length) {
      const rows: NewLog[] = [];
      const charges: Charge[] = [];
      for (let i = 0; i < charged.length; i += CHARGED_COLS) {
        rows.push(rowOf(charged, i));
        const c: Record<string, unknown> = {};
        CHARGE_COLUMNS.forEach((name, j) => (c[name] = charged[i + COLUMNS.length + j]));
        charges.push(c as unknown as Charge);
      }
      this.orphans?.(rows, charges);
    }
    // the worker died since these rows were taken: they go the main-thread way
    for (let i = 0; i < values.length; i += COLUMNS.length) this.queue.push(rowOf(values, i));
  };

  /** rows queued in this process (not yet handed to the database or the worker) and the oldest one's age */
  backlog(): { rows: number; lagMs: number } {
    const rows = this.queue.length + this.pending.length / COLUMNS.length + this.charged.length / CHARGED_COLS;
    return { rows, lagMs: rows && this.queuedSince ? Date.now() - this.queuedSince : 0 };
  }

  /** charges were queued that may not be committed yet (the worker's own timers write them too, unannounced) */
  get chargesPending(): boolean {
    return this.chargeSeq > this.committedSeq;
  }

  /**
   * Resolves once every charge queued before the call is committed with its row (or, the worker gone, handed back to
   * the billing: `orphans`). The worker answers in order, so the latest request covers every earlier one.
   */
  flushCharges(): Promise<void> {
    if (this.chargeSeq === this.askedSeq) return this.chargeFlush;
    const upTo = (this.askedSeq = this.chargeSeq);
    this.post();
    this.chargeFlush = (this.worker?.flush() ?? Promise.resolve()).then(() => {
      if (upTo > this.committedSeq) this.committedSeq = upTo;
    });
    return this.chargeFlush;
  }

  private checkLoad(): void {
    const now = Date.now();
    if (now - this.windowStart < LOOP_WINDOW_MS) return;
    const loop = performance.eventLoopUtilization();
    this.quiet = performance.eventLoopUtilization(loop, this.loop).utilization < BUSY_LOOP;
    this.loop = loop;
    this.windowStart = now;
  }

  /** Writes everything queued so far; concurrent calls wait for the same write. */
  async flush(): Promise<void> {
    if (this.worker) {
      this.post();
      await this.worker.flush();
    }
    await this.writeQueue();
  }

  /** the main-thread way: rows of a database without a worker, or left when the worker died */
  private async writeQueue(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (!this.queue.length) return;
    const rows = this.queue;
    this.queue = [];
    if (!this.pending.length && !this.charged.length) this.queuedSince = 0;
    this.flushing = (async () => {
      for (let i = 0; i < rows.length; i += CHUNK_ROWS) {
        if (i) await new Promise((r) => setImmediate(r));
        const chunk = rows.slice(i, i + CHUNK_ROWS);
        try {
          if (this.fast?.usable) this.fast.run(chunk);
          else await this.ctx.logDb.executeQuery(insertQuery(this.ctx.logDbKind, chunk));
        } catch (err) {
          this.ctx.log.error({ err, rows: chunk.length }, 'writing logs failed');
        }
      }
    })();
    try {
      await this.flushing;
    } finally {
      this.flushing = null;
    }
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }
}
