// Plan billing (docs/decisions/0015-subscription-plans.md, "Reservation", "Settlement and refunds go back to the
// source", "Crash recovery"): a request billed on a subscription reserves on every window of its usage row at once
// (one conditional UPDATE), and on its token as a wallet request does, in one transaction with the node's holds; its
// settlement corrects each window only while the window is still in the reservation's period, and is written with its
// log row, the token's, user's and channel's counters and the release of its holds in one transaction (queued and
// flushed together like the wallet's). users.quota is never touched. Not batched with the wallet's statements: plan
// requests pay one transaction per reservation.
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database, NewLog } from '../../db/schema.js';
import { insertQuery, type LogWriter } from '../log-writer.js';
import { addHoldsQuery } from '../quota-holds.js';
import type { PlanRoute } from '../subscriptions/active.js';
import { newApiMainState } from '../subscriptions/active.js';
import { applyCharge, chargeFor, newApiNextResetTime, type Slot, type WindowCharge } from '../subscriptions/windows.js';
import {
  addPlanHolds,
  correctWindows,
  ensureUsageRow,
  pruneZeroPlanHolds,
  readUsage,
  reserveWindows,
} from './plan-sql.js';
import { retryDeadlock, settleManyQuery, statements } from './sql.js';
import { limitsToken, QuotaError, tokenShort, type Reservation, type ReserveInput } from './types.js';

const FLUSH_MS = 50;

/** What a plan reservation holds on its subscription. */
export interface PlanHold {
  subscriptionId: number;
  planId: number;
  title: string;
  /** reserved on every slot of `slots` */
  pre: number;
  slots: WindowCharge['slots'];
  /** new-api's next_reset_time for the `main` period charged (mirrored into user_subscriptions) */
  nextReset: number;
}

/** A subscription that could not take the reservation: the windows without room, and when the last of them resets. */
export class PlanShort {
  constructor(
    readonly slot: Slot | null,
    readonly resetsAt: number,
    readonly rollingSeconds: number,
    /** the subscription's end: a window that resets only then does not reset */
    readonly end: number,
  ) {}
}

class TokenShortSignal {
  constructor(readonly remain: number) {}
}

interface QueuedCharge {
  res: Reservation & { plan: PlanHold };
  quota: number;
  used: number;
  count: number;
  channelId: number;
  at: number;
  row?: NewLog;
}

export class PlanLedger {
  private readonly db: Kysely<Database>;
  private readonly sql: ReturnType<typeof statements>;
  private queue: QueuedCharge[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | null = null;

  constructor(
    private readonly ctx: AppContext,
    private readonly node: string,
    private readonly onDeadlock: (err: unknown) => void,
    private readonly logs: () => LogWriter | null,
  ) {
    this.db = ctx.db;
    this.sql = statements(ctx.dbKind);
  }

  /**
   * Reserves `pre` on one subscription's windows (and on the token when it is limited) with the node's holds, in one
   * transaction; a PlanShort when a window has no room (nothing changed). Throws the token's QuotaError when the token
   * is short, whatever the source.
   */
  async reserve(
    entry: PlanRoute['subs'][number],
    zone: string,
    inp: ReserveInput,
    pre: number,
  ): Promise<Reservation | PlanShort> {
    const kind = this.ctx.dbKind;
    const { sub, windows } = entry;
    const now = Math.floor(Date.now() / 1000);
    const limitedToken = limitsToken(inp);
    let charge = chargeFor(windows, now, zone, pre);
    try {
      await retryDeadlock(
        () =>
          this.db.transaction().execute(async (trx) => {
            if (limitedToken) {
              const t = await trx.executeQuery(this.sql.reserveToken([pre, inp.tokenId, pre]));
              if (Number(t.numAffectedRows ?? 0) !== 1) {
                const row = await trx
                  .selectFrom('tokens')
                  .select('remain_quota')
                  .where('id', '=', inp.tokenId)
                  .executeTakeFirst();
                throw new TokenShortSignal(Number(row?.remain_quota ?? 0));
              }
            }
            if (sub.newApiMain) {
              const main = newApiMainState(sub, windows, now, zone);
              await ensureUsageRow(trx, kind, {
                user_subscription_id: sub.id,
                user_id: sub.userId,
                main_limit: main.limit,
                main_used: main.used,
                main_end: main.end,
              });
            }
            if (!(await reserveWindows(trx, kind, sub.id, charge))) {
              const row = await readUsage(trx, sub.id);
              const decided = row ? applyCharge(row, charge) : null;
              if (!row || !decided || decided.ok) throw this.short(charge, [], 0, entry);
              if (decided.refused.length) throw this.short(charge, decided.refused, decided.resetsAt, entry);
              // another node's clock is ahead: its periods are the current ones; retried once with them
              charge = {
                pre,
                slots: charge.slots.map((s) => ({ slot: s.slot, end: Math.max(s.end, row[s.slot].end) })),
              };
              if (!(await reserveWindows(trx, kind, sub.id, charge))) throw this.short(charge, [], 0, entry);
            }
            await addPlanHolds(trx, kind, this.node, sub.id, charge.slots, pre);
            if (limitedToken)
              await trx.executeQuery(
                addHoldsQuery(kind, this.node, [{ userId: inp.userId, tokenId: inp.tokenId, user: 0, token: pre }]),
              );
          }),
        this.onDeadlock,
      );
    } catch (e) {
      if (e instanceof PlanShort) return e;
      if (e instanceof TokenShortSignal) throw tokenShort(this.ctx.options, e.remain, pre);
      throw e;
    }
    sub.newApiMain = null;
    const mainEnd = charge.slots.find((s) => s.slot === 'main')?.end ?? windows.end;
    return {
      userId: inp.userId,
      tokenId: inp.tokenId,
      tokenKey: inp.tokenKey,
      user: 0,
      token: limitedToken ? pre : 0,
      tokenUnlimited: inp.tokenUnlimited,
      state: 'open',
      plan: {
        subscriptionId: sub.id,
        planId: sub.planId,
        title: entry.title,
        pre,
        slots: charge.slots,
        nextReset: newApiNextResetTime(mainEnd, windows),
      },
    };
  }

  /** The refusal of one subscription: the refused window whose period ends last names when all of them have room. */
  private short(charge: WindowCharge, refused: Slot[], resetsAt: number, entry: PlanRoute['subs'][number]): PlanShort {
    const last = charge.slots.filter((s) => refused.includes(s.slot)).sort((a, b) => b.end - a.end)[0];
    return new PlanShort(last?.slot ?? null, resetsAt, entry.windows.rollingSeconds, entry.windows.end);
  }

  /** Gives a plan reservation back: its windows (while still in its periods), its token, its holds. */
  async refund(res: Reservation & { plan: PlanHold }): Promise<void> {
    const kind = this.ctx.dbKind;
    const p = res.plan;
    await retryDeadlock(
      () =>
        this.db.transaction().execute(async (trx) => {
          if (res.token) await trx.executeQuery(this.sql.refundToken([res.token, res.tokenId]));
          await correctWindows(trx, kind, p.subscriptionId, p.slots, -p.pre);
          await addPlanHolds(trx, kind, this.node, p.subscriptionId, p.slots, -p.pre);
          if (res.token)
            await trx.executeQuery(
              addHoldsQuery(kind, this.node, [
                { userId: res.userId, tokenId: res.tokenId, user: 0, token: -res.token },
              ]),
            );
          await pruneZeroPlanHolds(trx, this.node);
        }),
      this.onDeadlock,
    );
  }

  /** Queues a plan request's charge with its log row for the next flush. */
  settle(res: Reservation & { plan: PlanHold }, quota: number, countRequest: boolean, channelId: number, row?: NewLog) {
    const used = countRequest ? quota : 0;
    if (row) row.other = withPlanSource(row.other, res.plan);
    this.queue.push({
      res,
      quota,
      used,
      count: countRequest ? 1 : 0,
      channelId: used ? channelId : 0,
      at: Math.floor(Date.now() / 1000),
      row,
    });
    if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.flush().catch((err) => this.ctx.log.error({ err }, 'plan settlement flush failed'));
      }, FLUSH_MS);
    }
  }

  /** Writes every queued plan charge in one transaction; a failed flush keeps them for the next. */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing;
    if (!this.queue.length) return;
    const items = this.queue;
    this.queue = [];
    this.flushing = this.write(items).catch((err) => {
      this.queue = items.concat(this.queue);
      if (!this.timer) this.timer = setTimeout(() => void this.flush().catch(() => undefined), FLUSH_MS * 20);
      throw err;
    });
    try {
      await this.flushing;
    } finally {
      this.flushing = null;
    }
  }

  private async write(items: QueuedCharge[]): Promise<void> {
    const kind = this.ctx.dbKind;
    const sameDb = this.ctx.logDb === this.ctx.db;
    const rows = items.flatMap((i) => (i.row ? [i.row] : []));
    // tokens, users, channels, each by id (the lock order of every quota statement), then the windows and the holds
    const tokens = new Map<number, [number, number, number]>();
    const users = new Map<number, [number, number]>();
    const channels = new Map<number, number>();
    for (const i of items) {
      const r = i.res;
      if (r.tokenId > 0) {
        const t = tokens.get(r.tokenId) ?? [0, 0, 0];
        t[0] += r.tokenUnlimited ? 0 : i.quota - r.token;
        t[1] += i.used;
        t[2] = Math.max(t[2], i.at);
        tokens.set(r.tokenId, t);
      }
      const u = users.get(r.userId) ?? [0, 0];
      u[0] += i.used;
      u[1] += i.count;
      users.set(r.userId, u);
      if (i.channelId) channels.set(i.channelId, (channels.get(i.channelId) ?? 0) + i.used);
    }
    const byId = <V>(m: Map<number, V>) => [...m].sort((a, b) => a[0] - b[0]);
    await retryDeadlock(
      () =>
        this.db.transaction().execute(async (trx) => {
          if (sameDb && rows.length) await trx.executeQuery(insertQuery(kind, rows));
          const tokenRows = byId(tokens).map(([id, [remain, used, at]]) => [remain, used, at, id]);
          if (tokenRows.length) await trx.executeQuery(settleManyQuery(kind, 'settleToken', tokenRows));
          const userRows = byId(users).map(([id, [used, count]]) => [0, used, count, id]);
          if (userRows.length) await trx.executeQuery(settleManyQuery(kind, 'settleUser', userRows));
          const channelRows = byId(channels).map(([id, used]) => [used, id]);
          if (channelRows.length) await trx.executeQuery(settleManyQuery(kind, 'settleChannel', channelRows));
          const subs = new Map<number, number>();
          for (const i of [...items].sort((a, b) => a.res.plan.subscriptionId - b.res.plan.subscriptionId)) {
            const p = i.res.plan;
            await correctWindows(trx, kind, p.subscriptionId, p.slots, i.quota - p.pre);
            subs.set(p.subscriptionId, p.nextReset);
          }
          for (const i of items) {
            const p = i.res.plan;
            await addPlanHolds(trx, kind, this.node, p.subscriptionId, p.slots, -p.pre);
            if (i.res.token)
              await trx.executeQuery(
                addHoldsQuery(kind, this.node, [
                  { userId: i.res.userId, tokenId: i.res.tokenId, user: 0, token: -i.res.token },
                ]),
              );
          }
          await pruneZeroPlanHolds(trx, this.node);
          // new-api's columns follow our main slot (absolute values), so a database handed back to it is right
          const now = Math.floor(Date.now() / 1000);
          for (const [id, nextReset] of byId(subs)) {
            const usage = await readUsage(trx, id);
            if (!usage) continue;
            await trx
              .updateTable('user_subscriptions')
              .set({ amount_used: usage.main.used, next_reset_time: nextReset, updated_at: now })
              .where('id', '=', id)
              .execute();
          }
        }),
      this.onDeadlock,
    );
    if (!sameDb) for (const r of rows) this.logs()?.add(r);
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** new-api's keys of a plan-billed request in the log's `other` (JSON text ending with `}`). */
function withPlanSource(other: string | null | undefined, p: PlanHold): string {
  const extra =
    `"billing_source":"subscription","subscription_id":${p.subscriptionId},"subscription_plan_id":${p.planId},` +
    `"subscription_plan_title":${JSON.stringify(p.title)},"subscription_pre_consumed":${p.pre}`;
  const text = (other ?? '').trim();
  if (!text.endsWith('}')) return `{${extra}}`;
  return text === '{}' ? `{${extra}}` : `${text.slice(0, -1)},${extra}}`;
}

/** The names of the windows in the refusal (new-api's Chinese; the English is in lib/relay-english.ts). */
function windowName(short: PlanShort): string {
  switch (short.slot) {
    case 'daily':
      return '每日额度';
    case 'weekly':
      return '每周额度';
    case 'monthly':
      return '每月额度';
    case 'rolling':
      return `${Math.round((short.rollingSeconds / 3600) * 100) / 100} 小时额度`;
    default:
      return '套餐额度';
  }
}

/** A time in the site's zone as the refusal shows it: 2026-12-08 00:00 (Asia/Shanghai). */
function siteTime(t: number, zone: string): string {
  const text = new Intl.DateTimeFormat('sv-SE', {
    timeZone: zone || undefined,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).format(new Date(t * 1000));
  return zone ? `${text} (${zone})` : text;
}

/**
 * The refusal of a request no subscription could take (subscription_only, or none in scope): the window that
 * refused, from the subscription that frees up first, and when it resets in the site's zone.
 */
export function planRefusal(shorts: PlanShort[], zone: string): QuotaError {
  const named = shorts.filter((s) => s.slot !== null).sort((a, b) => a.resetsAt - b.resetsAt)[0];
  if (!named) return new QuotaError('没有可用于此请求的订阅套餐', 'insufficient_user_quota');
  if (named.resetsAt >= named.end)
    return new QuotaError(`订阅额度不足：${windowName(named)}已用完`, 'insufficient_user_quota');
  return new QuotaError(
    `订阅额度不足：${windowName(named)}已用完，将于 ${siteTime(named.resetsAt, zone)} 重置`,
    'insufficient_user_quota',
  );
}
