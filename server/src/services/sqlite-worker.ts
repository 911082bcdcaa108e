// One worker thread per SQLite file, with its own connection, for the writes nobody waits for:
//   - log rows (services/log-writer.ts): inserting into `logs` costs ~25 µs a row (ten indexes, kept for new-api's
//     queries); on the main thread that was a third of the relay's CPU at 0-ms upstreams and a 1+ ms stall per chunk;
//   - WAL checkpoints (PASSIVE every second, outside the write lock; the WAL is made to start over once it holds
//     10,000 frames): with synchronous=NORMAL a checkpoint fsyncs, and SQLite's automatic checkpoint runs inside
//     whichever commit crosses the threshold — on the relay's event loop, or in this worker while it holds the write
//     lock, it stalled requests for milliseconds. This connection has none; the main one keeps one as a safety net.
// The worker and the main thread take turns through the file's write lock (db/sqlite-write-lock.ts): the worker
// writes up to TXN_ROWS rows per transaction and commits early as soon as the main thread is waiting. Rows marked `now`
// (a quiet gateway: log-writer.ts) are written at once; the others wait up to GROUP_MS, to be written grouped.
// Rows may carry a charge (a consume-log row and its request's settlement: log-writer.ts, addCharged): the worker
// writes the settlement (quota deltas, the release of the request's hold) in the same transaction as the row, so
// that after a crash a request is either charged and logged, or neither (its hold is then given back).
import { createRequire } from 'node:module';
import v8 from 'node:v8';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import type { AppContext } from '../context.js';
import { sqliteHandle } from '../db/connect.js';
import { writeLockOf } from '../db/sqlite-write-lock.js';

/** rows per worker transaction when the main thread is not waiting: bigger ones write fewer WAL frames per row */
const TXN_ROWS = 128;
/**
 * A checkpoint copies every page changed since the last one, once. The log indexes on token_id / token_name take
 * rows in a different leaf per token, so with many active tokens each row dirties several pages and the same ones
 * again and again: checkpointing them every 200 ms took as long as the inserts themselves. Measured (perf harness,
 * 300,000 log rows, 1,000 tokens, stream at 32 connections, 0-ms upstream): every 200 ms → every 1 s took the writer
 * worker from 40 to 33 µs a request, the main thread from 108 to 95-100 µs and RPS up 10-15 %.
 */
const CHECKPOINT_MS = 1000;
/** WAL frames after which the worker makes the WAL start over (see checkpoint() in the worker) */
export const RESTART_FRAMES = 10_000;
/**
 * The main connection's own automatic checkpoint while the worker runs, a safety net for a worker that falls behind:
 * it runs inside a relay commit, so it must stay above what the worker lets the WAL reach (RESTART_FRAMES plus a
 * second of commits). Once the worker is gone it goes back to SQLite's default.
 */
const MAIN_AUTOCHECKPOINT_FRAMES = 50_000;
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;
/**
 * Bytes the WAL file is cut back to when it starts over (it keeps its largest size otherwise). Under a steady load the
 * WAL holds a second of commits when it starts over, ~200 MB at a 0-ms upstream here (each log row dirties a page in
 * six indexes keyed by user, token or channel). With 64 MB, every restart truncated it, and the next second of commits
 * had the file system allocate those blocks again: `node bench/sqlite-log-writes.mjs` (the worker's inserts, 40-row
 * transactions, a checkpoint every 12,000 rows): 20.2-20.5 µs of CPU per row at 512 MB against 22.8-25.2 µs at 64 MB,
 * three alternating rounds; the main thread's ftruncate (1.5 % of its samples in a perf profile) went too.
 */
const WAL_SIZE_LIMIT = 512 * 1024 * 1024;
/**
 * Longest a row not marked to be written at once waits in the worker (or until GROUP_ROWS rows wait), so that rows
 * given a column to group by are written grouped by it. The log writer groups a busy gateway's rows by token: with
 * the bench's 1,000 tokens in turn, each token's leaves in the token_id / token_name indexes took one row per
 * transaction when rows were written by 128 or 100 ms, and take ~8 a second now. `PRE=200000 LOG_ROWS=60000 FOREIGN=1
 * CASES=512 GROUP_WINDOWS="0 7000" node bench/sqlite-log-writes.mjs` (40-row transactions, another connection committing
 * between them): 17.3-18.0 µs of CPU per row grouped in 7,000-row windows instead of 36.3-37.4 in order, the WAL's
 * largest size 92 MB instead of 303. Two gateways served at once, six alternating 3-s wrk bursts each (0-ms JSON, 32
 * connections): 81-84 µs of gateway CPU per request instead of 86-92, and the old way's cost grew as the table did.
 * What waiting costs: up to a second more before a busy gateway's log rows can be read, and up to GROUP_ROWS rows in
 * this heap (~3 MB).
 */
const GROUP_MS = 1000;
const GROUP_ROWS = 8192;
/** rows written in one go after which the worker runs a full GC (see drain()) */
const GC_AFTER_ROWS = 1000;
/** journal rows of hold releases the worker writes for a node before it compacts the node's journal (see journal()) */
const JOURNAL_COMPACT = 64;

/**
 * The statements of a charge (log-writer.ts, addCharged): the settlement's single-row UPDATEs (params: the values,
 * then the id), the hold journal's insert (node, seq, holds), and its read and delete of a node's rows (compaction).
 */
export interface ChargeSql {
  token: string;
  user: string;
  channel: string;
  journal: string;
  read: string;
  clear: string;
}
// The worker runs at the process's CPU priority. It once ran 5 nice steps lower, for a one-connection p99 about
// 0.3 ms better on a noisy 2-core VM; but as the logs table grows a row costs the worker about twice as much, and at
// nice +5 under a saturating load it fell behind: 120-260 ms of rows still queued after 8-s runs, more each run, and
// RSS 169-173 MB instead of 144-156 MB (4 × 8 s of JSON at 128 connections, 0-ms upstream, ~380,000 rows). At the same
// priority it kept up, and paired one-connection probes showed no p99 difference beyond the noise (1.3-2.0 ms either way).

// Plain CommonJS, evaluated in the worker (no build step of its own, so it also runs under the test runner).
// Lock protocol: see db/sqlite-write-lock.ts — [0] owner (0 free, 1 main, 2 worker), [1] main thread waiting.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.module);
const lock = new Int32Array(workerData.lock);
const db = new Database(workerData.path, { timeout: 30000 });
db.pragma('synchronous = NORMAL');
// no automatic checkpoint inside this connection's commits: they run while the write lock is held (the main thread
// would wait for the checkpoint's copying and fsync); the timer below checkpoints outside the lock
db.pragma('wal_autocheckpoint = 0');
db.pragma('journal_size_limit = ${WAL_SIZE_LIMIT}');
const begin = db.prepare('BEGIN IMMEDIATE');
const commit = db.prepare('COMMIT');
const rollback = db.prepare('ROLLBACK');
const inserts = new Map();
const queue = [];
// the charges of the rows written in the open transaction, applied just before its commit (writeCharges)
let charges = null;
let journalSeq = 0;
const journalRows = new Map();
let queued = 0;
let soon = false;
let later = null;

function acquire() {
  for (;;) {
    // give a waiting main thread its turn first (bounded: the flag is a request, not a lock)
    if (Atomics.load(lock, 1) !== 0) Atomics.wait(lock, 1, 1, 2);
    if (Atomics.compareExchange(lock, 0, 0, 2) === 0) return;
    Atomics.wait(lock, 0, 1, 5);
  }
}
function release() { Atomics.store(lock, 0, 0); Atomics.notify(lock, 0); }

function insertFor(sql) {
  let st = inserts.get(sql);
  if (!st) { st = db.prepare(sql); inserts.set(sql, st); }
  return st;
}

// queue items: { sql, cols, ins (the insert's values: the first ins of each row's cols; the rest is its charge),
// charge (the charge's statements, or null), p (flat values), at (next row), key (column to group by, or -1) }
// Before writing, the queued rows of one statement with a key become one item: keys in ascending order, each key's
// rows together in arrival order.
function groupRows() {
  let keyed = 0;
  for (const item of queue) if (item.key >= 0) keyed++;
  if (!keyed) return;
  const out = [];
  const bySql = new Map();
  for (const item of queue) {
    if (item.key < 0) { out.push(item); continue; }
    const k = item.sql + '|' + item.cols;
    let g = bySql.get(k);
    if (!g) { g = { sql: item.sql, cols: item.cols, ins: item.ins, charge: item.charge, key: item.key, parts: [], n: 0 }; bySql.set(k, g); out.push(g); }
    g.parts.push(item);
    g.n += (item.p.length - item.at) / item.cols;
  }
  queue.length = 0;
  for (const g of out) {
    if (!g.parts) { queue.push(g); continue; }
    // the rows' keys sorted (a stable sort: a key's rows keep their order), then the values copied once in that order
    const rows = new Array(g.n);
    let r = 0;
    for (let i = 0; i < g.parts.length; i++) {
      const { p, at } = g.parts[i];
      for (let o = at; o < p.length; o += g.cols) rows[r++] = { k: p[o + g.key], i, o };
    }
    rows.sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
    const p = new Array(g.n * g.cols);
    let w = 0;
    for (const { i, o } of rows) {
      const src = g.parts[i].p;
      for (let j = 0; j < g.cols; j++) p[w++] = src[o + j];
    }
    queue.push({ sql: g.sql, cols: g.cols, ins: g.ins, charge: g.charge, p, at: 0, key: g.key });
  }
}

// Rows wait up to GROUP_MS in this heap; the strings that repeat from row to row (for log rows: user and token names,
// model, group, the content line) are kept once each instead of once per row.
const shared = new Map();
function share(p, cols, idx) {
  for (let o = 0; o < p.length; o += cols) {
    for (const c of idx) {
      const v = p[o + c];
      if (typeof v !== 'string') continue;
      const s = shared.get(v);
      if (s !== undefined) p[o + c] = s;
      else {
        if (shared.size >= 20000) shared.clear();
        shared.set(v, v);
      }
    }
  }
}

// A written group leaves its rows as garbage in the old generation: collected at once, they do not raise the heap's
// high-water mark (gc is exposed to this isolate only: withLeanHeap).
function drain() {
  const rows = queued;
  drainQueue();
  if (rows >= ${GC_AFTER_ROWS} && typeof gc === 'function') gc();
}

// One row's charge (its values after the insert's: log-writer.ts CHARGE_COLUMNS), summed per row to update.
function addCharge(item, o) {
  const p = item.p;
  const b = o + item.ins;
  const node = p[b], user = p[b + 1], token = p[b + 2], used = p[b + 5], channel = p[b + 8], hu = p[b + 9], ht = p[b + 10];
  const c = (charges ??= { sql: item.charge, tokens: new Map(), users: new Map(), channels: new Map(), holds: new Map() });
  let u = c.users.get(user);
  if (!u) c.users.set(user, (u = [0, 0, 0]));
  u[0] += p[b + 3]; u[1] += used; u[2] += p[b + 6];
  if (token > 0) {
    let t = c.tokens.get(token);
    if (!t) c.tokens.set(token, (t = [0, 0, 0]));
    t[0] += p[b + 4]; t[1] += used;
    if (p[b + 7] > t[2]) t[2] = p[b + 7];
  }
  if (channel > 0 && used) c.channels.set(channel, (c.channels.get(channel) ?? 0) + used);
  if (hu || ht) {
    let h = c.holds.get(node);
    if (!h) c.holds.set(node, (h = []));
    h.push(user, token, -hu, -ht);
  }
}

// The open transaction's charges: tokens, users, channels (each by id), then the hold releases, one journal row per node.
function writeCharges() {
  const c = charges;
  charges = null;
  if (!c) return;
  const byId = (m) => [...m].sort((a, b) => a[0] - b[0]);
  for (const [id, t] of byId(c.tokens)) insertFor(c.sql.token).run(t[0], t[1], t[2], id);
  for (const [id, u] of byId(c.users)) if (u[0] || u[1] || u[2]) insertFor(c.sql.user).run(u[0], u[1], u[2], id);
  for (const [id, v] of byId(c.channels)) insertFor(c.sql.channel).run(v, id);
  for (const [node, flat] of c.holds) journal(c.sql, node, flat);
}

// A journal row of hold changes (negative seqs: the main thread numbers its rows from 1 up). Every
// ${JOURNAL_COMPACT} rows of a node, the node's journal (the main thread's rows too) is summed into one row instead.
function journal(sql, node, flat) {
  const n = (journalRows.get(node) ?? 0) + 1;
  journalRows.set(node, n);
  if (n < ${JOURNAL_COMPACT}) return void insertFor(sql.journal).run(node, --journalSeq, JSON.stringify(flat));
  journalRows.set(node, 0);
  const net = new Map();
  const add = (f) => {
    for (let i = 0; i + 3 < f.length; i += 4) {
      const k = f[i] + ':' + f[i + 1];
      const d = net.get(k);
      if (d) { d[2] += f[i + 2]; d[3] += f[i + 3]; } else net.set(k, [f[i], f[i + 1], f[i + 2], f[i + 3]]);
    }
  };
  for (const text of insertFor(sql.read).pluck().all(node)) add(JSON.parse(text));
  add(flat);
  insertFor(sql.clear).run(node);
  const left = [];
  for (const d of net.values()) if (d[2] || d[3]) left.push(...d);
  if (left.length) insertFor(sql.journal).run(node, --journalSeq, JSON.stringify(left));
}

function drainQueue() {
  soon = false;
  if (later) { clearTimeout(later); later = null; }
  queued = 0;
  groupRows();
  while (queue.length) {
    acquire();
    let n = 0;
    let item = queue[0];
    try {
      charges = null;
      begin.run();
      while (item) {
        const st = insertFor(item.sql);
        const cols = item.cols;
        const ins = item.ins;
        while (item.at < item.p.length) {
          st.run(item.p.slice(item.at, item.at + ins));
          if (ins < cols) addCharge(item, item.at);
          item.at += cols;
          n++;
          if (n >= ${TXN_ROWS} || Atomics.load(lock, 1) !== 0) break;
        }
        if (item.at >= item.p.length) { queue.shift(); item = queue[0]; }
        if (n >= ${TXN_ROWS} || Atomics.load(lock, 1) !== 0) break;
      }
      writeCharges();
      commit.run();
    } catch (err) {
      charges = null;
      try { if (db.inTransaction) rollback.run(); } catch {}
      // the rows of this transaction are dropped (as a failed batch insert always was); say so
      if (queue[0] === item && item) { const left = (item.p.length - item.at) / item.cols; queue.shift(); n += left; }
      parentPort.postMessage({ t: 'error', message: String(err && err.message || err), rows: n });
    } finally {
      release();
    }
  }
}

// PASSIVE copies the committed pages into the database file without the lock; but with two connections committing
// all the time the WAL is rarely found fully copied at the start of a write, so it never rewinds and grows. Once it
// holds RESTART_FRAMES, a RESTART checkpoint under the write lock (little left to copy by then; a short busy wait, so a
// long reader elsewhere only postpones it) makes the next writer start the WAL over.
function checkpoint() {
  let r;
  try { r = db.pragma('wal_checkpoint(PASSIVE)')[0]; } catch { return; }
  if (!r || r.log < ${RESTART_FRAMES} || r.checkpointed < r.log) return;
  acquire();
  try {
    db.pragma('busy_timeout = 5');
    db.pragma('wal_checkpoint(RESTART)');
  } catch {} finally {
    db.pragma('busy_timeout = 30000');
    release();
  }
}
const timer = setInterval(checkpoint, workerData.checkpointMs);

parentPort.on('message', (m) => {
  if (m.t === 'rows') {
    if (m.repeated) share(m.p, m.cols, m.repeated);
    queue.push({ sql: m.sql, cols: m.cols, ins: m.ins ?? m.cols, charge: m.charge ?? null, p: m.p, at: 0, key: m.groupBy ?? -1 });
    queued += m.p.length / m.cols;
    if (queued >= ${GROUP_ROWS} || m.now) { if (!soon) { soon = true; setImmediate(drain); } }
    else if (!later) later = setTimeout(drain, ${GROUP_MS});
  } else if (m.t === 'flush') {
    drain();
    parentPort.postMessage({ t: 'flushed', id: m.id });
  } else if (m.t === 'heap') {
    const spaces = require('node:v8').getHeapSpaceStatistics();
    parentPort.postMessage({ t: 'heap', id: m.id, heap: { newSpace: spaces.find((s) => s.space_name === 'new_space').space_size, gc: typeof gc === 'function' } });
  } else if (m.t === 'stop') {
    clearInterval(timer);
    drain();
    checkpoint();
    db.close();
    parentPort.postMessage({ t: 'stopped' });
    parentPort.close();
  }
});
`;

/** the worker isolate's semi-space (MB): its young objects are log rows on their way to SQLite */
const WORKER_SEMI_SPACE_MB = 1;

/**
 * Creates the worker with an isolate of its own heap settings: WORKER_SEMI_SPACE_MB semi-spaces, and `gc()` exposed
 * so that it collects once it has written a group (GC_AFTER_ROWS). V8 flags are the process's, and the server's
 * --max-semi-space-size (scripts/server-flags.mjs: 8 MB, for the relay's young garbage) wins over a Worker's
 * resourceLimits; V8 reads both flags when it sets up an isolate, so they are changed until the worker is online.
 * With the process's settings the worker's new space grew to 16 MB under load, and its old generation, where the
 * grouped rows go while they wait, to 10-16 MB between full GCs: with these, its heap stays at 8-10 MB (stream at
 * 128 connections, 0-ms upstream, ~9k requests a second, the worker's rows grouped by up to 8,192).
 */
function withLeanHeap(create: () => Worker): Worker {
  const semiSpace = numericFlag('max-semi-space-size') ?? 0; // 0: V8's default
  const exposeGc = numericFlag('expose-gc') !== undefined;
  const set = (worker: boolean) =>
    v8.setFlagsFromString(`--max-semi-space-size=${worker ? WORKER_SEMI_SPACE_MB : semiSpace} ${worker || exposeGc ? '--expose-gc' : '--no-expose-gc'}`);
  set(true);
  let worker: Worker;
  try {
    worker = create();
  } catch (err) {
    set(false);
    throw err;
  }
  let restored = false;
  const restore = () => {
    if (!restored) set(false);
    restored = true;
  };
  worker.once('online', restore);
  worker.once('exit', restore);
  return worker;
}

/** a V8 flag as the process was started with it: its number (1 for a flag without one), or undefined */
function numericFlag(name: string): number | undefined {
  const pattern = new RegExp(`^--${name.replace(/-/g, '[-_]')}(?:=(\\d+))?$`);
  let value: number | undefined;
  for (const a of [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)]) {
    const m = pattern.exec(a);
    if (m) value = m[1] === undefined ? 1 : Number(m[1]);
  }
  return value;
}

/** bytes of the worker isolate's new space, and whether it has gc() */
export interface WorkerHeap {
  newSpace: number;
  gc: boolean;
}

export class SqliteWorker {
  private readonly worker: Worker;
  private alive = true;
  private nextId = 1;
  /** replies awaited from the worker ('flushed', 'heap'), by request id */
  private readonly waiting = new Map<number, (value?: WorkerHeap) => void>();

  constructor(
    private readonly ctx: AppContext,
    handle: BetterSqlite3.Database,
  ) {
    const lock = writeLockOf(handle);
    this.worker = withLeanHeap(
      () =>
        new Worker(WORKER_SOURCE, {
          eval: true,
          workerData: { module: createRequire(import.meta.url).resolve('better-sqlite3'), path: handle.name, lock: lock.buffer, checkpointMs: CHECKPOINT_MS },
        }),
    );
    this.worker.unref();
    this.worker.on('message', (m: { t: string; id?: number; message?: string; rows?: number; heap?: WorkerHeap }) => {
      if (m.t === 'flushed') this.settle(m.id!);
      else if (m.t === 'heap') this.settle(m.id!, m.heap);
      else if (m.t === 'error') ctx.log.error({ err: m.message, rows: m.rows }, 'sqlite worker: writing rows failed');
    });
    this.worker.on('error', (err) => ctx.log.error({ err }, 'sqlite worker failed'));
    this.worker.on('exit', () => {
      this.alive = false;
      lock.workerGone();
      // nobody checkpoints for the main connection any more: its commits do it again, at SQLite's usual size
      try {
        if (handle.open) handle.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_AUTOCHECKPOINT}`);
      } catch {
        /* closing */
      }
      for (const id of [...this.waiting.keys()]) this.settle(id);
    });
  }

  /** false once the worker has exited (callers then write on the main thread) */
  get usable(): boolean {
    return this.alive;
  }

  /**
   * Queues rows for `insertSql` (one row's placeholders), given as `cols` values per row, one after the other. `now`:
   * write them at once; otherwise they wait up to GROUP_MS, to be written grouped by the value of column `groupBy`
   * (keys ascending, a key's rows in the order they came). `repeated`: columns whose text repeats from row to row.
   * `ins` and `charge`: each row's first `ins` values are the insert's, the rest a charge written by `charge`'s
   * statements in the same transaction as the row (see the worker's addCharge).
   */
  insert(
    insertSql: string,
    cols: number,
    values: unknown[],
    how: { now?: boolean; groupBy?: number; repeated?: readonly number[]; ins?: number; charge?: ChargeSql },
  ): void {
    this.worker.postMessage({ t: 'rows', sql: insertSql, cols, p: values, ...how });
  }

  /** Resolves when everything queued before the call is committed (at once if the worker is gone). */
  async flush(): Promise<void> {
    await this.ask('flush');
  }

  /** The worker isolate's heap settings as it sees them (withLeanHeap), or null once the worker is gone. */
  async heap(): Promise<WorkerHeap | null> {
    return (await this.ask('heap')) ?? null;
  }

  /** Sends a request and resolves with the worker's reply (undefined at once, or on exit, if the worker is gone). */
  private ask(t: 'flush' | 'heap'): Promise<WorkerHeap | undefined> {
    if (!this.alive) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.worker.postMessage({ t, id });
    });
  }

  private settle(id: number, value?: WorkerHeap): void {
    const resolve = this.waiting.get(id);
    this.waiting.delete(id);
    resolve?.(value);
  }

  /** Writes what is queued, checkpoints, closes the worker's connection. */
  async stop(): Promise<void> {
    if (!this.alive) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        this.ctx.log.warn('sqlite worker did not stop in time');
        void this.worker.terminate().finally(resolve);
      }, 10_000);
      this.worker.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      this.worker.postMessage({ t: 'stop' });
    });
  }
}

const workers = new WeakMap<BetterSqlite3.Database, Promise<SqliteWorker | null>>();

/**
 * The worker of a SQLite connection's file, started on first use and stopped by ctx.onClose (after whatever was
 * registered later, e.g. the log writer's final flush). null for an in-memory database or when no worker can start.
 */
export function sqliteWorker(ctx: AppContext, handle: BetterSqlite3.Database): Promise<SqliteWorker | null> {
  let p = workers.get(handle);
  if (!p) {
    p = (async () => {
      if (handle.memory || !handle.name) return null;
      let w: SqliteWorker;
      try {
        w = new SqliteWorker(ctx, handle);
      } catch (err) {
        ctx.log.warn({ err }, 'sqlite worker not started: logs are written on the main thread');
        return null;
      }
      try {
        handle.pragma(`wal_autocheckpoint = ${MAIN_AUTOCHECKPOINT_FRAMES}`);
        // whichever connection starts the WAL over cuts it back, with its own limit
        handle.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
      } catch {
        /* closed already */
      }
      ctx.onClose(() => w.stop());
      return w;
    })();
    workers.set(handle, p);
  }
  return p;
}

/** Starts the main database's worker (checkpoints) when it is SQLite. */
export async function startSqliteWorker(ctx: AppContext): Promise<void> {
  const handle = ctx.dbKind === 'sqlite' ? sqliteHandle(ctx.db) : undefined;
  if (handle) await sqliteWorker(ctx, handle);
}
