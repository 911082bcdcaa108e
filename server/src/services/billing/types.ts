// The values the billing modules pass between them: a reservation, its input, a settlement, and the quota errors
// a refused reservation throws (the caller's HTTP 403).
import type { NewLog } from '../../db/schema.js';
import type { OptionStore } from '../options.js';
import type { HoldChange } from '../quota-holds.js';
import type { PlanRoute } from '../subscriptions/active.js';
import type { PlanHold } from './plan-ledger.js';
import type { SettleStmt } from './sql.js';

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
   * The request does not wait for this reservation before its upstream call (relay/pipeline/reserve.ts, overlapsReservation): on
   * SQLite it joins the turn's group commit without hastening it (see RESERVE_BATCH). PostgreSQL / MySQL batch every
   * reservation the same way (BatchedReservations).
   */
  overlapped?: boolean;
  /** the user's subscriptions to try before or after the wallet, by their preference (services/billing/plan-ledger.ts) */
  plan?: PlanRoute | null;
}

export interface Reservation {
  readonly userId: number;
  readonly tokenId: number;
  readonly tokenKey: string;
  /** reserved on the user (a realtime session's grows: Billing.grow) */
  user: number;
  /** reserved on the token (0 when unlimited or playground) */
  token: number;
  readonly tokenUnlimited: boolean;
  state: 'open' | 'closed';
  /**
   * the part of `user` / `token` no longer recorded as this node's hold (Billing.keep: a realtime session's completed
   * turns), so a crash does not give it back; such a reservation is settled, never refunded
   */
  kept?: { user: number; token: number };
  /** billed on a subscription's windows instead of the user's quota (`user` is then 0) */
  plan?: PlanHold;
}

/** A reservation taken: `pre` on the user, and on the token when it is limited. */
export function openReservation(inp: ReserveInput, pre: number, limitedToken: boolean): Reservation {
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

/**
 * What one settlement flush writes, in ONE transaction: the consume-log rows of the requests it settles (when the logs
 * are in the same database and no SQLite worker takes them with their charges), the deltas (tokens, users, channels,
 * each by id) and the release of those requests' holds. So a crash leaves each request either settled, logged and
 * released, or none of it (its hold is then given back by the recovery): its quota and its log row always agree.
 */
export interface Settlement {
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
export function released(rows: HoldChange[]): HoldChange[] {
  return rows.map((h) => ({ ...h, user: -h.user, token: -h.token }));
}

/** The request's token has a quota of its own to reserve on (not unlimited, not the playground's none). */
export function limitsToken(inp: ReserveInput): boolean {
  return inp.tokenId > 0 && !inp.tokenUnlimited;
}

/** A quota amount as new-api shows it in messages: in currency units when DisplayInCurrencyEnabled. */
export function formatQuota(options: OptionStore, quota: number): string {
  if (options.bool('DisplayInCurrencyEnabled')) {
    return `＄${(quota / options.num('QuotaPerUnit', 500000)).toFixed(6)}`;
  }
  return String(quota);
}

/** The refusal of a reservation whose token was short. */
export function tokenShort(options: OptionStore, remain: number, pre: number): QuotaError {
  return new QuotaError(
    `token quota is not enough, token remain quota: ${formatQuota(options, remain)}, need quota: ${formatQuota(options, pre)}`,
    'pre_consume_token_quota_failed',
  );
}

/** The refusal of a reservation whose user was short. */
export function userShort(options: OptionStore, quota: number, pre: number): QuotaError {
  if (quota <= 0) return new QuotaError('user quota is not enough', 'insufficient_user_quota');
  return new QuotaError(
    `chat pre-consumed quota failed, user quota: ${formatQuota(options, quota)}, need quota: ${formatQuota(options, pre)}`,
    'insufficient_user_quota',
  );
}
