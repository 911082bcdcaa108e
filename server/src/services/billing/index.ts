// Quota reservation and settlement (new-api-compat.md §5.2, §5.3).
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
// relay/pipeline/reserve.ts); the reservation is still taken, and its refusal still refuses the request.
import { CompiledQuery, type Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import { sqliteHandle } from '../../db/connect.js';
import type { Database, NewLog } from '../../db/schema.js';
import { insertQuery, type Charge, type LogWriter } from '../log-writer.js';
import {
  addHoldsQuery,
  HOLD_JOURNAL_INSERT,
  HoldDeltas,
  HoldNodes,
  newNodeId,
  type HoldNodeOptions,
} from '../quota-holds.js';
import type { TokenCache } from '../cache/token-cache.js';
import type { UserCache } from '../cache/user-cache.js';
import { BatchedReservations, PgMysqlReservations } from './batched-reservations.js';
import { PlanLedger, planRefusal, PlanShort, type PlanHold } from './plan-ledger.js';
import { SqliteStatements, type PendingReservation } from './sqlite-group-commit.js';
import { retryDeadlock, settleManyQuery, settleRowSql, statements, type SettleStmt } from './sql.js';
import {
  formatQuota,
  limitsToken,
  openReservation,
  QuotaError,
  released,
  tokenShort,
  userShort,
  type Reservation,
  type ReserveInput,
  type SettleInput,
  type Settlement,
} from './types.js';

export { QuotaError, type Reservation, type ReserveInput, type SettleInput } from './types.js';

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

export class Billing {
  private readonly db: Kysely<Database>;
  private readonly sql: ReturnType<typeof statements>;
  private readonly fast: SqliteStatements | null;
  /** PostgreSQL / MySQL: reservations, batched as they come */
  private readonly batch: BatchedReservations | null;
  /** PostgreSQL / MySQL: the reservation statements (one at a time, or a batch's) */
  private readonly pgMysql: PgMysqlReservations;
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
    this.holdNodes = new HoldNodes(ctx, this.node, { ...holdOptions, onRowsGone: () => this.pgMysql.holdRows.clear() });
    const handle = ctx.dbKind === 'sqlite' ? sqliteHandle(ctx.db) : undefined;
    this.fast = handle ? new SqliteStatements(handle, this.node, (row, err) => this.dropRow(row, err)) : null;
    this.pgMysql = new PgMysqlReservations(ctx, this.node, this.sql, this.onDeadlock);
    this.batch = this.pgMysql.batched();
    this.flushMs = ctx.config.batchUpdateEnabled ? ctx.config.batchUpdateIntervalSec * 1000 : SETTLE_FLUSH_MS;
    this.plans = new PlanLedger(ctx, this.node, this.onDeadlock, () => this.logs);
  }

  /** requests billed on subscriptions (services/billing/plan-ledger.ts) */
  private readonly plans: PlanLedger;

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
    await this.plans.flush();
  }

  /**
   * Writes the queued settlements in ONE transaction (Settlement): log rows, deltas and hold releases commit together.
   * BATCH_UPDATE_INTERVAL delays all three alike: a crash in the interval gives the reservations back and leaves no
   * row for those requests.
   */
  private async flushSettlements(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (!this.users_.size && !this.tokens_.size && !this.channels_.size && !this.releases.size && !this.logRows.length)
      return;
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
    for (const [id, d] of byId(users))
      if (d.quota || d.used || d.count) work.push({ stmt: 'settleUser', params: [d.quota, d.used, d.count, id] });
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
            for (let i = 0; i < st.rows.length; i += LOG_ROWS_PER_INSERT)
              await trx.executeQuery(insertQuery(kind, st.rows.slice(i, i + LOG_ROWS_PER_INSERT)));
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
          for (let i = 0; i < holds.length; i += 1000)
            await trx.executeQuery(addHoldsQuery(kind, this.node, holds.slice(i, i + 1000)));
        }),
      this.onDeadlock,
    );
  }

  /** An isolated log row that the database refused: its charge is written without it (as a failed log insert was). */
  private dropRow(row: NewLog, err: unknown): void {
    this.ctx.log.error(
      { err, userId: row.user_id, tokenId: row.token_id },
      'writing a consume log row failed; its charge is written without it',
    );
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.plans.stop();
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
    return formatQuota(this.ctx.options, quota);
  }

  /**
   * Reserves `amount` on the token (if limited) then on the user; throws QuotaError (HTTP 403) when either lacks it.
   * SQLite: group-committed at the end of the event-loop turn (SqliteStatements). PostgreSQL / MySQL: batched as they
   * come (BatchedReservations).
   */
  async reserve(inp: ReserveInput): Promise<Reservation> {
    const pre = Math.max(0, Math.trunc(inp.amount));
    if (inp.plan) return this.reserveRouted(inp, pre);
    return this.reserveWallet(inp, pre);
  }

  /**
   * A user with subscriptions (ReserveInput.plan): tried in their order before the wallet (subscription_first), or
   * only them (subscription_only, refused naming the window and its reset), or after the wallet refused the user's
   * quota (wallet_first). A plan reservation takes at least 1 unit, as new-api's.
   */
  private async reserveRouted(inp: ReserveInput, pre: number): Promise<Reservation> {
    const route = inp.plan!;
    const tryPlans = async (): Promise<Reservation | PlanShort[]> => {
      const shorts: PlanShort[] = [];
      for (const entry of route.subs) {
        const r = await this.plans.reserve(entry, route.zone, inp, Math.max(1, pre));
        if (!(r instanceof PlanShort)) {
          if (r.token) this.tokens.adjustRemain(inp.tokenKey, -r.token, 0);
          return r;
        }
        shorts.push(r);
      }
      return shorts;
    };
    if (route.preference === 'wallet_first') {
      try {
        return await this.reserveWallet(inp, pre);
      } catch (e) {
        if (!(e instanceof QuotaError) || e.code !== 'insufficient_user_quota') throw e;
        const r = await tryPlans();
        if (Array.isArray(r)) throw e;
        return r;
      }
    }
    const r = await tryPlans();
    if (!Array.isArray(r)) return r;
    if (route.preference === 'subscription_only') throw planRefusal(r, route.zone);
    return this.reserveWallet(inp, pre);
  }

  private async reserveWallet(inp: ReserveInput, pre: number): Promise<Reservation> {
    if (pre === 0) {
      if (inp.cachedUserQuota <= 0) throw new QuotaError('user quota is not enough', 'insufficient_user_quota');
      return {
        userId: inp.userId,
        tokenId: inp.tokenId,
        tokenKey: inp.tokenKey,
        user: 0,
        token: 0,
        tokenUnlimited: inp.tokenUnlimited,
        state: 'open',
      };
    }
    const res = this.fast
      ? await this.reserveSqlite(this.fast, inp, pre)
      : this.batch
        ? await this.batch.add(inp, pre)
        : await this.pgMysql.reserve(inp, pre);
    this.users.adjustQuota(inp.userId, -res.user);
    if (res.token) this.tokens.adjustRemain(inp.tokenKey, -res.token, 0);
    return res;
  }

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
    if (r === 1)
      throw tokenShort(
        this.ctx.options,
        Number((fast.run.tokenRemain.get(inp.tokenId) as { remain_quota?: number } | undefined)?.remain_quota ?? 0),
        pre,
      );
    if (r === 2)
      throw userShort(
        this.ctx.options,
        Number((fast.run.userQuota.get(inp.userId) as { quota?: number } | undefined)?.quota ?? 0),
        pre,
      );
    return openReservation(inp, pre, limitedToken);
  }

  /**
   * A realtime session's reservation grows by `amount` (relay/realtime/): one more conditional reservation on the same
   * user and token, merged into `res`, so the session still settles once. Throws QuotaError when it does not fit.
   */
  async grow(res: Reservation, inp: ReserveInput): Promise<void> {
    if (res.state !== 'open') throw new Error('the reservation is closed');
    if (res.plan) throw new Error('a reservation on a plan does not grow');
    const more = await this.reserve(inp);
    res.user += more.user;
    res.token += more.token;
  }

  /**
   * Part of an open reservation stops being this node's hold (docs/decisions/0014-realtime-billing.md): the balance
   * stays reduced by it, and a crash no longer gives it back; the settlement releases only the rest. A realtime
   * session keeps the price of each completed turn, so a gateway killed mid-session loses none of them.
   */
  async keep(res: Reservation, user: number, token: number): Promise<void> {
    const kept = (res.kept ??= { user: 0, token: 0 });
    const u = Math.max(0, Math.min(Math.trunc(user), res.user - kept.user));
    const t = Math.max(0, Math.min(Math.trunc(token), res.token - kept.token));
    if (res.state !== 'open' || (u === 0 && t === 0)) return;
    kept.user += u;
    kept.token += t;
    const change = [{ userId: res.userId, tokenId: res.tokenId, user: -u, token: -t }];
    const fast = this.fast;
    if (fast?.usable) return fast.lock.hold(() => fast.releaseHolds(change));
    await retryDeadlock(
      () => this.db.executeQuery(addHoldsQuery(this.ctx.dbKind, this.node, change)).then(() => undefined),
      this.onDeadlock,
    );
  }

  /** Returns the whole reservation (request failed before anything was delivered). Idempotent. */
  async refund(res: Reservation): Promise<void> {
    if (res.state !== 'open') return;
    // what was kept is owed (a realtime session's completed turns): such a reservation is settled
    if (res.kept) throw new Error('a reservation with a kept part is settled, not refunded');
    res.state = 'closed';
    if (res.plan) {
      await this.plans.refund(res as Reservation & { plan: PlanHold });
      if (res.token) this.tokens.adjustRemain(res.tokenKey, res.token, 0);
      return;
    }
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
              await trx.executeQuery(
                addHoldsQuery(this.ctx.dbKind, this.node, [
                  { userId: res.userId, tokenId: res.tokenId, user: -res.user, token: -res.token },
                ]),
              );
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
    if (res.plan) {
      if (res.tokenId > 0) this.tokens.adjustRemain(res.tokenKey, res.tokenUnlimited ? 0 : res.token - quota, used);
      this.plans.settle(res as Reservation & { plan: PlanHold }, quota, inp.countRequest, inp.channelId, row);
      return true;
    }
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
      holdUser: res.user - (res.kept?.user ?? 0),
      holdToken: res.token - (res.kept?.token ?? 0),
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
      else if (this.logRows.length >= MAX_LOG_ROWS)
        this.ctx.log.error('settlement queue full, dropping a consume log row');
      else this.logRows.push(row);
    }
    this.schedule();
  }
}
