// One worker thread per SQLite file, with its own connection, for the writes nobody waits for:
//   - log rows (services/log-writer.ts): inserting into `logs` is costly (ten indexes, kept for new-api's queries); on
//     the main thread it was a large share of the relay's CPU and stalled it per chunk (docs/perf/log-writer.md);
//   - WAL checkpoints (PASSIVE every second, outside the write lock; the WAL is made to start over once it holds
//     10,000 frames): with synchronous=NORMAL a checkpoint fsyncs, and SQLite's automatic checkpoint runs inside
//     whichever commit crosses the threshold — on the relay's event loop, or in this worker while it holds the write
//     lock, it stalled requests. This connection has none; the main one keeps one as a safety net.
// The worker and the main thread take turns through the file's write lock (db/sqlite-write-lock.ts): the worker
// writes up to TXN_ROWS rows per transaction and commits early as soon as the main thread is waiting. Rows marked `now`
// (a quiet gateway: log-writer.ts) are written at once; the others wait up to GROUP_MS, to be written grouped
// (log-row-grouping.ts).
// Rows may carry a charge (a consume-log row and its request's settlement: log-writer.ts, addCharged): the worker
// writes the settlement (quota deltas, the release of the request's hold) in the same transaction as the row, so
// that after a crash a request is either charged and logged, or neither (its hold is then given back).
// This module is the main thread's side; the worker's code is sqlite-worker-thread.ts, and what they tell each other
// is in sqlite-worker-protocol.ts.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import type { AppContext } from '../context.js';
import { sqliteHandle } from '../db/connect.js';
import { writeLockOf } from '../db/sqlite-write-lock.js';
import {
  WAL_SIZE_LIMIT,
  type FromWorker,
  type RowsHow,
  type ToWorker,
  type WorkerHeap,
  type WorkerSetup,
} from './sqlite-worker-protocol.js';

export { RESTART_FRAMES, type ChargeSql, type WorkerHeap } from './sqlite-worker-protocol.js';

/**
 * A checkpoint copies every page changed since the last one, once. The log indexes on token_id / token_name take
 * rows in a different leaf per token, so with many active tokens each row dirties several pages and the same ones
 * again and again, so frequent checkpoints cost about as much as the inserts themselves; a longer interval copies far
 * fewer pages per row, which cut the CPU per request of both threads: docs/perf/log-writer.md.
 */
const CHECKPOINT_MS = 1000;
/**
 * The main connection's own automatic checkpoint while the worker runs, a safety net for a worker that falls behind:
 * it runs inside a relay commit, so it must stay above what the worker lets the WAL reach (RESTART_FRAMES plus a
 * second of commits). Once the worker is gone it goes back to SQLite's default.
 */
const MAIN_AUTOCHECKPOINT_FRAMES = 50_000;
const SQLITE_DEFAULT_AUTOCHECKPOINT = 1000;
// The worker runs at the process's CPU priority. It once ran 5 nice steps lower, for a slightly better one-connection
// tail latency on a noisy 2-core VM; but as the logs table grows a row costs the worker more, and at nice +5 under a
// saturating load it fell behind: rows stayed queued after each run, more each run, and RSS grew. At the same
// priority it kept up, and paired one-connection probes showed no tail-latency difference beyond the noise
// (docs/perf/log-writer.md).

/**
 * The worker isolate's young generation (MB): its young objects are log rows on their way to SQLite, and the rows
 * held for grouping outlive its scavenges anyway. V8 lets a process-wide --max-semi-space-size (the server's flags
 * in scripts/server-flags.mjs) win over this limit; without that flag it keeps the worker's new space at 2 MB
 * instead of V8's default of tens of MB.
 */
const WORKER_YOUNG_GENERATION_MB = 3;

/**
 * The worker's thread runs sqlite-worker-thread.ts: in the build, the compiled .js file next to this one. When this
 * module runs from its TypeScript source (the test runner, `npm run dev`), Node cannot load a .ts file by itself, nor
 * (Node 20) give a worker an ESM loader through execArgv: the thread then starts with tsx's require hook and loads the
 * source through it.
 */
function startThread(setup: WorkerSetup): Worker {
  const options = { workerData: setup, resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB } };
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./sqlite-worker-thread.js', import.meta.url), options);
  const source = fileURLToPath(new URL('./sqlite-worker-thread.ts', import.meta.url));
  const tsx = createRequire(import.meta.url).resolve('tsx/cjs');
  return new Worker(`require(${JSON.stringify(tsx)}); require(${JSON.stringify(source)});`, { ...options, eval: true });
}

export class SqliteWorker {
  private readonly worker: Worker;
  private alive = true;
  private nextId = 1;
  /** replies awaited from the worker ('flushed', 'heap'), by request id */
  private readonly waiting = new Map<number, (value?: WorkerHeap) => void>();
  /** resolves once the thread has opened its connection, or has exited */
  readonly ready: Promise<void>;
  private onReady: () => void = () => {};

  constructor(
    private readonly ctx: AppContext,
    handle: BetterSqlite3.Database,
  ) {
    const lock = writeLockOf(handle);
    this.worker = startThread({ path: handle.name, lock: lock.buffer, checkpointMs: CHECKPOINT_MS });
    this.worker.unref();
    this.ready = new Promise((resolve) => (this.onReady = resolve));
    this.worker.on('message', (m: FromWorker) => {
      if (m.t === 'ready') this.onReady();
      else if (m.t === 'flushed') this.settle(m.id);
      else if (m.t === 'heap') this.settle(m.id, m.heap);
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
      this.onReady();
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
  insert(insertSql: string, cols: number, values: unknown[], how: RowsHow): void {
    this.post({ t: 'rows', sql: insertSql, cols, p: values, ...how });
  }

  private post(m: ToWorker): void {
    this.worker.postMessage(m);
  }

  /** Resolves when everything queued before the call is committed (at once if the worker is gone). */
  async flush(): Promise<void> {
    await this.ask('flush');
  }

  /** The worker isolate's heap limits and new space as it sees them, or null once the worker is gone. */
  async heap(): Promise<WorkerHeap | null> {
    return (await this.ask('heap')) ?? null;
  }

  /** Sends a request and resolves with the worker's reply (undefined at once, or on exit, if the worker is gone). */
  private ask(t: 'flush' | 'heap'): Promise<WorkerHeap | undefined> {
    if (!this.alive) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.post({ t, id });
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
      this.post({ t: 'stop' });
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
      // its first rows would otherwise wait for the thread to load its code
      await w.ready;
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
