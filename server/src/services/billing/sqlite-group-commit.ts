// SQLite: reservations group-committed per event-loop turn, refunds and settlements as synchronous transactions on
// the raw better-sqlite3 connection, all of them under the write lock shared with the log writer's worker.
import type BetterSqlite3 from 'better-sqlite3';
import type { NewLog } from '../../db/schema.js';
import { writeLockOf, type SqliteWriteLock } from '../../db/sqlite-write-lock.js';
import { pushSqliteValues, SQLITE_ROW_INSERT } from '../log-writer.js';
import {
  addJournalText,
  flatHolds,
  HOLD_JOURNAL_COMPACT,
  HOLD_JOURNAL_INSERT,
  HoldDeltas,
  journalRow,
  type HoldChange,
} from '../quota-holds.js';
import { statements, type StmtName } from './sql.js';
import { released, type Reservation, type Settlement } from './types.js';

/**
 * A group commit runs at the end of the event-loop turn (the first check phase, whichever HTTP client writes the
 * overlapped requests' upstream calls), or as soon as RESERVE_BATCH reservations whose requests wait
 * for it are queued: in a burst (many requests read in one turn) the first upstream calls then go out after a few
 * reservations instead of after the whole burst was read; waiting for the turn's end cost throughput under load
 * (docs/perf/sqlite-group-commit.md). Overlapped reservations (the request is already on its way upstream; only its
 * response waits, and that arrives in a later turn) do not count: committing them early bought nothing and cost a
 * WAL commit per 8 requests, and every commit also cuts the log writer's transaction short (services/sqlite-worker.ts).
 * RESERVE_BATCH_MAX bounds how long one commit blocks the event loop (its cost grows with each reservation).
 */
const RESERVE_BATCH = 8;
export const RESERVE_BATCH_MAX = 64;

export interface PendingReservation {
  pre: number;
  tokenId: number;
  userId: number;
  limitedToken: boolean;
  /** set by the group commit: 0 reserved, 1 token short, 2 user short (nothing changed) */
  outcome: 0 | 1 | 2;
}

/** The reservations of one group commit, settled together (one promise for all of them). */
interface ReserveBatch {
  items: PendingReservation[];
  /** items whose requests wait for the commit (not overlapped); the first one schedules a commit at this turn's end */
  waiting: number;
  done: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function newBatch(): ReserveBatch {
  const b = { items: [], waiting: 0 } as unknown as ReserveBatch;
  b.done = new Promise<void>((resolve, reject) => {
    b.resolve = resolve;
    b.reject = reject;
  });
  return b;
}

/**
 * SQLite: the same statements prepared once on the raw better-sqlite3 connection and run synchronously, without
 * Kysely's promise chain, connection mutex and query compilation per statement. Used only while no Kysely transaction
 * is open on that connection (they share it); otherwise the Kysely path below runs, queued behind that transaction.
 *
 * Reservations are group-committed: those requested in one event-loop turn run in one transaction at the end of the
 * turn (setImmediate; see RESERVE_BATCH), each still its own conditional UPDATEs checked one after the other, so a
 * burst pays for one WAL commit (frames + locks, the bulk of the cost) instead of one per request. The request waits
 * for that commit before its upstream call; the wait is the rest of the current turn (microseconds when idle).
 */
export class SqliteStatements {
  readonly run: Record<StmtName, BetterSqlite3.Statement>;
  /** a flush's settlement in one transaction; false (nothing written) while the writer worker holds the file */
  readonly settle: (s: Settlement) => boolean;
  private readonly reserveMany: (batch: PendingReservation[]) => void;
  /** gives a reservation back in one transaction; the caller holds the write lock */
  readonly refund: (r: Reservation) => void;
  /** records hold changes alone, the balances unchanged (Billing.keep); the caller holds the write lock */
  readonly releaseHolds: (changes: HoldChange[]) => void;
  private queue: ReserveBatch | null = null;
  /** shared with the writer worker (logs): every write here holds it */
  readonly lock: SqliteWriteLock;

  constructor(
    readonly handle: BetterSqlite3.Database,
    node: string,
    /** a settlement's isolated log row was refused (Settlement.isolateRows) */
    onRowRefused: (row: NewLog, err: unknown) => void = () => undefined,
  ) {
    const lock = (this.lock = writeLockOf(handle));
    const sql = statements('sqlite');
    this.run = {} as Record<StmtName, BetterSqlite3.Statement>;
    // reserveBoth and reserveUserHeld are PostgreSQL / MySQL only: SQLite takes the token, the user and the hold in
    // one transaction (reserveMany)
    for (const name of Object.keys(sql) as StmtName[])
      if (name !== 'reserveBoth' && name !== 'reserveUserHeld') this.run[name] = handle.prepare(sql[name]([]).sql);
    // the node's holds: one journal row per commit (services/quota-holds.ts)
    const journal = handle.prepare(HOLD_JOURNAL_INSERT);
    let journalRows = 0;
    const record = (flat: number[]) => {
      journal.run(journalRow(node, flat));
      journalRows++;
    };
    const { reserveToken, reserveUser, refundToken } = this.run;
    // one user's reservation, checked on its own: refused → its token gets its part back
    const reserveOne = (r: PendingReservation): void => {
      if (reserveUser.run(r.pre, r.userId, r.pre).changes === 1) return;
      if (r.limitedToken) refundToken.run(r.pre, r.tokenId);
      r.outcome = 2;
    };
    this.reserveMany = handle.transaction((batch: PendingReservation[]) => {
      // Tokens one by one in order, then each user's amounts summed: one UPDATE per user instead of one per request
      // (a burst has many tokens but few users). A sum that fits means each part fits in turn; one that does not is
      // taken part by part in order, which decides exactly what one UPDATE per request would have.
      let users: Map<number, number> | null = null;
      for (const r of batch) {
        if (r.limitedToken && reserveToken.run(r.pre, r.tokenId, r.pre).changes !== 1) r.outcome = 1;
        else {
          r.outcome = 0;
          // a commit of one request (the usual one at low load) needs no sums, and a refusal no second UPDATE
          if (batch.length === 1) reserveOne(r);
          else (users ??= new Map()).set(r.userId, (users.get(r.userId) ?? 0) + r.pre);
        }
      }
      if (users) {
        let short: Set<number> | null = null;
        for (const [id, sum] of users) if (reserveUser.run(sum, id, sum).changes !== 1) (short ??= new Set()).add(id);
        if (short) for (const r of batch) if (r.outcome === 0 && short.has(r.userId)) reserveOne(r);
      }
      let held: number[] | null = null;
      for (const r of batch)
        if (r.outcome === 0) (held ??= []).push(r.userId, r.tokenId, r.pre, r.limitedToken ? r.pre : 0);
      if (held) record(held);
    });
    const { refundUser } = this.run;
    this.refund = handle.transaction((r: Reservation) => {
      if (r.token) refundToken.run(r.token, r.tokenId);
      if (r.user) refundUser.run(r.user, r.userId);
      if (r.user || r.token) record([r.userId, r.tokenId, -r.user, -r.token]);
    });
    this.releaseHolds = (changes: HoldChange[]) => record(flatHolds(changes));
    const readJournal = handle.prepare('SELECT holds FROM quota_hold_journal WHERE node = ?').pluck();
    const clearJournal = handle.prepare('DELETE FROM quota_hold_journal WHERE node = ?');
    /** runs a transaction only if the writer worker does not hold the file: false (nothing written) if it does */
    const whenFree =
      <A>(fn: (arg: A) => void) =>
      (arg: A): boolean => {
        if (!lock.tryAcquire()) return false;
        try {
          fn(arg);
        } finally {
          lock.release();
        }
        return true;
      };
    /** adds signed amounts to the node's holds (a settlement's releases), inside the caller's transaction */
    const addHolds = (rows: HoldChange[]): void => {
      if (journalRows < HOLD_JOURNAL_COMPACT) return record(flatHolds(rows));
      // compaction: the node's journal and these changes, summed into one row
      const net = new HoldDeltas();
      for (const text of readJournal.all(node) as string[]) addJournalText(net, text);
      for (const h of rows) net.add(h.userId, h.tokenId, h.user, h.token);
      clearJournal.run(node);
      journalRows = 0;
      const left = net.take();
      if (left.length) record(flatHolds(left));
    };
    let insertLog: BetterSqlite3.Statement | undefined;
    this.settle = whenFree(
      handle.transaction((st: Settlement) => {
        const insertRow = (row: NewLog) => {
          const values: unknown[] = [];
          pushSqliteValues(values, row);
          (insertLog ??= handle.prepare(SQLITE_ROW_INSERT)).run(values);
        };
        for (const row of st.rows) {
          if (!st.isolateRows) insertRow(row);
          else {
            try {
              // nested in the settlement's transaction: a savepoint of its own
              handle.transaction(insertRow)(row);
            } catch (err) {
              onRowRefused(row, err);
            }
          }
        }
        for (const w of st.work) this.run[w.stmt].run(...w.params);
        if (st.released.length) addHolds(released(st.released));
      }),
    );
  }

  /**
   * Queues a reservation (token if limited, then user); its `outcome` is set when the returned promise resolves.
   * `overlapped`: its request does not wait for the commit (see RESERVE_BATCH).
   */
  enqueue(r: PendingReservation, overlapped: boolean): Promise<void> {
    const b = (this.queue ??= newBatch());
    const n = b.items.push(r);
    if (overlapped) {
      // undici writes a call on a reused keep-alive socket from a setImmediate of its own, queued after this one:
      // such calls go out after the commit (the lean client writes during the dispatch, before it)
      if (n === 1) setImmediate(this.commit);
    } else if (++b.waiting === 1) setImmediate(this.commit);
    if (b.waiting >= RESERVE_BATCH || n >= RESERVE_BATCH_MAX) this.commit();
    return b.done;
  }

  private retrying = false;
  private readonly retry = (): void => {
    this.retrying = false;
    this.commit();
  };

  private readonly commit = (): void => {
    const batch = this.queue;
    if (!batch) return this.lock.stopAsking();
    if (!this.handle.open) {
      this.queue = null;
      batch.reject(new Error('database connection is closed'));
      return;
    }
    // a Kysely transaction is open on the connection (never run inside it: its rollback would undo these), or the
    // writer worker is committing: try again once it is done (the worker lets go within a row), without blocking the
    // event loop; later requests join the batch
    if (this.handle.inTransaction) return void setTimeout(this.commit, 1);
    if (!this.lock.tryAcquire()) {
      if (!this.retrying) {
        this.retrying = true;
        void this.lock.released().then(this.retry);
      }
      return;
    }
    this.queue = null;
    try {
      this.reserveMany(batch.items);
    } catch (err) {
      batch.reject(err);
      return;
    } finally {
      this.lock.release();
    }
    batch.resolve();
  };

  /** false while a Kysely transaction holds the shared connection, or after it was closed */
  get usable(): boolean {
    return this.handle.open && !this.handle.inTransaction;
  }
}
