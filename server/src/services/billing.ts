// Quota reservation and settlement (facts §5.2, §5.3).
//
// Guarantee: no overdraft under concurrency. A reservation is one atomic conditional UPDATE in the database
// (`quota = quota - :pre WHERE id = :id AND quota >= :pre`, same for a limited token's remain_quota), so N parallel
// requests can never take the balance below zero through their reservations; a final charge larger than its
// reservation can overshoot by at most that difference. Settlement applies `final - reserved` exactly once per
// request (the Reservation object is a one-shot state machine), so retries, disconnects and errors can neither lose
// nor double a charge.
//
// Settlement writes are coalesced: deltas are merged per user / token / channel in memory and written in one
// transaction every SETTLE_FLUSH_MS (BATCH_UPDATE_INTERVAL when BATCH_UPDATE_ENABLED), and on shutdown, together with
// the consume-log rows of the requests they settle and the release of those requests' holds. On a SQLite file the
// writer worker takes each request's charge with its log row instead (up to a second later on a busy gateway: its
// rows wait to be written grouped) and writes both in one transaction (attachLogs). Reservations are never batched.
// A delayed refund only makes the balance look lower (a reservation refused meanwhile on SQLite waits for the charges
// still on their way and tries again); a delayed extra charge (final > reserved) can let reservations in the next
// moments pass that would otherwise fail — bounded by that window. A failed flush keeps everything and retries.
//
// Crashes: every reservation is also recorded as this process's hold (services/quota-holds.ts), in the same statement
// or transaction, and released in the same commit as the request's charge and log row; a process that dies with
// reservations open has them given back by the next process (SQLite) or by any live node once its heartbeat is stale
// (PostgreSQL / MySQL). So after a crash each answered request is either charged its final amount and logged, or
// charged nothing and not logged (with LOG_SQL_DSN the row is in another database and this no longer holds).
//
// new-api's "trusted shortcut" (reserve nothing when the balance exceeds 100 × pre) is deliberately NOT kept: it
// reads a cached balance and reserves nothing, so concurrent requests could overdraw by any amount. Above that
// threshold the relay only stops waiting for the reservation before the upstream call (overlapsReservation in
// relay/engine.ts); the reservation is still taken, and its refusal still refuses the request.
import { CompiledQuery, type Kysely, type QueryResult } from 'kysely';
import type BetterSqlite3 from 'better-sqlite3';
import type { AppContext } from '../context.js';
import { pgPrepared, sqliteHandle } from '../db/connect.js';
import { writeLockOf, type SqliteWriteLock } from '../db/sqlite-write-lock.js';
import type { Database, NewLog } from '../db/schema.js';
import { insertQuery, pushSqliteValues, SQLITE_ROW_INSERT, type Charge, type LogWriter } from './log-writer.js';
import {
  addHoldsQuery,
  addJournalText,
  flatHolds,
  HOLD_CONFLICT_PG,
  HOLD_INSERT,
  HOLD_JOURNAL_COMPACT,
  HOLD_JOURNAL_INSERT,
  HoldDeltas,
  HoldNodes,
  journalRow,
  newNodeId,
  type HoldChange,
  type HoldNodeOptions,
} from './quota-holds.js';
import type { TokenCache } from './cache/token-cache.js';
import type { UserCache } from './cache/user-cache.js';

export class QuotaError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export interface ReserveInput {
  userId: number;
  /** 0 for the playground (user quota only) */
  tokenId: number;
  tokenKey: string;
  tokenUnlimited: boolean;
  /** cached balance, used only when nothing is reserved (pre = 0) */
  cachedUserQuota: number;
  amount: number;
  /**
   * The request does not wait for this reservation before its upstream call (engine.ts, overlapsReservation): on
   * SQLite it joins the turn's group commit without hastening it (see RESERVE_BATCH). PostgreSQL / MySQL batch every
   * reservation the same way (BatchedReservations).
   */
  overlapped?: boolean;
}

export interface Reservation {
  readonly userId: number;
  readonly tokenId: number;
  readonly tokenKey: string;
  /** reserved on the user */
  readonly user: number;
  /** reserved on the token (0 when unlimited or playground) */
  readonly token: number;
  readonly tokenUnlimited: boolean;
  state: 'open' | 'closed';
}

/** A reservation taken: `pre` on the user, and on the token when it is limited. */
function openReservation(inp: ReserveInput, pre: number, limitedToken: boolean): Reservation {
  return {
    userId: inp.userId,
    tokenId: inp.tokenId,
    tokenKey: inp.tokenKey,
    user: pre,
    token: limitedToken ? pre : 0,
    tokenUnlimited: inp.tokenUnlimited,
    state: 'open',
  };
}

export interface SettleInput {
  quota: number;
  channelId: number;
  /** false when nothing was consumed (prompt + completion == 0): counters stay unchanged, as in new-api */
  countRequest: boolean;
}

type Stmt = (params: unknown[]) => CompiledQuery;

/**
 * What each settlement statement writes: its params are one value per column, in this order, then the row's id.
 * `-` subtracts the value, `+` adds it, `=` sets it. One row per statement on SQLite (settleRowSql), many on
 * PostgreSQL / MySQL (settleManyQuery).
 */
const SETTLE_COLUMNS = {
  settleToken: { table: 'tokens', cols: [['remain_quota', '-'], ['used_quota', '+'], ['accessed_time', '=']] },
  settleUser: { table: 'users', cols: [['quota', '-'], ['used_quota', '+'], ['request_count', '+']] },
  settleChannel: { table: 'channels', cols: [['used_quota', '+']] },
} as const satisfies Record<string, { table: string; cols: ReadonlyArray<readonly [string, '-' | '+' | '=']> }>;
type SettleStmt = keyof typeof SETTLE_COLUMNS;

/** The single-row form of a settlement statement, with `?` placeholders. */
function settleRowSql(stmt: SettleStmt): string {
  const { table, cols } = SETTLE_COLUMNS[stmt];
  return `UPDATE ${table} SET ${cols.map(([c, op]) => (op === '=' ? `${c} = ?` : `${c} = ${c} ${op} ?`)).join(', ')} WHERE id = ?`;
}

/** A user's reservation on PostgreSQL, with the node's hold; $1 pre, $2 user id, $3 node, $4 token id (one row or none). */
const RESERVE_USER_PG = pgPrepared(
  'WITH u AS (UPDATE users SET quota = quota - $1::bigint WHERE id = $2::bigint AND quota >= $1::bigint RETURNING id) ' +
    `${HOLD_INSERT} SELECT $3::varchar, $2::bigint, $4::bigint, $1::bigint, 0 FROM u ${HOLD_CONFLICT_PG}`,
);

/** reserveBoth on PostgreSQL (see there); $1 pre, $2 token id, $3 user id, $4 node */
const RESERVE_BOTH_PG = pgPrepared(
  'WITH t AS (UPDATE tokens SET remain_quota = remain_quota - $1::bigint WHERE id = $2::bigint AND remain_quota >= $1::bigint RETURNING id), ' +
    'u AS (UPDATE users SET quota = quota - $1::bigint WHERE id = $3::bigint AND quota >= $1::bigint AND EXISTS (SELECT 1 FROM t) RETURNING id), ' +
    `h AS (${HOLD_INSERT} SELECT $4::varchar, $3::bigint, $2::bigint, $1::bigint, $1::bigint FROM u ${HOLD_CONFLICT_PG}) ` +
    'SELECT CASE WHEN (SELECT count(*) FROM t) = 0 THEN 0 ELSE 1 / (SELECT count(*) FROM u) END AS reserved',
);

/**
 * Reservations taken together on PostgreSQL (BatchedReservations), as ONE statement: each limited token's and each user's
 * reservations summed, locked tokens first then users, each by id (the order of every other quota statement), and
 * taken only if every sum fits: a token or user short of its sum divides by zero (22012), which rolls the whole
 * statement back. Whoever fits the sum fits each of its parts one after the other, so a success is what reserving
 * them one by one would have done; after a refusal they are reserved one by one.
 * $1 token ids, $2 their sums, $3 user ids, $4 their sums; the node's holds: $5 node, $6 user ids, $7 token ids, $8 user
 * amounts, $9 token amounts (one per pair, in pair order), written after the users' UPDATE.
 */
const RESERVE_MANY_PG = pgPrepared(
  'WITH tv AS (SELECT * FROM unnest($1::bigint[], $2::bigint[]) AS tv(id, pre)), ' +
    'uv AS (SELECT * FROM unnest($3::bigint[], $4::bigint[]) AS uv(id, pre)), ' +
    'lt AS (SELECT x.id FROM tokens x JOIN tv ON tv.id = x.id ORDER BY x.id FOR UPDATE OF x), ' +
    't AS (UPDATE tokens x SET remain_quota = x.remain_quota - tv.pre FROM tv JOIN lt ON lt.id = tv.id ' +
    'WHERE x.id = tv.id AND x.remain_quota >= tv.pre RETURNING x.id), ' +
    // the users' locks only once the tokens' UPDATE is done (it is read first)
    'lu AS (SELECT y.id FROM users y JOIN uv ON uv.id = y.id WHERE (SELECT count(*) FROM t) >= 0 ORDER BY y.id FOR UPDATE OF y), ' +
    'u AS (UPDATE users y SET quota = y.quota - uv.pre FROM uv JOIN lu ON lu.id = uv.id ' +
    'WHERE y.id = uv.id AND y.quota >= uv.pre RETURNING y.id), ' +
    `h AS (${HOLD_INSERT} SELECT $5::varchar, hv.u, hv.t, hv.uq, hv.tq ` +
    'FROM unnest($6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[]) AS hv(u, t, uq, tq) ' +
    `WHERE (SELECT count(*) FROM u) >= 0 ORDER BY hv.u, hv.t ${HOLD_CONFLICT_PG}) ` +
    'SELECT 1 / ((SELECT count(*) FROM t) = cardinality($1::bigint[]) AND (SELECT count(*) FROM u) = cardinality($3::bigint[]))::int AS reserved',
);

function statements(kind: string) {
  const q = (text: string): Stmt => {
    let i = 0;
    const compiled = kind === 'postgres' ? pgPrepared(text.replace(/\?/g, () => `$${++i}`)) : text;
    return (params) => CompiledQuery.raw(compiled, params);
  };
  return {
    reserveUser: q('UPDATE users SET quota = quota - ? WHERE id = ? AND quota >= ?'),
    reserveToken: q('UPDATE tokens SET remain_quota = remain_quota - ? WHERE id = ? AND remain_quota >= ?'),
    refundUser: q('UPDATE users SET quota = quota + ? WHERE id = ?'),
    refundToken: q('UPDATE tokens SET remain_quota = remain_quota + ? WHERE id = ?'),
    settleUser: q(settleRowSql('settleUser')),
    settleToken: q(settleRowSql('settleToken')),
    settleChannel: q(settleRowSql('settleChannel')),
    tokenRemain: q('SELECT remain_quota FROM tokens WHERE id = ?'),
    userQuota: q('SELECT quota FROM users WHERE id = ?'),
    /**
     * A limited token and its user in one atomic statement (PostgreSQL / MySQL): either both are reserved or neither,
     * in one round trip, the token's row locked before the user's (the order settlement and refunds use too).
     *   PostgreSQL: the user's UPDATE runs only when the token's did (EXISTS on its RETURNING). When the token was
     *   reserved but the user is short, the statement divides by zero (error 22012, PG_REFUSED): the error
     *   rolls the whole statement back, token included. `reserved` is 1 when both were taken, 0 when the token is short.
     *   MySQL / MariaDB: a three-table UPDATE (with the hold's row) changes all rows or none (3 or 0 affected rows).
     * Both add the amounts to the node's hold (services/quota-holds.ts). Params: pre, tokenId, userId, node.
     */
    reserveBoth: ((params: unknown[]) => {
      const [pre, tokenId, userId, node] = params;
      return kind === 'postgres'
        ? CompiledQuery.raw(RESERVE_BOTH_PG, [pre, tokenId, userId, node])
        : CompiledQuery.raw(
            'UPDATE tokens STRAIGHT_JOIN users STRAIGHT_JOIN quota_holds SET tokens.remain_quota = tokens.remain_quota - ?, users.quota = users.quota - ?, ' +
              'quota_holds.user_quota = quota_holds.user_quota + ?, quota_holds.token_quota = quota_holds.token_quota + ? ' +
              'WHERE tokens.id = ? AND tokens.remain_quota >= ? AND users.id = ? AND users.quota >= ? ' +
              'AND quota_holds.node = ? AND quota_holds.user_id = ? AND quota_holds.token_id = ?',
            [pre, pre, pre, pre, tokenId, pre, userId, pre, node, userId, tokenId],
          );
    }) as Stmt,
    /**
     * A user's reservation with the node's hold, in one statement (PostgreSQL / MySQL): params pre, userId, node,
     * tokenId. One row on PostgreSQL (the hold's upsert), two on MySQL (the user's and the hold's) when reserved.
     * On MySQL the hold's row must exist (Billing.ensureHoldRow).
     */
    reserveUserHeld: ((params: unknown[]) => {
      const [pre, userId, node, tokenId] = params;
      return kind === 'postgres'
        ? CompiledQuery.raw(RESERVE_USER_PG, [pre, userId, node, tokenId])
        : CompiledQuery.raw(
            'UPDATE users STRAIGHT_JOIN quota_holds SET users.quota = users.quota - ?, quota_holds.user_quota = quota_holds.user_quota + ? ' +
              'WHERE users.id = ? AND users.quota >= ? AND quota_holds.node = ? AND quota_holds.user_id = ? AND quota_holds.token_id = ?',
            [pre, pre, userId, pre, node, userId, tokenId],
          );
    }) as Stmt,
  };
}

/**
 * PostgreSQL's division_by_zero: how reserveBoth (the user was short) and RESERVE_MANY_PG (a sum did not fit) refuse;
 * the error rolls the statement back, so nothing was changed.
 */
const PG_REFUSED = '22012';

/** A deadlock victim (PostgreSQL 40P01, MySQL/MariaDB 1213) was rolled back whole and can run again. */
function isDeadlock(err: unknown): boolean {
  const e = err as { code?: unknown; errno?: unknown };
  return e?.code === '40P01' || e?.errno === 1213 || e?.code === 'ER_LOCK_DEADLOCK';
}

/** Runs `fn` again (up to 3 tries) when the database picked it as a deadlock victim; `onRetry` hears of each. */
async function retryDeadlock<T>(fn: () => Promise<T>, onRetry: (err: unknown) => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= 3 || !isDeadlock(err)) throw err;
      onRetry(err);
    }
  }
}

type StmtName = keyof ReturnType<typeof statements>;

/**
 * PostgreSQL / MySQL: the settlement of many rows of one table as ONE statement (`rows` are the single-row statement's
 * params), locking the rows in id order — the order reservations, refunds and other nodes' flushes take them in, so
 * none of them can wait on another in a cycle. One statement per row cost a round trip each: with many active tokens
 * that was more round trips than requests.
 *   PostgreSQL: the values travel as one array per column (unnest); a CTE locks the rows (`FOR UPDATE`, by id)
 *   before the UPDATE joins them.
 *   MySQL / MariaDB: one CASE per column and `ORDER BY id`, which a single-table UPDATE takes as its lock order.
 *   SQLite uses it only on its Kysely path (its flushes otherwise run prepared single-row statements synchronously).
 */
function settleManyQuery(kind: string, stmt: SettleStmt, rows: unknown[][]): CompiledQuery {
  const { table, cols } = SETTLE_COLUMNS[stmt];
  const n = cols.length;
  if (kind === 'postgres') {
    const arrays: unknown[][] = Array.from({ length: n + 1 }, () => []);
    for (const r of rows) {
      arrays[0].push(r[n]);
      for (let j = 0; j < n; j++) arrays[j + 1].push(r[j]);
    }
    const vcols = cols.map((_, j) => `d${j}`);
    const sets = cols.map(([c, op], j) => `${c} = ${op === '=' ? `v.d${j}` : `t.${c} ${op} v.d${j}`}`).join(', ');
    // the same text for any number of rows: a named statement
    return CompiledQuery.raw(
      pgPrepared(`WITH v AS (SELECT * FROM unnest(${arrays.map((_, j) => `$${j + 1}::bigint[]`).join(', ')}) AS v(id, ${vcols.join(', ')})), ` +
        `l AS (SELECT x.id FROM ${table} x JOIN v ON v.id = x.id ORDER BY x.id FOR UPDATE OF x) ` +
        `UPDATE ${table} t SET ${sets} FROM v JOIN l ON l.id = v.id WHERE t.id = v.id`),
      arrays,
    );
  }
  const params: unknown[] = [];
  const sets = cols.map(([c, op], j) => `${c} = ${op === '=' ? '' : `${c} ${op} `}${caseById(rows.map((r) => [r[n], r[j]]), params)}`);
  const ids = idList(rows.map((r) => r[n]), params);
  // SQLite (its Kysely path, while a transaction holds the raw connection) has one writer and no row locks
  const order = kind === 'mysql' ? ' ORDER BY id' : '';
  return CompiledQuery.raw(`UPDATE ${table} SET ${sets.join(', ')} WHERE id IN ${ids}${order}`, params);
}

/** `CASE id WHEN ? THEN ? … END` for (id, value) pairs, their values pushed onto `params` (MySQL / SQLite). */
function caseById(pairs: Iterable<readonly [unknown, unknown]>, params: unknown[]): string {
  const whens: string[] = [];
  for (const [id, v] of pairs) {
    params.push(id, v);
    whens.push('WHEN ? THEN ?');
  }
  return `CASE id ${whens.join(' ')} END`;
}

/** `(?, ?, …)` for `ids`, pushed onto `params`. */
function idList(ids: Iterable<unknown>, params: unknown[]): string {
  const marks: string[] = [];
  for (const id of ids) {
    params.push(id);
    marks.push('?');
  }
  return `(${marks.join(', ')})`;
}

/**
 * A group commit runs at the end of the event-loop turn (one turn later when all its requests are already upstream:
 * commitAfterWrites), or as soon as RESERVE_BATCH reservations whose requests wait
 * for it are queued: in a burst (many requests read in one turn) the first upstream calls then go out after a few
 * reservations instead of after the whole burst was read. Measured with a 50 ms upstream at 128 connections: waiting
 * for the turn's end cost ~8 % RPS. Overlapped reservations (the request is already on its way upstream; only its
 * response waits, and that arrives in a later turn) do not count: committing them early bought nothing and cost a
 * WAL commit per 8 requests, and every commit also cuts the log writer's transaction short (services/sqlite-worker.ts).
 * RESERVE_BATCH_MAX bounds how long one commit blocks the event loop (a few µs a reservation).
 */
const RESERVE_BATCH = 8;
const RESERVE_BATCH_MAX = 64;

interface PendingReservation {
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
class SqliteStatements {
  readonly run: Record<StmtName, BetterSqlite3.Statement>;
  /** a flush's settlement in one transaction; false (nothing written) while the writer worker holds the file */
  readonly settle: (s: Settlement) => boolean;
  private readonly reserveMany: (batch: PendingReservation[]) => void;
  /** gives a reservation back in one transaction; the caller holds the write lock */
  readonly refund: (r: Reservation) => void;
  private queue: ReserveBatch | null = null;
  /** shared with the writer worker (logs): every write here holds it */
  readonly lock: SqliteWriteLock;

  constructor(
    readonly handle: BetterSqlite3.Database,
    node: string,
    /**
     * the relay's upstream calls are written during their dispatch (the lean HTTP client, LEAN_HTTP): a group of
     * overlapped reservations need not wait a check phase for undici's writes (commitAfterWrites)
     */
    private readonly writesAtDispatch = false,
    /** a settlement's isolated log row was refused (Settlement.isolateRows) */
    onRowRefused: (row: NewLog, err: unknown) => void = () => undefined,
  ) {
    const lock = (this.lock = writeLockOf(handle));
    const sql = statements('sqlite');
    this.run = {} as Record<StmtName, BetterSqlite3.Statement>;
    // reserveBoth and reserveUserHeld are PostgreSQL / MySQL only: SQLite takes the token, the user and the hold in
    // one transaction (reserveMany)
    for (const name of Object.keys(sql) as StmtName[]) if (name !== 'reserveBoth' && name !== 'reserveUserHeld') this.run[name] = handle.prepare(sql[name]([]).sql);
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
      for (const r of batch) if (r.outcome === 0) (held ??= []).push(r.userId, r.tokenId, r.pre, r.limitedToken ? r.pre : 0);
      if (held) record(held);
    });
    const { refundUser } = this.run;
    this.refund = handle.transaction((r: Reservation) => {
      if (r.token) refundToken.run(r.token, r.tokenId);
      if (r.user) refundUser.run(r.user, r.userId);
      if (r.user || r.token) record([r.userId, r.tokenId, -r.user, -r.token]);
    });
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
      if (n === 1) setImmediate(this.writesAtDispatch ? this.commit : this.commitAfterWrites);
    } else if (++b.waiting === 1) setImmediate(this.commit);
    if (b.waiting >= RESERVE_BATCH || n >= RESERVE_BATCH_MAX) this.commit();
    return b.done;
  }

  /**
   * Overlapped reservations commit one check phase later: undici writes a request on a reused keep-alive socket
   * from a setImmediate of its own (it first lets the poll phase see whatever the idle socket received), queued
   * after ours, so committing at the first check phase held every overlapped upstream call back for the whole
   * commit. Requests read in the poll phase between the two join the batch.
   */
  private readonly commitAfterWrites = (): void => {
    setImmediate(this.commit);
  };

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

/**
 * What one settlement flush writes, in ONE transaction: the consume-log rows of the requests it settles (when the logs
 * are in the same database and no SQLite worker takes them with their charges), the deltas (tokens, users, channels,
 * each by id) and the release of those requests' holds. So a crash leaves each request either settled, logged and
 * released, or none of it (its hold is then given back by the recovery): its quota and its log row always agree.
 */
interface Settlement {
  rows: NewLog[];
  work: Array<{ stmt: SettleStmt; params: unknown[] }>;
  /** the holds released, as positive amounts */
  released: HoldChange[];
  /**
   * the previous flush failed: each row is inserted under a savepoint of its own, and a row the database refuses is
   * left out (one it can never take would otherwise block every settlement for good) while its charge is written
   */
  isolateRows: boolean;
}

/** Releases as the signed changes of the node's holds. */
function released(rows: HoldChange[]): HoldChange[] {
  return rows.map((h) => ({ ...h, user: -h.user, token: -h.token }));
}

/** The request's token has a quota of its own to reserve on (not unlimited, not the playground's none). */
function limitsToken(inp: ReserveInput): boolean {
  return inp.tokenId > 0 && !inp.tokenUnlimited;
}

interface PendingBatched {
  inp: ReserveInput;
  pre: number;
  resolve: (r: Reservation) => void;
  reject: (err: unknown) => void;
}

/**
 * Takes every sum (limited token id → amount, user id → amount) or none; false when one did not fit (nothing taken).
 * Locks tokens before users, each by id.
 */
type TakeAll = (tokens: Map<number, number>, users: Map<number, number>, holds: HoldChange[]) => Promise<boolean>;

/**
 * PostgreSQL / MySQL: reservations batched as they come: one goes at once when none is in flight; those that arrive
 * meanwhile wait for it and then go together, up to RESERVE_BATCH_MAX, taking each token's and each user's summed
 * amount at once (`takeAll`) instead of one round trip and one server-side statement each. So an idle gateway adds
 * no wait, and a loaded one sends one batch per round trip. Whoever fits a sum fits each of its parts one after the
 * other, so a batch taken is what reserving them one by one would have done; a refused one (nothing taken) is then
 * reserved one by one, which decides exactly who is short.
 * Every reservation goes this way, whether its request waits for it or not (ReserveInput.overlapped): under load a
 * waiting one waits for the batch in flight before its own, and in exchange the database runs one statement per
 * batch. `npm run bench` with every token short of the overlap threshold (BENCH_TOKENS=5000
 * BENCH_TOKEN_QUOTA=3600), 0-ms upstream, against sending each at once: PostgreSQL 2.3k → 3.9k RPS at 32
 * connections, 2.5k → 5.0k at 128; MySQL 4.1k → 5.0k and 4.4k → 6.4k; p50 and p99 lower in all four cells
 * (docs/architecture.md).
 */
class BatchedReservations {
  private queue: PendingBatched[] = [];
  private inFlight = 0;

  constructor(
    private readonly takeAll: TakeAll,
    /** one reservation on its own (Billing.reserveWith) */
    private readonly one: (inp: ReserveInput, pre: number) => Promise<Reservation>,
    private readonly onDeadlock: (err: unknown) => void,
  ) {}

  add(inp: ReserveInput, pre: number): Promise<Reservation> {
    return new Promise((resolve, reject) => {
      const n = this.queue.push({ inp, pre, resolve, reject });
      if (this.inFlight === 0 || n >= RESERVE_BATCH_MAX) this.send();
    });
  }

  private send(): void {
    const items = this.queue;
    if (!items.length) return;
    this.queue = [];
    this.inFlight++;
    void this.run(items).finally(() => {
      if (--this.inFlight === 0) this.send();
    });
  }

  /** Settles every item; resolves when all are. */
  private async run(items: PendingBatched[]): Promise<void> {
    if (items.length === 1) return this.oneByOne(items);
    const tokens = new Map<number, number>();
    const users = new Map<number, number>();
    const holds = new HoldDeltas();
    for (const { inp, pre } of items) {
      const limited = limitsToken(inp);
      if (limited) tokens.set(inp.tokenId, (tokens.get(inp.tokenId) ?? 0) + pre);
      users.set(inp.userId, (users.get(inp.userId) ?? 0) + pre);
      holds.add(inp.userId, inp.tokenId, pre, limited ? pre : 0);
    }
    const held = holds.take();
    let taken: boolean;
    try {
      taken = await retryDeadlock(() => this.takeAll(tokens, users, held), this.onDeadlock);
    } catch (err) {
      // the outcome is unknown (a connection lost after the commit): asking again could take it twice, so they
      // fail as a single reservation would
      for (const it of items) it.reject(err);
      return;
    }
    if (!taken) return this.oneByOne(items);
    for (const it of items) it.resolve(openReservation(it.inp, it.pre, limitsToken(it.inp)));
  }

  private async oneByOne(items: PendingBatched[]): Promise<void> {
    await Promise.all(items.map((it) => this.one(it.inp, it.pre).then(it.resolve, it.reject)));
  }
}

/** Thrown inside the MySQL batch's transaction to roll it back: a sum did not fit. */
const BATCH_SHORT = Symbol('a reservation sum did not fit');

/**
 * `col = col - CASE id WHEN … END` for every id of `sums` whose row still holds its amount, locked by id (the
 * single-table UPDATE's ORDER BY is its lock order). MySQL / MariaDB.
 */
function takeSumsMysql(table: 'tokens' | 'users', col: string, sums: Map<number, number>): CompiledQuery {
  const params: unknown[] = [];
  const set = `${col} = ${col} - ${caseById(sums, params)}`;
  const cond = `${col} >= ${caseById(sums, params)}`;
  return CompiledQuery.raw(`UPDATE ${table} SET ${set} WHERE ${cond} AND id IN ${idList(sums.keys(), params)} ORDER BY id`, params);
}

const SETTLE_FLUSH_MS = 50;
/** consume-log rows that wait for a settlement flush at most (while the database is down) */
const MAX_LOG_ROWS = 100_000;
/** log rows per INSERT of a settlement flush (MySQL's VALUES lists; PostgreSQL sends arrays either way) */
const LOG_ROWS_PER_INSERT = 200;

interface UserDelta {
  quota: number;
  used: number;
  count: number;
}
interface TokenDelta {
  remain: number;
  used: number;
  at: number;
}

const affected = (r: { numAffectedRows?: bigint; numUpdatedOrDeletedRows?: bigint }) => Number(r.numAffectedRows ?? r.numUpdatedOrDeletedRows ?? 0);

export class Billing {
  private readonly db: Kysely<Database>;
  private readonly sql: ReturnType<typeof statements>;
  private readonly fast: SqliteStatements | null;
  /** PostgreSQL / MySQL: reservations, batched as they come */
  private readonly batch: BatchedReservations | null;
  private users_ = new Map<number, UserDelta>();
  private tokens_ = new Map<number, TokenDelta>();
  private channels_ = new Map<number, number>();
  /** holds released by settlements, written with their deltas (services/quota-holds.ts) */
  private releases = new HoldDeltas();
  /** consume-log rows of queued settlements, inserted in the flush's transaction (the logs are in this database) */
  private logRows: NewLog[] = [];
  /** the log writer: on a SQLite file its worker writes a charge with its log row (attachLogs) */
  private logs: LogWriter | null = null;
  /** this process's id in quota_holds */
  readonly node: string;
  /** heartbeat and recovery of dead processes' holds (start / stop) */
  readonly holdNodes: HoldNodes;
  /** MySQL: (user, token) pairs whose hold row exists (reserveUserHeld and reserveBoth update it in place) */
  private holdRows = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | null = null;
  /** the last settlement flush failed (its next one isolates its log rows: Settlement.isolateRows) */
  private flushFailed = false;
  private readonly flushMs: number;
  /**
   * Statements retried after the database chose them as deadlock victims. Reservations, refunds and settlement flushes
   * lock token rows before user rows, so this stays 0 unless something else writes those rows in another order.
   */
  deadlockRetries = 0;
  private readonly onDeadlock = (err: unknown): void => {
    this.deadlockRetries++;
    this.ctx.log.warn({ err }, 'quota statement chosen as a deadlock victim; retrying');
  };

  constructor(
    private readonly ctx: AppContext,
    private readonly tokens: TokenCache,
    private readonly users: UserCache,
    holdOptions: HoldNodeOptions = {},
  ) {
    this.db = ctx.db;
    this.sql = statements(ctx.dbKind);
    this.node = newNodeId();
    this.holdNodes = new HoldNodes(ctx, this.node, { ...holdOptions, onRowsGone: () => this.holdRows.clear() });
    const handle = ctx.dbKind === 'sqlite' ? sqliteHandle(ctx.db) : undefined;
    this.fast = handle ? new SqliteStatements(handle, this.node, ctx.config.leanHttp, (row, err) => this.dropRow(row, err)) : null;
    const takeAll = ctx.dbKind === 'postgres' ? this.takeAllPg : ctx.dbKind === 'mysql' ? this.takeAllMysql : null;
    this.batch = takeAll ? new BatchedReservations(takeAll, (inp, pre) => this.reserveWith(this.exec, inp, pre), this.onDeadlock) : null;
    this.flushMs = ctx.config.batchUpdateEnabled ? ctx.config.batchUpdateIntervalSec * 1000 : SETTLE_FLUSH_MS;
  }

  /**
   * Consume-log rows go with their charges: on a SQLite file with a writer worker, the worker writes each row and its
   * request's settlement in one transaction (LogWriter.addCharged); otherwise, when the logs are in this database, the
   * settlement flush inserts the rows in its own transaction. With LOG_SQL_DSN (another database) no transaction can
   * hold both: the rows go through the log writer and a crash may leave a charge without its row, or the reverse.
   */
  attachLogs(logs: LogWriter): void {
    this.logs = logs;
    const handle = this.fast?.handle;
    if (!handle) return;
    logs.acceptCharges(
      handle,
      {
        token: settleRowSql('settleToken'),
        user: settleRowSql('settleUser'),
        channel: settleRowSql('settleChannel'),
        journal: HOLD_JOURNAL_INSERT,
        read: 'SELECT holds FROM quota_hold_journal WHERE node = ?',
        clear: 'DELETE FROM quota_hold_journal WHERE node = ?',
      },
      (rows, charges) => charges.forEach((c, i) => this.queueCharge(c, rows[i])),
    );
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flushSettlements().catch((err) => this.ctx.log.error({ err }, 'settlement flush failed'));
    }, this.flushMs);
  }

  /** Registers this process's holds and gives back those of processes that died (services/quota-holds.ts). */
  async start(): Promise<void> {
    await this.holdNodes.start();
  }

  /**
   * Writes every queued settlement, and waits for the charges handed to the SQLite worker with their log rows.
   * Failed writes are re-queued.
   */
  async flush(): Promise<void> {
    // first: charges the worker can no longer take come back to this flush (LogWriter's orphans)
    await this.logs?.flushCharges();
    await this.flushSettlements();
  }

  /**
   * Writes the queued settlements in ONE transaction (Settlement): log rows, deltas and hold releases commit together.
   * BATCH_UPDATE_INTERVAL delays all three alike: a crash in the interval gives the reservations back and leaves no
   * row for those requests.
   */
  private async flushSettlements(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (!this.users_.size && !this.tokens_.size && !this.channels_.size && !this.releases.size && !this.logRows.length) return;
    // everything is taken in this turn, and `flushing` is set before the first await: flushes never overlap
    const released = this.releases.take();
    const rows = this.logRows;
    const users = this.users_;
    const tokens = this.tokens_;
    const channels = this.channels_;
    this.logRows = [];
    this.users_ = new Map();
    this.tokens_ = new Map();
    this.channels_ = new Map();
    const work: Settlement['work'] = [];
    // tokens before users, each by id: the order in which reservations and refunds lock rows, so that a flush and a
    // reservation (or two nodes' flushes) never wait for each other in a cycle on PostgreSQL / MySQL; the holds last
    const byId = <V>(m: Map<number, V>) => [...m].sort((a, b) => a[0] - b[0]);
    for (const [id, d] of byId(tokens)) work.push({ stmt: 'settleToken', params: [d.remain, d.used, d.at, id] });
    for (const [id, d] of byId(users)) if (d.quota || d.used || d.count) work.push({ stmt: 'settleUser', params: [d.quota, d.used, d.count, id] });
    for (const [id, used] of byId(channels)) if (used) work.push({ stmt: 'settleChannel', params: [used, id] });
    this.flushing = (async () => {
      try {
        await this.writeSettlement({ rows, work, released, isolateRows: this.flushFailed });
        this.flushFailed = false;
      } catch (err) {
        this.flushFailed = true;
        // nothing of it was written: all of it waits for the next flush
        this.logRows = rows.concat(this.logRows);
        for (const [id, d] of tokens) this.addToken(id, d.remain, d.used, d.at);
        for (const [id, d] of users) this.addUser(id, d.quota, d.used, d.count);
        for (const [id, used] of channels) this.channels_.set(id, (this.channels_.get(id) ?? 0) + used);
        for (const h of released) this.releases.add(h.userId, h.tokenId, h.user, h.token);
        this.schedule();
        throw err;
      }
    })();
    try {
      await this.flushing;
    } finally {
      this.flushing = null;
    }
  }

  private async writeSettlement(st: Settlement): Promise<void> {
    // SQLite: synchronous on the shared connection, on a turn when the writer worker is not holding the file
    for (const fast = this.fast; fast?.usable; await fast.lock.released()) if (fast.settle(st)) return;
    // one statement per table (tokens, then users, then channels, each by id), then the holds, in one transaction
    const groups = new Map<SettleStmt, unknown[][]>();
    for (const w of st.work) {
      const rows = groups.get(w.stmt);
      if (rows) rows.push(w.params);
      else groups.set(w.stmt, [w.params]);
    }
    const kind = this.ctx.dbKind;
    const holds = released(st.released);
    await retryDeadlock(
      () =>
        this.db.transaction().execute(async (trx) => {
          // the log rows first: an INSERT locks no row that a reservation or another flush waits for
          const insertRows = async () => {
            for (let i = 0; i < st.rows.length; i += LOG_ROWS_PER_INSERT) await trx.executeQuery(insertQuery(kind, st.rows.slice(i, i + LOG_ROWS_PER_INSERT)));
          };
          if (!st.isolateRows) await insertRows();
          else {
            // one savepoint per row: only the rows the database refuses are left out
            for (const row of st.rows) {
              await trx.executeQuery(CompiledQuery.raw('SAVEPOINT settle_log'));
              try {
                await trx.executeQuery(insertQuery(kind, [row]));
                await trx.executeQuery(CompiledQuery.raw('RELEASE SAVEPOINT settle_log'));
              } catch (err) {
                await trx.executeQuery(CompiledQuery.raw('ROLLBACK TO SAVEPOINT settle_log'));
                this.dropRow(row, err);
              }
            }
          }
          for (const [stmt, rows] of groups) await trx.executeQuery(settleManyQuery(kind, stmt, rows));
          for (let i = 0; i < holds.length; i += 1000) await trx.executeQuery(addHoldsQuery(kind, this.node, holds.slice(i, i + 1000)));
        }),
      this.onDeadlock,
    );
  }

  /** An isolated log row that the database refused: its charge is written without it (as a failed log insert was). */
  private dropRow(row: NewLog, err: unknown): void {
    this.ctx.log.error({ err, userId: row.user_id, tokenId: row.token_id }, 'writing a consume log row failed; its charge is written without it');
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush();
    await this.holdNodes.stop();
  }

  private addUser(id: number, quota: number, used: number, count: number): void {
    const d = this.users_.get(id);
    if (d) {
      d.quota += quota;
      d.used += used;
      d.count += count;
    } else this.users_.set(id, { quota, used, count });
  }

  private addToken(id: number, remain: number, used: number, at: number): void {
    const d = this.tokens_.get(id);
    if (d) {
      d.remain += remain;
      d.used += used;
      if (at > d.at) d.at = at;
    } else this.tokens_.set(id, { remain, used, at });
  }

  formatQuota(quota: number): string {
    if (this.ctx.options.bool('DisplayInCurrencyEnabled')) {
      return `＄${(quota / this.ctx.options.num('QuotaPerUnit', 500000)).toFixed(6)}`;
    }
    return String(quota);
  }

  /**
   * Reserves `amount` on the token (if limited) then on the user; throws QuotaError (HTTP 403) when either lacks it.
   * SQLite: group-committed at the end of the event-loop turn (SqliteStatements). PostgreSQL / MySQL: batched as they
   * come (BatchedReservations).
   */
  async reserve(inp: ReserveInput): Promise<Reservation> {
    const pre = Math.max(0, Math.trunc(inp.amount));
    if (pre === 0) {
      if (inp.cachedUserQuota <= 0) throw new QuotaError('user quota is not enough', 'insufficient_user_quota');
      return { userId: inp.userId, tokenId: inp.tokenId, tokenKey: inp.tokenKey, user: 0, token: 0, tokenUnlimited: inp.tokenUnlimited, state: 'open' };
    }
    const res = this.fast
      ? await this.reserveSqlite(this.fast, inp, pre)
      : this.batch
        ? await this.batch.add(inp, pre)
        : await this.reserveWith(this.exec, inp, pre);
    this.users.adjustQuota(inp.userId, -res.user);
    if (res.token) this.tokens.adjustRemain(inp.tokenKey, -res.token, 0);
    return res;
  }

  private readonly exec = (q: CompiledQuery) => this.db.executeQuery(q);

  /** PostgreSQL: one statement, rolled back whole by a sum that does not fit (RESERVE_MANY_PG). */
  private readonly takeAllPg: TakeAll = async (tokens, users, holds) => {
    try {
      await this.exec(
        CompiledQuery.raw(RESERVE_MANY_PG, [
          [...tokens.keys()],
          [...tokens.values()],
          [...users.keys()],
          [...users.values()],
          this.node,
          holds.map((h) => h.userId),
          holds.map((h) => h.tokenId),
          holds.map((h) => h.user),
          holds.map((h) => h.token),
        ]),
      );
      return true;
    } catch (err) {
      if ((err as { code?: unknown })?.code === PG_REFUSED) return false;
      throw err;
    }
  };

  /**
   * MySQL / MariaDB: no single statement takes several rows all or none, so a transaction: the tokens' UPDATE, then
   * the users', each by id; fewer rows changed than sums → rolled back.
   */
  private readonly takeAllMysql: TakeAll = async (tokens, users, holds) => {
    try {
      await this.db.transaction().execute(async (trx) => {
        if (tokens.size && affected(await trx.executeQuery(takeSumsMysql('tokens', 'remain_quota', tokens))) !== tokens.size) throw BATCH_SHORT;
        if (affected(await trx.executeQuery(takeSumsMysql('users', 'quota', users))) !== users.size) throw BATCH_SHORT;
        await trx.executeQuery(addHoldsQuery('mysql', this.node, holds));
      });
      for (const h of holds) this.holdRows.add(`${h.userId}:${h.tokenId}`);
      return true;
    } catch (err) {
      if (err === BATCH_SHORT) return false;
      throw err;
    }
  };

  private async reserveSqlite(fast: SqliteStatements, inp: ReserveInput, pre: number): Promise<Reservation> {
    const limitedToken = limitsToken(inp);
    const pending: PendingReservation = { pre, tokenId: inp.tokenId, userId: inp.userId, limitedToken, outcome: 0 };
    await fast.enqueue(pending, inp.overlapped === true);
    // refused while settlements handed to the SQLite worker with their log rows may still be waiting there (a busy
    // gateway's rows wait up to a second, to be written grouped): what they give back may be what is missing. Only
    // when the cached balance (which has them already) says it fits: a caller short anyway does not make the worker
    // write its rows early, request after request
    if (pending.outcome !== 0 && (pending.outcome === 1 || inp.cachedUserQuota >= pre) && this.logs?.chargesPending) {
      await this.logs.flushCharges();
      await fast.enqueue(pending, false);
    }
    const r = pending.outcome;
    if (r === 1) throw this.tokenShort(Number((fast.run.tokenRemain.get(inp.tokenId) as { remain_quota?: number } | undefined)?.remain_quota ?? 0), pre);
    if (r === 2) throw this.userShort(Number((fast.run.userQuota.get(inp.userId) as { quota?: number } | undefined)?.quota ?? 0), pre);
    return openReservation(inp, pre, limitedToken);
  }

  private tokenShort(remain: number, pre: number): QuotaError {
    return new QuotaError(`token quota is not enough, token remain quota: ${this.formatQuota(remain)}, need quota: ${this.formatQuota(pre)}`, 'pre_consume_token_quota_failed');
  }

  private userShort(quota: number, pre: number): QuotaError {
    if (quota <= 0) return new QuotaError('user quota is not enough', 'insufficient_user_quota');
    return new QuotaError(`chat pre-consumed quota failed, user quota: ${this.formatQuota(quota)}, need quota: ${this.formatQuota(pre)}`, 'insufficient_user_quota');
  }

  /**
   * PostgreSQL / MySQL: one statement. A limited token and its user go together (reserveBoth): before, the token was
   * reserved, then the user, and a short user's token reservation was given back by a third statement — a connection
   * lost in between kept the token charged for a request that never ran. Now a refusal changes nothing.
   */
  private async reserveWith(exec: (q: CompiledQuery) => Promise<QueryResult<any>>, inp: ReserveInput, pre: number, retried = false): Promise<Reservation> {
    const limitedToken = limitsToken(inp);
    const mysql = this.ctx.dbKind === 'mysql';
    if (mysql) await this.ensureHoldRow(exec, inp.userId, inp.tokenId);
    // MySQL: a refusal may also be a hold row gone (another node took this one for dead): create it, try once more
    const again = async () => mysql && !retried && (await this.lostHoldRow(exec, inp.userId, inp.tokenId));
    if (!limitedToken) {
      const r = await retryDeadlock(() => exec(this.sql.reserveUserHeld([pre, inp.userId, this.node, inp.tokenId])), this.onDeadlock);
      if (affected(r) === (mysql ? 2 : 1)) return openReservation(inp, pre, false);
      if (await again()) return this.reserveWith(exec, inp, pre, true);
      throw this.userShort(await this.userQuotaOf(exec, inp.userId), pre);
    }
    let taken: boolean;
    try {
      const r = await retryDeadlock(() => exec(this.sql.reserveBoth([pre, inp.tokenId, inp.userId, this.node])), this.onDeadlock);
      taken = mysql ? affected(r) === 3 : Number((r.rows[0] as { reserved?: unknown } | undefined)?.reserved) === 1;
    } catch (err) {
      if ((err as { code?: unknown })?.code !== PG_REFUSED) throw err;
      throw this.userShort(await this.userQuotaOf(exec, inp.userId), pre);
    }
    if (taken) return openReservation(inp, pre, true);
    if (await again()) return this.reserveWith(exec, inp, pre, true);
    // refused and nothing changed: name the side that was short (token first, as the reservation order)
    const row = (await exec(this.sql.tokenRemain([inp.tokenId]))).rows[0] as { remain_quota?: number } | undefined;
    const remain = Number(row?.remain_quota ?? 0);
    if (remain < pre) throw this.tokenShort(remain, pre);
    throw this.userShort(await this.userQuotaOf(exec, inp.userId), pre);
  }

  /**
   * MySQL: the hold's row of a (user, token) pair, created once with zero amounts, so that a reservation can update it
   * in the same multi-table UPDATE as the quota (MySQL has no single statement that updates one table and upserts
   * another).
   */
  private async ensureHoldRow(exec: (q: CompiledQuery) => Promise<QueryResult<any>>, userId: number, tokenId: number): Promise<void> {
    const k = `${userId}:${tokenId}`;
    if (this.holdRows.has(k)) return;
    const q = CompiledQuery.raw('INSERT IGNORE INTO quota_holds (node, user_id, token_id, user_quota, token_quota) VALUES (?, ?, ?, 0, 0)', [this.node, userId, tokenId]);
    await retryDeadlock(() => exec(q), this.onDeadlock);
    this.holdRows.add(k);
  }

  /** MySQL: the pair's hold row is not there (forgotten, to be created again). */
  private async lostHoldRow(exec: (q: CompiledQuery) => Promise<QueryResult<any>>, userId: number, tokenId: number): Promise<boolean> {
    const q = CompiledQuery.raw('SELECT 1 AS x FROM quota_holds WHERE node = ? AND user_id = ? AND token_id = ?', [this.node, userId, tokenId]);
    if ((await exec(q)).rows.length) return false;
    this.holdRows.delete(`${userId}:${tokenId}`);
    return true;
  }

  private async userQuotaOf(exec: (q: CompiledQuery) => Promise<QueryResult<any>>, userId: number): Promise<number> {
    const row = (await exec(this.sql.userQuota([userId]))).rows[0] as { quota?: number } | undefined;
    return Number(row?.quota ?? 0);
  }

  /** Returns the whole reservation (request failed before anything was delivered). Idempotent. */
  async refund(res: Reservation): Promise<void> {
    if (res.state !== 'open') return;
    res.state = 'closed';
    const fast = this.fast;
    // token and user given back together (one transaction), the token's row first as everywhere
    if (fast?.usable) fast.lock.hold(() => fast.refund(res));
    else {
      await retryDeadlock(
        () =>
          this.db.transaction().execute(async (trx) => {
            if (res.token) await trx.executeQuery(this.sql.refundToken([res.token, res.tokenId]));
            if (res.user) await trx.executeQuery(this.sql.refundUser([res.user, res.userId]));
            if (res.user || res.token) {
              await trx.executeQuery(addHoldsQuery(this.ctx.dbKind, this.node, [{ userId: res.userId, tokenId: res.tokenId, user: -res.user, token: -res.token }]));
            }
          }),
        this.onDeadlock,
      );
    }
    this.users.adjustQuota(res.userId, res.user);
    if (res.token) this.tokens.adjustRemain(res.tokenKey, res.token, 0);
  }

  /**
   * Charges the final amount: `quota - reserved` and the usage counters exactly once (one-shot state), with the
   * request's consume-log row when there is one: both are written by the next flush in one transaction (or by the
   * SQLite worker, in the row's transaction), together with the release of the request's hold.
   */
  settle(res: Reservation, inp: SettleInput, row?: NewLog): boolean {
    if (res.state !== 'open') return false;
    res.state = 'closed';
    const quota = Math.max(0, Math.trunc(inp.quota));
    const used = inp.countRequest ? quota : 0;
    const charge: Charge = {
      node: this.node,
      userId: res.userId,
      tokenId: res.tokenId > 0 ? res.tokenId : 0,
      quota: quota - res.user,
      remain: res.tokenId > 0 && !res.tokenUnlimited ? quota - res.token : 0,
      used,
      count: inp.countRequest ? 1 : 0,
      at: Math.floor(Date.now() / 1000),
      channelId: used ? inp.channelId : 0,
      holdUser: res.user,
      holdToken: res.token,
    };
    this.users.adjustQuota(res.userId, -charge.quota);
    if (charge.tokenId) this.tokens.adjustRemain(res.tokenKey, -charge.remain, used);
    if (!row || !this.logs?.addCharged(row, charge)) this.queueCharge(charge, row);
    return true;
  }

  /** Queues a charge (and its log row) for the next settlement flush. */
  private queueCharge(c: Charge, row?: NewLog): void {
    this.addUser(c.userId, c.quota, c.used, c.count);
    if (c.tokenId) this.addToken(c.tokenId, c.remain, c.used, c.at);
    if (c.channelId && c.used) this.channels_.set(c.channelId, (this.channels_.get(c.channelId) ?? 0) + c.used);
    if (c.holdUser || c.holdToken) this.releases.add(c.userId, c.tokenId, c.holdUser, c.holdToken);
    if (row) {
      // the logs in this database: the row commits with its charge; elsewhere (LOG_SQL_DSN) it cannot
      if (this.ctx.logDb !== this.ctx.db) this.logs?.add(row);
      // a database down for long: like the log writer's queue, bounded (the charges are kept, merged per row)
      else if (this.logRows.length >= MAX_LOG_ROWS) this.ctx.log.error('settlement queue full, dropping a consume log row');
      else this.logRows.push(row);
    }
    this.schedule();
  }
}
