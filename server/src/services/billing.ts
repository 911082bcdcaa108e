// Quota reservation and settlement (facts §5.2, §5.3).
//
// Guarantee: no overdraft under concurrency. A reservation is one atomic conditional UPDATE in the database
// (`quota = quota - :pre WHERE id = :id AND quota >= :pre`, same for a limited token's remain_quota), so N parallel
// requests can never take the balance below zero through their reservations; a final charge larger than its
// reservation can overshoot by at most that difference. Settlement applies `final - reserved` exactly once per
// request (the Reservation object is a one-shot state machine), so retries, disconnects and errors can neither lose
// nor double a charge.
//
// new-api's "trusted shortcut" (reserve nothing when the balance exceeds 100 × pre) is deliberately NOT kept: it
// reads a cached balance and reserves nothing, so concurrent requests could overdraw by any amount. Reserving
// always costs one indexed UPDATE, which the request pays before the upstream call either way.
import { CompiledQuery, type Kysely } from 'kysely';
import type { AppContext } from '../context.js';
import type { Database } from '../db/schema.js';
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

export interface SettleInput {
  quota: number;
  channelId: number;
  /** false when nothing was consumed (prompt + completion == 0): counters stay unchanged, as in new-api */
  countRequest: boolean;
}

type Stmt = (params: unknown[]) => CompiledQuery;

function statements(kind: string) {
  const q = (text: string): Stmt => {
    let i = 0;
    const compiled = kind === 'postgres' ? text.replace(/\?/g, () => `$${++i}`) : text;
    return (params) => CompiledQuery.raw(compiled, params);
  };
  return {
    reserveUser: q('UPDATE users SET quota = quota - ? WHERE id = ? AND quota >= ?'),
    reserveToken: q('UPDATE tokens SET remain_quota = remain_quota - ? WHERE id = ? AND remain_quota >= ?'),
    refundUser: q('UPDATE users SET quota = quota + ? WHERE id = ?'),
    refundToken: q('UPDATE tokens SET remain_quota = remain_quota + ? WHERE id = ?'),
    settleUser: q('UPDATE users SET quota = quota - ?, used_quota = used_quota + ?, request_count = request_count + ? WHERE id = ?'),
    settleToken: q('UPDATE tokens SET remain_quota = remain_quota - ?, used_quota = used_quota + ?, accessed_time = ? WHERE id = ?'),
    settleChannel: q('UPDATE channels SET used_quota = used_quota + ? WHERE id = ?'),
  };
}

const affected = (r: { numAffectedRows?: bigint; numUpdatedOrDeletedRows?: bigint }) => Number(r.numAffectedRows ?? r.numUpdatedOrDeletedRows ?? 0);

export class Billing {
  private readonly db: Kysely<Database>;
  private readonly sql: ReturnType<typeof statements>;

  constructor(
    private readonly ctx: AppContext,
    private readonly tokens: TokenCache,
    private readonly users: UserCache,
  ) {
    this.db = ctx.db;
    this.sql = statements(ctx.dbKind);
  }

  formatQuota(quota: number): string {
    if (this.ctx.options.bool('DisplayInCurrencyEnabled')) {
      return `＄${(quota / this.ctx.options.num('QuotaPerUnit', 500000)).toFixed(6)}`;
    }
    return String(quota);
  }

  private async userQuota(id: number): Promise<number> {
    const row = await this.db.selectFrom('users').select('quota').where('id', '=', id).executeTakeFirst();
    return Number(row?.quota ?? 0);
  }

  /** Reserves `amount` on the token (if limited) then on the user; throws QuotaError (HTTP 403) when either lacks it. */
  async reserve(inp: ReserveInput): Promise<Reservation> {
    const pre = Math.max(0, Math.trunc(inp.amount));
    const limitedToken = inp.tokenId > 0 && !inp.tokenUnlimited;
    if (pre === 0) {
      if (inp.cachedUserQuota <= 0) throw new QuotaError('user quota is not enough', 'insufficient_user_quota');
      return { userId: inp.userId, tokenId: inp.tokenId, tokenKey: inp.tokenKey, user: 0, token: 0, tokenUnlimited: inp.tokenUnlimited, state: 'open' };
    }
    if (limitedToken) {
      const r = await this.db.executeQuery(this.sql.reserveToken([pre, inp.tokenId, pre]));
      if (affected(r) !== 1) {
        const row = await this.db.selectFrom('tokens').select('remain_quota').where('id', '=', inp.tokenId).executeTakeFirst();
        throw new QuotaError(
          `token quota is not enough, token remain quota: ${this.formatQuota(Number(row?.remain_quota ?? 0))}, need quota: ${this.formatQuota(pre)}`,
          'pre_consume_token_quota_failed',
        );
      }
    }
    const r = await this.db.executeQuery(this.sql.reserveUser([pre, inp.userId, pre]));
    if (affected(r) !== 1) {
      if (limitedToken) await this.db.executeQuery(this.sql.refundToken([pre, inp.tokenId]));
      const quota = await this.userQuota(inp.userId);
      if (quota <= 0) throw new QuotaError('user quota is not enough', 'insufficient_user_quota');
      throw new QuotaError(
        `chat pre-consumed quota failed, user quota: ${this.formatQuota(quota)}, need quota: ${this.formatQuota(pre)}`,
        'insufficient_user_quota',
      );
    }
    this.users.adjustQuota(inp.userId, -pre);
    if (limitedToken) this.tokens.adjustRemain(inp.tokenKey, -pre, 0);
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

  /** Returns the whole reservation (request failed before anything was delivered). Idempotent. */
  async refund(res: Reservation): Promise<void> {
    if (res.state !== 'open') return;
    res.state = 'closed';
    if (res.user) await this.db.executeQuery(this.sql.refundUser([res.user, res.userId]));
    if (res.token) await this.db.executeQuery(this.sql.refundToken([res.token, res.tokenId]));
    this.users.adjustQuota(res.userId, res.user);
    if (res.token) this.tokens.adjustRemain(res.tokenKey, res.token, 0);
  }

  /** Charges the final amount: applies `quota - reserved` and the usage counters exactly once. */
  async settle(res: Reservation, inp: SettleInput): Promise<boolean> {
    if (res.state !== 'open') return false;
    res.state = 'closed';
    const quota = Math.max(0, Math.trunc(inp.quota));
    const userDelta = quota - res.user;
    const count = inp.countRequest ? 1 : 0;
    const used = inp.countRequest ? quota : 0;
    await this.db.executeQuery(this.sql.settleUser([userDelta, used, count, res.userId]));
    this.users.adjustQuota(res.userId, -userDelta);
    if (res.tokenId > 0) {
      const tokenDelta = res.tokenUnlimited ? 0 : quota - res.token;
      await this.db.executeQuery(this.sql.settleToken([tokenDelta, used, Math.floor(Date.now() / 1000), res.tokenId]));
      this.tokens.adjustRemain(res.tokenKey, -tokenDelta, used);
    }
    if (used && inp.channelId) await this.db.executeQuery(this.sql.settleChannel([used, inp.channelId]));
    return true;
  }
}
