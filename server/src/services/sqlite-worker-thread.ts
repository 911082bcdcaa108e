// The SQLite writer worker's thread (started by sqlite-worker.ts, which says what it is for): its own connection to
// the file, the rows it is handed (log-row-grouping.ts decides when they are due and in what order), the charges that
// travel with log rows, and the WAL checkpoints.
// Lock protocol: see db/sqlite-write-lock.ts — [0] owner (0 free, 1 main, 2 worker), [1] main thread waiting.
import { parentPort, workerData, resourceLimits } from 'node:worker_threads';
import v8 from 'node:v8';
import Database from 'better-sqlite3';
import type BetterSqlite3 from 'better-sqlite3';
import { OWNER_FREE, OWNER_WORKER } from '../db/sqlite-write-lock.js';
import { RowGrouping, type QueuedRows } from './log-row-grouping.js';
import {
  RESTART_FRAMES,
  WAL_SIZE_LIMIT,
  type ChargeSql,
  type FromWorker,
  type ToWorker,
  type WorkerSetup,
} from './sqlite-worker-protocol.js';

/** rows per worker transaction when the main thread is not waiting: bigger ones write fewer WAL frames per row */
const TXN_ROWS = 128;
/** journal rows of hold releases the worker writes for a node before it compacts the node's journal (see journal()) */
const JOURNAL_COMPACT = 64;

const port = parentPort!;
const setup = workerData as WorkerSetup;
const lock = new Int32Array(setup.lock);
const db = new Database(setup.path, { timeout: 30000 });
db.pragma('synchronous = NORMAL');
// no automatic checkpoint inside this connection's commits: they run while the write lock is held (the main thread
// would wait for the checkpoint's copying and fsync); the timer below checkpoints outside the lock
db.pragma('wal_autocheckpoint = 0');
db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
const begin = db.prepare('BEGIN IMMEDIATE');
const commit = db.prepare('COMMIT');
const rollback = db.prepare('ROLLBACK');
const statements = new Map<string, BetterSqlite3.Statement>();
const rows = new RowGrouping(drain);

/** The charges of the rows written in the open transaction, summed per row to update; applied before its commit. */
interface Charges {
  sql: ChargeSql;
  /** token id → [remain, used, last used at] */
  tokens: Map<number, [number, number, number]>;
  /** user id → [quota, used, count] */
  users: Map<number, [number, number, number]>;
  /** channel id → used */
  channels: Map<number, number>;
  /** node → flat (user, token, -user hold, -token hold) releases */
  holds: Map<string, number[]>;
}
let charges: Charges | null = null;
let journalSeq = 0;
const journalRows = new Map<string, number>();

function acquire(): void {
  for (;;) {
    // give a waiting main thread its turn first (bounded: the flag is a request, not a lock)
    if (Atomics.load(lock, 1) !== 0) Atomics.wait(lock, 1, 1, 2);
    if (Atomics.compareExchange(lock, 0, OWNER_FREE, OWNER_WORKER) === OWNER_FREE) return;
    Atomics.wait(lock, 0, 1, 5);
  }
}
function release(): void {
  Atomics.store(lock, 0, OWNER_FREE);
  Atomics.notify(lock, 0);
}

function statement(sql: string): BetterSqlite3.Statement {
  let st = statements.get(sql);
  if (!st) {
    st = db.prepare(sql);
    statements.set(sql, st);
  }
  return st;
}

// One row's charge (its values after the insert's: log-writer.ts CHARGE_COLUMNS), summed per row to update.
function addCharge(item: QueuedRows, o: number): void {
  const p = item.p as number[];
  const b = o + item.ins;
  const node = p[b] as unknown as string;
  const user = p[b + 1],
    token = p[b + 2],
    used = p[b + 5],
    channel = p[b + 8],
    hu = p[b + 9],
    ht = p[b + 10];
  const c = (charges ??= {
    sql: item.charge!,
    tokens: new Map(),
    users: new Map(),
    channels: new Map(),
    holds: new Map(),
  });
  let u = c.users.get(user);
  if (!u) c.users.set(user, (u = [0, 0, 0]));
  u[0] += p[b + 3];
  u[1] += used;
  u[2] += p[b + 6];
  if (token > 0) {
    let t = c.tokens.get(token);
    if (!t) c.tokens.set(token, (t = [0, 0, 0]));
    t[0] += p[b + 4];
    t[1] += used;
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
function writeCharges(): void {
  const c = charges;
  charges = null;
  if (!c) return;
  const byId = <V>(m: Map<number, V>) => [...m].sort((a, b) => a[0] - b[0]);
  for (const [id, t] of byId(c.tokens)) statement(c.sql.token).run(t[0], t[1], t[2], id);
  for (const [id, u] of byId(c.users)) if (u[0] || u[1] || u[2]) statement(c.sql.user).run(u[0], u[1], u[2], id);
  for (const [id, v] of byId(c.channels)) statement(c.sql.channel).run(v, id);
  for (const [node, flat] of c.holds) journal(c.sql, node, flat);
}

// A journal row of hold changes (negative seqs: the main thread numbers its rows from 1 up). Every
// JOURNAL_COMPACT rows of a node, the node's journal (the main thread's rows too) is summed into one row instead.
function journal(sql: ChargeSql, node: string, flat: number[]): void {
  const n = (journalRows.get(node) ?? 0) + 1;
  journalRows.set(node, n);
  if (n < JOURNAL_COMPACT) return void statement(sql.journal).run(node, --journalSeq, JSON.stringify(flat));
  journalRows.set(node, 0);
  const net = new Map<string, number[]>();
  const add = (f: number[]) => {
    for (let i = 0; i + 3 < f.length; i += 4) {
      const k = f[i] + ':' + f[i + 1];
      const d = net.get(k);
      if (d) {
        d[2] += f[i + 2];
        d[3] += f[i + 3];
      } else net.set(k, [f[i], f[i + 1], f[i + 2], f[i + 3]]);
    }
  };
  for (const text of statement(sql.read).pluck().all(node) as string[]) add(JSON.parse(text) as number[]);
  add(flat);
  statement(sql.clear).run(node);
  const left: number[] = [];
  for (const d of net.values()) if (d[2] || d[3]) left.push(...d);
  if (left.length) statement(sql.journal).run(node, --journalSeq, JSON.stringify(left));
}

/** Writes every queued row, in transactions of up to TXN_ROWS rows, each cut short when the main thread waits. */
function drain(): void {
  const queue = rows.take();
  while (queue.length) {
    acquire();
    let n = 0;
    let item: QueuedRows | undefined = queue[0];
    try {
      charges = null;
      begin.run();
      while (item) {
        const st = statement(item.sql);
        const cols = item.cols;
        const ins = item.ins;
        while (item.at < item.p.length) {
          st.run(item.p.slice(item.at, item.at + ins));
          if (ins < cols) addCharge(item, item.at);
          item.at += cols;
          n++;
          if (n >= TXN_ROWS || Atomics.load(lock, 1) !== 0) break;
        }
        if (item.at >= item.p.length) {
          queue.shift();
          item = queue[0];
        }
        if (n >= TXN_ROWS || Atomics.load(lock, 1) !== 0) break;
      }
      writeCharges();
      commit.run();
    } catch (err) {
      charges = null;
      try {
        if (db.inTransaction) rollback.run();
      } catch {
        /* the rollback's own failure changes nothing: the rows are dropped either way */
      }
      // the rows of this transaction are dropped (as a failed batch insert always was); say so
      if (queue[0] === item && item) {
        const left = (item.p.length - item.at) / item.cols;
        queue.shift();
        n += left;
      }
      send({ t: 'error', message: String((err as Error)?.message || err), rows: n });
    } finally {
      release();
    }
  }
}

// PASSIVE copies the committed pages into the database file without the lock; but with two connections committing
// all the time the WAL is rarely found fully copied at the start of a write, so it never rewinds and grows. Once it
// holds RESTART_FRAMES, a RESTART checkpoint under the write lock (little left to copy by then; a short busy wait, so a
// long reader elsewhere only postpones it) makes the next writer start the WAL over.
function checkpoint(): void {
  let r: { log: number; checkpointed: number } | undefined;
  try {
    r = (db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>)[0];
  } catch {
    return;
  }
  if (!r || r.log < RESTART_FRAMES || r.checkpointed < r.log) return;
  acquire();
  try {
    db.pragma('busy_timeout = 5');
    db.pragma('wal_checkpoint(RESTART)');
  } catch {
    /* a reader kept it from finishing: the next round tries again */
  } finally {
    db.pragma('busy_timeout = 30000');
    release();
  }
}
const timer = setInterval(checkpoint, setup.checkpointMs);

function send(m: FromWorker): void {
  port.postMessage(m);
}

port.on('message', (m: ToWorker) => {
  if (m.t === 'rows') {
    rows.add(m);
  } else if (m.t === 'flush') {
    drain();
    send({ t: 'flushed', id: m.id });
  } else if (m.t === 'heap') {
    const newSpace = v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
    send({
      t: 'heap',
      id: m.id,
      heap: { maxYoungGenerationSizeMb: resourceLimits.maxYoungGenerationSizeMb ?? 0, newSpace },
    });
  } else if (m.t === 'stop') {
    clearInterval(timer);
    drain();
    checkpoint();
    db.close();
    send({ t: 'stopped' });
    port.close();
  }
});
// the connection is open and the handlers are in place (the main thread waits for this before using the worker)
send({ t: 'ready' });
