// PostgreSQL / MySQL reservations: one at a time in one statement (a limited token and its user together), or batched
// as they come (BatchedReservations), with the node's hold written in the same statement or transaction.
import { CompiledQuery, type Kysely, type QueryResult } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { addHoldsQuery, HoldDeltas, type HoldChange } from '../quota-holds.js';
import { RESERVE_BATCH_MAX } from './sqlite-group-commit.js';
import { affected, PG_REFUSED, RESERVE_MANY_PG, retryDeadlock, statements, takeSumsMysql } from './sql.js';
import { limitsToken, openReservation, tokenShort, userShort, type Reservation, type ReserveInput } from './types.js';

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
export type TakeAll = (
  tokens: Map<number, number>,
  users: Map<number, number>,
  holds: HoldChange[],
) => Promise<boolean>;

/**
 * PostgreSQL / MySQL: reservations batched as they come: one goes at once when none is in flight; those that arrive
 * meanwhile wait for it and then go together, up to RESERVE_BATCH_MAX, taking each token's and each user's summed
 * amount at once (`takeAll`) instead of one round trip and one server-side statement each. So an idle gateway adds
 * no wait, and a loaded one sends one batch per round trip. Whoever fits a sum fits each of its parts one after the
 * other, so a batch taken is what reserving them one by one would have done; a refused one (nothing taken) is then
 * reserved one by one, which decides exactly who is short.
 * Every reservation goes this way, whether its request waits for it or not (ReserveInput.overlapped): under load a
 * waiting one waits for the batch in flight before its own, and in exchange the database runs one statement per
 * batch, which with every token short of the overlap threshold served more requests at lower latencies than sending
 * each at once, on both databases: docs/perf/postgres-mysql-batching.md.
 */
export class BatchedReservations {
  private queue: PendingBatched[] = [];
  private inFlight = 0;

  constructor(
    private readonly takeAll: TakeAll,
    /** one reservation on its own (PgMysqlReservations.reserveWith) */
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

/** The PostgreSQL / MySQL reservation statements of one Billing (its node's holds). */
export class PgMysqlReservations {
  private readonly db: Kysely<Database>;
  /** MySQL: (user, token) pairs whose hold row exists (reserveUserHeld and reserveBoth update it in place) */
  readonly holdRows = new Set<string>();

  constructor(
    private readonly ctx: AppContext,
    private readonly node: string,
    private readonly sql: ReturnType<typeof statements>,
    private readonly onDeadlock: (err: unknown) => void,
  ) {
    this.db = ctx.db;
  }

  /** PostgreSQL and MySQL batch their reservations as they come; null on SQLite's Kysely path. */
  batched(): BatchedReservations | null {
    const takeAll =
      this.ctx.dbKind === 'postgres' ? this.takeAllPg : this.ctx.dbKind === 'mysql' ? this.takeAllMysql : null;
    return takeAll
      ? new BatchedReservations(takeAll, (inp, pre) => this.reserveWith(this.exec, inp, pre), this.onDeadlock)
      : null;
  }

  /** One reservation on its own. */
  reserve(inp: ReserveInput, pre: number): Promise<Reservation> {
    return this.reserveWith(this.exec, inp, pre);
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
        if (
          tokens.size &&
          affected(await trx.executeQuery(takeSumsMysql('tokens', 'remain_quota', tokens))) !== tokens.size
        )
          throw BATCH_SHORT;
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

  /**
   * PostgreSQL / MySQL: one statement. A limited token and its user go together (reserveBoth): before, the token was
   * reserved, then the user, and a short user's token reservation was given back by a third statement — a connection
   * lost in between kept the token charged for a request that never ran. Now a refusal changes nothing.
   */
  private async reserveWith(
    exec: (q: CompiledQuery) => Promise<QueryResult<any>>,
    inp: ReserveInput,
    pre: number,
    retried = false,
  ): Promise<Reservation> {
    const limitedToken = limitsToken(inp);
    const mysql = this.ctx.dbKind === 'mysql';
    if (mysql) await this.ensureHoldRow(exec, inp.userId, inp.tokenId);
    // MySQL: a refusal may also be a hold row gone (another node took this one for dead): create it, try once more
    const again = async () => mysql && !retried && (await this.lostHoldRow(exec, inp.userId, inp.tokenId));
    if (!limitedToken) {
      const r = await retryDeadlock(
        () => exec(this.sql.reserveUserHeld([pre, inp.userId, this.node, inp.tokenId])),
        this.onDeadlock,
      );
      if (affected(r) === (mysql ? 2 : 1)) return openReservation(inp, pre, false);
      if (await again()) return this.reserveWith(exec, inp, pre, true);
      throw userShort(this.ctx.options, await this.userQuotaOf(exec, inp.userId), pre);
    }
    let taken: boolean;
    try {
      const r = await retryDeadlock(
        () => exec(this.sql.reserveBoth([pre, inp.tokenId, inp.userId, this.node])),
        this.onDeadlock,
      );
      taken = mysql ? affected(r) === 3 : Number((r.rows[0] as { reserved?: unknown } | undefined)?.reserved) === 1;
    } catch (err) {
      if ((err as { code?: unknown })?.code !== PG_REFUSED) throw err;
      throw userShort(this.ctx.options, await this.userQuotaOf(exec, inp.userId), pre);
    }
    if (taken) return openReservation(inp, pre, true);
    if (await again()) return this.reserveWith(exec, inp, pre, true);
    // refused and nothing changed: name the side that was short (token first, as the reservation order)
    const row = (await exec(this.sql.tokenRemain([inp.tokenId]))).rows[0] as { remain_quota?: number } | undefined;
    const remain = Number(row?.remain_quota ?? 0);
    if (remain < pre) throw tokenShort(this.ctx.options, remain, pre);
    throw userShort(this.ctx.options, await this.userQuotaOf(exec, inp.userId), pre);
  }

  /**
   * MySQL: the hold's row of a (user, token) pair, created once with zero amounts, so that a reservation can update it
   * in the same multi-table UPDATE as the quota (MySQL has no single statement that updates one table and upserts
   * another).
   */
  private async ensureHoldRow(
    exec: (q: CompiledQuery) => Promise<QueryResult<any>>,
    userId: number,
    tokenId: number,
  ): Promise<void> {
    const k = `${userId}:${tokenId}`;
    if (this.holdRows.has(k)) return;
    const q = CompiledQuery.raw(
      'INSERT IGNORE INTO quota_holds (node, user_id, token_id, user_quota, token_quota) VALUES (?, ?, ?, 0, 0)',
      [this.node, userId, tokenId],
    );
    await retryDeadlock(() => exec(q), this.onDeadlock);
    this.holdRows.add(k);
  }

  /** MySQL: the pair's hold row is not there (forgotten, to be created again). */
  private async lostHoldRow(
    exec: (q: CompiledQuery) => Promise<QueryResult<any>>,
    userId: number,
    tokenId: number,
  ): Promise<boolean> {
    const q = CompiledQuery.raw('SELECT 1 AS x FROM quota_holds WHERE node = ? AND user_id = ? AND token_id = ?', [
      this.node,
      userId,
      tokenId,
    ]);
    if ((await exec(q)).rows.length) return false;
    this.holdRows.delete(`${userId}:${tokenId}`);
    return true;
  }

  private async userQuotaOf(exec: (q: CompiledQuery) => Promise<QueryResult<any>>, userId: number): Promise<number> {
    const row = (await exec(this.sql.userQuota([userId]))).rows[0] as { quota?: number } | undefined;
    return Number(row?.quota ?? 0);
  }
}
