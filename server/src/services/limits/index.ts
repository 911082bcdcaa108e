// Governance per key and per user (issue 35; new-api-compat.md §13.3): the settings of tokens and users (table
// usage_limits, all loaded in memory: one map lookup per request), the groups' defaults (option
// UsageLimitGroupDefaults), the check before a request goes upstream (counting its token bound and its reservation, so
// requests in flight together cannot pass a limit together), the correction after it settled, and the channels' daily
// caps (counted the same way when a channel is picked). Calendar periods and the caps' days are those of the site's
// time zone (option UsageLimitTimeZone).
// Without any setting a request costs a size check and nothing else: no counter, no Redis round trip.
import type { Kysely } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { MemoryCounters, RedisCounters, type Check, type CounterStore } from './counters.js';
import { periodAt, rollingWindowMs, zoneOrLocal } from './periods.js';
import { displayAmount } from '../user-logs.js';
import {
  cleanSettings,
  isEmpty,
  resolveRules,
  type LimitSettings,
  type Reset,
  type Rule,
  type Rules,
} from './settings.js';

export type { LimitSettings, Rules } from './settings.js';
export { LimitInputError, isEmpty, parseGroupDefaultsInput, parseSettingsInput } from './settings.js';

const WINDOW_MS = 60_000;
const DAY_MS = 86_400_000;

/** What a request was admitted with, for the correction after it settled. */
export interface Admitted {
  rules: Rules;
  /** the tokens-per-minute counter the request's bound went to, and that bound */
  tpmKey: string | null;
  bound: number;
  /** the budget counter the request's reservation went to (its period's, or its rolling window's), and that amount */
  budgetKey: string | null;
  reserved: number;
  /** the start of the calendar period counted (0 for a rolling window) */
  periodStart: number;
}

/** A request's bound counted on a capped channel's day counters when the channel was picked (channelHeld). */
export interface ChannelHold {
  channelId: number;
  caps: ChannelCaps;
  tokensKey: string;
  quotaKey: string;
  tokens: number;
  quota: number;
  /** the end of the channel's day (ms): past it the channel is skipped no longer */
  dayEnd: number;
}

export interface ChannelCaps {
  tokens: number;
  quota: number;
}

const who = (r: Rule) => `${r.scope === 'token' ? 't' : 'u'}${r.id}`;
const what = (r: Rule) => (r.scope === 'token' ? 'this key' : 'this user');
/** a calendar budget counts per period (its start in the key); a rolling one on one counter that lives its window */
const budgetKey = (r: NonNullable<Rules['budget']>, start: number) =>
  r.reset === 'rolling' ? `lim:b:${who(r)}:r:${r.period}` : `lim:b:${who(r)}:${start}`;

/** A request over a limit: the relay answers it as new-api's 429, with Retry-After (relay/pipeline/limit.ts). */
export class LimitRefusal extends Error {
  constructor(
    message: string,
    /** whole seconds until the limit lets a request through */
    readonly retryAfter: number,
  ) {
    super(message);
  }
}

const refusal = (message: string, retryMs: number) => new LimitRefusal(message, Math.max(1, Math.ceil(retryMs / 1000)));

/** The caps of a channel's `setting` JSON: daily_token_cap (tokens) and daily_quota_cap (quota), 0 = none. */
export function channelCaps(setting: Record<string, unknown> | null): ChannelCaps | null {
  if (!setting) return null;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);
  const tokens = n(setting.daily_token_cap);
  const quota = n(setting.daily_quota_cap);
  return tokens || quota ? { tokens, quota } : null;
}

export class UsageLimits {
  private tokens = new Map<number, LimitSettings>();
  private users = new Map<number, LimitSettings>();
  private groupsRaw: unknown = undefined;
  private groups = new Map<string, LimitSettings>();
  /** channels over a daily cap, until the end of their day (ms) */
  private readonly capped = new Map<number, number>();
  private readonly cappedIds = new Set<number>();
  readonly counters: CounterStore;
  readonly ready: Promise<void>;
  loaded = false;
  private readonly stops: Array<() => void> = [];
  /** the clock of periods, windows in memory and caps (tests fix it; Redis windows keep Redis's own time) */
  now: () => number = Date.now;

  constructor(private readonly ctx: AppContext) {
    this.counters = ctx.redis
      ? new RedisCounters(ctx.redis, ctx.redisPrefix, ctx.log)
      : new MemoryCounters(() => this.now());
    this.ready = this.reload();
    this.stops.push(
      ctx.changes.subscribe((ev) => {
        if (ev.kind === 'limits') void this.reload();
      }),
    );
    // a node that misses a change (no Redis to carry it) still catches up
    const timer = setInterval(() => void this.reload(), ctx.config.syncFrequencySec * 1000);
    timer.unref();
    this.stops.push(() => clearInterval(timer));
  }

  stop(): void {
    for (const s of this.stops.splice(0)) s();
  }

  async reload(): Promise<void> {
    try {
      const rows = await this.ctx.db.selectFrom('usage_limits').select(['scope', 'target_id', 'limits']).execute();
      const tokens = new Map<number, LimitSettings>();
      const users = new Map<number, LimitSettings>();
      for (const row of rows) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(row.limits);
        } catch {
          continue;
        }
        const s = cleanSettings(parsed);
        if (isEmpty(s)) continue;
        (row.scope === 'token' ? tokens : users).set(Number(row.target_id), s);
      }
      this.tokens = tokens;
      this.users = users;
    } catch (err) {
      this.ctx.log.warn({ err }, 'usage limits: loading the settings failed');
    }
    this.loaded = true;
  }

  private groupDefaults(): Map<string, LimitSettings> {
    const raw = this.ctx.options.json<unknown>('UsageLimitGroupDefaults', {});
    if (raw !== this.groupsRaw) {
      this.groupsRaw = raw;
      const groups = new Map<string, LimitSettings>();
      if (raw && typeof raw === 'object' && !Array.isArray(raw))
        for (const [name, v] of Object.entries(raw)) {
          const s = cleanSettings(v);
          if (!isEmpty(s)) groups.set(name, s);
        }
      this.groups = groups;
    }
    return this.groups;
  }

  /** The site's time zone for periods ('' = the server's local one; a bad stored value counts as local). */
  timeZone(): string {
    return zoneOrLocal(this.ctx.options.get('UsageLimitTimeZone'));
  }

  settingsOf(scope: 'token' | 'user', id: number): LimitSettings {
    return (scope === 'token' ? this.tokens : this.users).get(id) ?? {};
  }

  /** The rules for a caller (token id 0: the playground), or null: the common case, decided without a counter. */
  rulesFor(tokenId: number, userId: number, group: string): Rules | null {
    const groups = this.groupDefaults();
    if (this.tokens.size === 0 && this.users.size === 0 && groups.size === 0) return null;
    return resolveRules(tokenId, userId, this.tokens.get(tokenId), this.users.get(userId), groups.get(group));
  }

  /**
   * Counts a request against its rules, or throws the 429 (nothing counted then). `bound` is the most tokens the
   * request can use (its prompt's bound plus max_tokens), `reserved` the quota it reserves; both count at once, so
   * requests in flight together cannot pass a limit together, and `settled` corrects them once the usage is known.
   */
  async admit(rules: Rules, bound: number, reserved = 0): Promise<Admitted> {
    const now = this.now();
    const checks: Check[] = [];
    const kinds: Array<'rpm' | 'tpm' | 'budget'> = [];
    let tpmKey: string | null = null;
    if (rules.rpm) {
      checks.push({ key: `lim:r:${who(rules.rpm)}`, limit: rules.rpm.limit, add: 1, ttlMs: WINDOW_MS });
      kinds.push('rpm');
    }
    if (rules.tpm) {
      tpmKey = `lim:k:${who(rules.tpm)}`;
      checks.push({ key: tpmKey, limit: rules.tpm.limit, add: Math.max(0, bound), ttlMs: WINDOW_MS });
      kinds.push('tpm');
    }
    let resetAt = 0;
    let budget: string | null = null;
    let periodStart = 0;
    if (rules.budget) {
      const span = rules.budget.reset === 'rolling' ? null : periodAt(rules.budget.period, now, this.timeZone());
      resetAt = span?.end ?? 0;
      periodStart = span?.start ?? 0;
      budget = budgetKey(rules.budget, periodStart);
      const add = Math.max(0, reserved);
      checks.push({ key: budget, limit: rules.budget.limit, add, ttlMs: this.budgetTtl(rules.budget, periodStart) });
      kinds.push('budget');
    }
    const refused = await this.counters.admit(checks);
    if (refused) {
      const kind = kinds[refused.index];
      if (kind === 'rpm')
        throw refusal(
          `Request rate limit reached: ${what(rules.rpm!)} may send ${rules.rpm!.limit} requests per minute`,
          refused.retryMs,
        );
      if (kind === 'tpm')
        throw refusal(
          `Token rate limit reached: ${what(rules.tpm!)} may use ${rules.tpm!.limit} tokens per minute`,
          refused.retryMs,
        );
      const b = rules.budget!;
      // a rolling window ends when its counter expires
      if (b.reset === 'rolling') resetAt = now + refused.retryMs;
      throw refusal(
        `Budget used up: ${what(b)} has spent its ${b.reset === 'rolling' ? 'rolling ' : ''}${b.period} budget of ` +
          `${displayAmount(this.ctx, b.limit)}; it resets at ${new Date(resetAt).toISOString()}`,
        resetAt - now,
      );
    }
    return {
      rules,
      tpmKey,
      bound: tpmKey ? Math.max(0, bound) : 0,
      budgetKey: budget,
      reserved: budget ? Math.max(0, reserved) : 0,
      periodStart,
    };
  }

  /**
   * The life of a budget counter created now: a rolling window's whole span from now; a calendar period's counter
   * until a day after the period ends (a request admitted in it may settle just after).
   */
  private budgetTtl(b: NonNullable<Rules['budget']>, periodStart: number): number {
    const now = this.now();
    const zone = this.timeZone();
    if (b.reset === 'rolling') return rollingWindowMs(b.period, now, zone);
    return Math.max(1, periodAt(b.period, periodStart, zone).end - now + DAY_MS);
  }

  /**
   * After the charge: the tokens window corrected from the bound to the usage, the budget from the reservation to
   * the charge (in the period the request was admitted in). A charge above the reservation adds the difference,
   * creating the counter if it has gone (a rolling window that ended meanwhile starts again with it).
   */
  async settled(a: Admitted, tokens: number, quota: number, reqId?: string): Promise<void> {
    try {
      if (a.tpmKey && tokens !== a.bound) await this.counters.adjust(a.tpmKey, tokens - a.bound);
      const b = a.rules.budget;
      const delta = Math.max(0, quota) - a.reserved;
      if (b && a.budgetKey && delta < 0) await this.counters.adjust(a.budgetKey, delta);
      else if (b && a.budgetKey && delta > 0)
        await this.counters.add(a.budgetKey, delta, this.budgetTtl(b, a.periodStart));
    } catch (err) {
      this.ctx.log.warn({ err, reqId }, 'usage limits: counting a settled request failed');
    }
  }

  /** A request that failed or was refused later uses nothing: its bound and its reservation leave their counters. */
  async released(a: Admitted): Promise<void> {
    await this.settled(a, 0, 0);
  }

  /** The channels over their daily cap now (empty but for channels with a cap). */
  cappedChannels(): ReadonlySet<number> {
    if (this.capped.size) {
      const now = this.now();
      for (const [id, until] of this.capped)
        if (until <= now) {
          this.capped.delete(id);
          this.cappedIds.delete(id);
        }
    }
    return this.cappedIds;
  }

  /**
   * Counts a request's bound (its reservation, its tokens' bound) on a capped channel's day counters when the channel
   * is picked, so concurrent requests cannot pass the cap together; null when the request would pass it (nothing
   * counted: the caller picks another channel). An empty day admits one request whatever its bound.
   */
  async channelHeld(
    channel: { id: number },
    caps: ChannelCaps,
    tokens: number,
    quota: number,
    reqId?: string,
  ): Promise<ChannelHold | null> {
    const now = this.now();
    const day = periodAt('daily', now, this.timeZone());
    const ttlMs = day.end - now + 60_000;
    const hold: ChannelHold = {
      channelId: channel.id,
      caps,
      tokensKey: `lim:ct:${channel.id}:${day.start}`,
      quotaKey: `lim:cq:${channel.id}:${day.start}`,
      tokens: caps.tokens ? Math.max(0, Math.round(tokens)) : 0,
      quota: caps.quota ? Math.max(0, Math.round(quota)) : 0,
      dayEnd: day.end,
    };
    const checks: Check[] = [];
    if (caps.tokens) checks.push({ key: hold.tokensKey, limit: caps.tokens, add: hold.tokens, ttlMs });
    if (caps.quota) checks.push({ key: hold.quotaKey, limit: caps.quota, add: hold.quota, ttlMs });
    try {
      return (await this.counters.admit(checks)) ? null : hold;
    } catch (err) {
      // a counter store that fails lets the request through, as the other limits do
      this.ctx.log.warn({ err, reqId }, 'usage limits: counting a channel cap failed');
      return { ...hold, tokens: 0, quota: 0 };
    }
  }

  /** After the charge: the channel's day counters corrected from the bound to the usage; past a cap, skipped. */
  async channelSettled(hold: ChannelHold, tokens: number, quota: number, reqId?: string): Promise<void> {
    try {
      const ttlMs = Math.max(1, hold.dayEnd - this.now() + 60_000);
      const correct = (key: string, delta: number) =>
        delta > 0 ? this.counters.add(key, delta, ttlMs) : this.counters.adjust(key, delta);
      const usedTokens = hold.caps.tokens ? await correct(hold.tokensKey, tokens - hold.tokens) : 0;
      const usedQuota = hold.caps.quota ? await correct(hold.quotaKey, quota - hold.quota) : 0;
      this.markIfCapped(hold.channelId, hold.caps, usedTokens, usedQuota, hold.dayEnd);
    } catch (err) {
      this.ctx.log.warn({ err, reqId }, 'usage limits: counting a channel cap failed');
    }
  }

  /** A request that did not use the channel after all (it failed there, or was refused): its bound goes back. */
  async channelReleased(hold: ChannelHold): Promise<void> {
    await this.channelSettled(hold, 0, 0);
  }

  private markIfCapped(id: number, caps: ChannelCaps, usedTokens: number, usedQuota: number, dayEnd: number): void {
    if ((caps.tokens && usedTokens >= caps.tokens) || (caps.quota && usedQuota >= caps.quota)) {
      this.capped.set(id, dayEnd);
      this.cappedIds.add(id);
    }
  }

  /**
   * A channel's share of a settled request that held nothing on it (a channel pinned by the key, `sk-…-<id>`, is
   * used whatever its cap): counted, and past the cap the channel is skipped by picks until tomorrow.
   */
  async channelUsed(
    channel: { id: number; setting: Record<string, unknown> | null },
    tokens: number,
    quota: number,
    reqId?: string,
  ) {
    const caps = channelCaps(channel.setting);
    if (!caps) return;
    const now = this.now();
    const day = periodAt('daily', now, this.timeZone());
    const ttl = day.end - now + 60_000;
    try {
      const usedTokens = caps.tokens ? await this.counters.add(`lim:ct:${channel.id}:${day.start}`, tokens, ttl) : 0;
      const usedQuota = caps.quota ? await this.counters.add(`lim:cq:${channel.id}:${day.start}`, quota, ttl) : 0;
      this.markIfCapped(channel.id, caps, usedTokens, usedQuota, day.end);
    } catch (err) {
      this.ctx.log.warn({ err, reqId }, 'usage limits: counting a channel cap failed');
    }
  }

  /** What the console shows: the rules in force and what the current windows and period hold. */
  async status(tokenId: number, userId: number, group: string): Promise<LimitStatus> {
    const rules = this.rulesFor(tokenId, userId, group);
    if (!rules) return { rpm: null, tpm: null, budget: null };
    const now = this.now();
    const b = rules.budget;
    const rolling = b?.reset === 'rolling';
    const span = b && !rolling ? periodAt(b.period, now, this.timeZone()) : null;
    const keys = [
      rules.rpm ? `lim:r:${who(rules.rpm)}` : '',
      rules.tpm ? `lim:k:${who(rules.tpm)}` : '',
      b ? budgetKey(b, span?.start ?? 0) : '',
    ];
    const used = await this.counters.read(keys.map((k) => k || 'lim:none'));
    // a rolling window resets when its counter expires; before its first charge it has not started (null)
    let resetMs: number | null = span?.end ?? null;
    if (b && rolling) {
      const left = await this.counters.expiresIn(keys[2]);
      resetMs = left > 0 ? now + left : null;
    }
    const view = (r: Rule | null, u: number) => r && { limit: r.limit, used: u, scope: r.scope };
    return {
      rpm: view(rules.rpm, used[0]),
      tpm: view(rules.tpm, used[1]),
      budget: b && {
        ...view(b, used[2])!,
        period: b.period,
        reset: b.reset,
        resetAt: resetMs === null ? null : Math.floor(resetMs / 1000),
      },
    };
  }

  /** Stores a token's or user's settings (empty: removed) and tells every node. */
  async save(scope: 'token' | 'user', id: number, settings: LimitSettings): Promise<void> {
    await this.ctx.db.transaction().execute((trx) => writeLimitSettings(trx, scope, id, settings));
    await this.changed();
  }

  /** After settings were written (save, or a token created with its limits): this node and every other reload. */
  async changed(): Promise<void> {
    await this.reload();
    this.ctx.changes.publish({ kind: 'limits' });
  }
}

/**
 * Replaces a token's or user's settings row (empty settings: no row), inside the caller's transaction, so a row it
 * writes along with them (a new token) commits or fails with them. Call UsageLimits.changed() after the commit.
 */
export async function writeLimitSettings(
  trx: Kysely<Database>,
  scope: 'token' | 'user',
  id: number,
  settings: LimitSettings,
): Promise<void> {
  await trx.deleteFrom('usage_limits').where('scope', '=', scope).where('target_id', '=', id).execute();
  if (!isEmpty(settings))
    await trx
      .insertInto('usage_limits')
      .values({ scope, target_id: id, limits: JSON.stringify(settings) })
      .execute();
}

export interface UsageView {
  limit: number;
  used: number;
  scope: 'token' | 'user';
}

export interface LimitStatus {
  rpm: UsageView | null;
  tpm: UsageView | null;
  /** resetAt: unix seconds; null for a rolling budget not charged yet (its window starts with its first charge) */
  budget: (UsageView & { period: string; reset: Reset; resetAt: number | null }) | null;
}

const instances = new WeakMap<AppContext, UsageLimits>();

/** The instance's limits service, made on first use and stopped with the context. */
export function usageLimits(ctx: AppContext): UsageLimits {
  let l = instances.get(ctx);
  if (!l) {
    instances.set(ctx, (l = new UsageLimits(ctx)));
    const made = l;
    ctx.onClose(() => made.stop());
  }
  return l;
}
