// API tokens by key for TokenAuth (new-api-compat.md §1.5, §4.2). Without Redis: a process-local map, entries re-read
// in the background every SYNC_FREQUENCY and dropped at once on {kind:'token'} changes. With Redis: hashes
// `<prefix>token:<sha256(key)>` with an explicit TTL of SYNC_FREQUENCY seconds, so every node sees edits.
// (new-api bug fixed, new-api-compat.md §1.5: its TTL constants were copied before the env was loaded and were 0.)
// remain_quota here is only a hint for the "exhausted" check; billing's source of truth is the DB's conditional UPDATE.
import { createHash } from 'node:crypto';
import { BatchRefresh } from './batch-refresh.js';
import { redisAsk, redisTrouble } from './redis-outage.js';
import type { AppContext } from '../../context.js';
import type { Token } from '../../db/schema.js';
import { compileIpAllowList, type IpMatcher } from '../../lib/ip-match.js';

export interface TokenRecord {
  id: number;
  userId: number;
  key: string;
  status: number;
  name: string;
  expiredTime: number;
  remainQuota: number;
  usedQuota: number;
  unlimited: boolean;
  modelLimitsEnabled: boolean;
  modelLimits: Set<string> | null;
  allowIps: IpMatcher | null;
  allowIpsRaw: string;
  group: string;
}

type Raw = Pick<
  Token,
  | 'id'
  | 'user_id'
  | 'key'
  | 'status'
  | 'name'
  | 'expired_time'
  | 'remain_quota'
  | 'used_quota'
  | 'unlimited_quota'
  | 'model_limits_enabled'
  | 'model_limits'
  | 'allow_ips'
  | 'group'
>;

const COLUMNS = [
  'id',
  'user_id',
  'key',
  'status',
  'name',
  'expired_time',
  'remain_quota',
  'used_quota',
  'unlimited_quota',
  'model_limits_enabled',
  'model_limits',
  'allow_ips',
  'group',
] as const;

function toRecord(r: Raw): TokenRecord {
  const limits = (r.model_limits ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return {
    id: Number(r.id),
    userId: Number(r.user_id),
    key: r.key,
    status: Number(r.status),
    name: r.name ?? '',
    expiredTime: Number(r.expired_time),
    remainQuota: Number(r.remain_quota),
    usedQuota: Number(r.used_quota),
    unlimited: !!Number(r.unlimited_quota) || r.unlimited_quota === true,
    modelLimitsEnabled: !!Number(r.model_limits_enabled) || r.model_limits_enabled === true,
    modelLimits: limits.length ? new Set(limits) : null,
    allowIps: compileIpAllowList(r.allow_ips),
    allowIpsRaw: r.allow_ips ?? '',
    group: r.group ?? '',
  };
}

interface Entry {
  rec: TokenRecord | null;
  at: number;
  refreshing?: boolean;
}

const NEGATIVE_TTL_MS = 5_000;
/**
 * tokens.key is CHAR(48) (new-api's width; generateTokenKey() makes 48 characters): a longer key cannot name a token,
 * so it is refused without a read and without remembering it (a remembered miss holds its key: 16 KB keys × the
 * negative bound would be megabytes of garbage).
 */
export const TOKEN_KEY_MAX = 48;

export class TokenCache {
  private readonly mem = new Map<string, Entry>();
  private negatives = 0;
  /** most unknown keys remembered (for NEGATIVE_TTL_MS, sparing the database a flood of one bad key); past it they
   * are all forgotten at once */
  maxNegatives = 10_000;
  private readonly ttlMs: number;
  private unsubscribe: (() => void) | undefined;

  /** lookups answered from memory, and those that asked Redis or the database (GET /metrics) */
  hits = 0;
  misses = 0;

  constructor(private readonly ctx: AppContext) {
    this.ttlMs = ctx.config.syncFrequencySec * 1000;
  }

  private readonly refresh = new BatchRefresh<string, TokenRecord>(
    this.mem,
    async (keys) => {
      const rows = await this.ctx.db
        .selectFrom('tokens')
        .select(COLUMNS)
        .where('key', 'in', keys)
        .where('deleted_at', 'is', null)
        .execute();
      return new Map(rows.map((r) => [r.key, toRecord(r)]));
    },
    (key, rec) => this.put(key, rec),
  );

  start(): void {
    this.unsubscribe = this.ctx.changes.subscribe((ev) => {
      if (ev.kind !== 'token') return;
      // returned: a writer that awaits ChangeBus.publishSettled answers once the shared entry is gone
      return this.invalidate(ev).catch((err) => this.ctx.log.warn({ err }, 'token cache invalidation failed'));
    });
  }

  stop(): void {
    this.unsubscribe?.();
  }

  /** every key redisKey() makes (SCAN pattern) */
  get redisKeys(): string {
    return `${this.ctx.redisPrefix}token:*`;
  }

  private redisKey(key: string): string {
    return `${this.ctx.redisPrefix}token:${createHash('sha256').update(key).digest('hex')}`;
  }

  private async fromDb(key: string): Promise<TokenRecord | null> {
    const row = await this.ctx.db
      .selectFrom('tokens')
      .select(COLUMNS)
      .where('key', '=', key)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /**
   * The token from memory when memory can answer (a stale entry is refreshed in the background), else undefined: then
   * get() asks Redis or the database. Synchronous, for the relay's hot path.
   */
  cached(key: string): TokenRecord | null | undefined {
    if (key.length > TOKEN_KEY_MAX) return null;
    if (this.ctx.redis) return undefined;
    const e = this.mem.get(key);
    if (!e) return undefined;
    if (Date.now() - e.at < (e.rec ? this.ttlMs : NEGATIVE_TTL_MS)) {
      this.hits++;
      return e.rec;
    }
    if (!e.rec) return undefined;
    // stale: answer from memory, refresh in the background (no DB wait on the hot path)
    this.refresh.stale(key, e);
    this.hits++;
    return e.rec;
  }

  /** The token with this key (without `sk-`), or null. */
  async get(key: string): Promise<TokenRecord | null> {
    const c = this.cached(key);
    if (c !== undefined) return c;
    this.misses++;
    if (this.ctx.redis) return this.getRedis(key);
    const rec = await this.fromDb(key);
    this.put(key, rec);
    return rec;
  }

  private put(key: string, rec: TokenRecord | null): void {
    const old = this.mem.get(key);
    if (!rec) {
      if (!old || old.rec) {
        if (this.negatives >= this.maxNegatives) {
          for (const [k, v] of this.mem) if (!v.rec) this.mem.delete(k);
          this.negatives = 0;
        }
        this.negatives++;
      }
    } else if (old && !old.rec) this.negatives--;
    this.mem.set(key, { rec, at: Date.now() });
  }

  /** entries in memory, and the unknown keys among them */
  get entryCounts(): { all: number; negative: number } {
    let negative = 0;
    for (const e of this.mem.values()) if (!e.rec) negative++;
    return { all: this.mem.size, negative };
  }

  private async getRedis(key: string): Promise<TokenRecord | null> {
    const redis = this.ctx.redis!;
    const rk = this.redisKey(key);
    const h = await redisAsk(redis, this.ctx.log, 'token cache', (r) => r.hgetall(rk));
    if (h === undefined) return this.fromDb(key);
    if (h && h.id !== undefined) {
      if (h.id === '0') return null;
      return toRecord(h as unknown as Raw);
    }
    const rec = await this.fromDb(key);
    const ttl = rec ? this.ctx.config.syncFrequencySec : Math.ceil(NEGATIVE_TTL_MS / 1000);
    const fields: Record<string, string | number> = rec
      ? {
          id: rec.id,
          user_id: rec.userId,
          key: rec.key,
          status: rec.status,
          name: rec.name,
          expired_time: rec.expiredTime,
          remain_quota: rec.remainQuota,
          used_quota: rec.usedQuota,
          unlimited_quota: rec.unlimited ? 1 : 0,
          model_limits_enabled: rec.modelLimitsEnabled ? 1 : 0,
          model_limits: rec.modelLimits ? [...rec.modelLimits].join(',') : '',
          allow_ips: rec.allowIpsRaw,
          group: rec.group,
        }
      : { id: 0 };
    await redis
      .multi()
      .del(rk)
      .hset(rk, fields)
      .expire(rk, ttl)
      .exec()
      .catch((err) => redisTrouble(this.ctx.log, err, 'token cache'));
    return rec;
  }

  /** Keeps the cached remain_quota close to the DB after a charge or refund (delta < 0 = spent). */
  adjustRemain(key: string, delta: number, used: number): void {
    if (!delta && !used) return;
    if (this.ctx.redis) {
      const rk = this.redisKey(key);
      void this.ctx.redis
        .eval(
          "if redis.call('exists', KEYS[1]) == 1 and redis.call('hget', KEYS[1], 'id') ~= '0' then redis.call('hincrby', KEYS[1], 'remain_quota', ARGV[1]); redis.call('hincrby', KEYS[1], 'used_quota', ARGV[2]) end return 1",
          1,
          rk,
          String(delta),
          String(used),
        )
        .catch(() => undefined);
      return;
    }
    const e = this.mem.get(key);
    if (e?.rec) {
      e.rec.remainQuota += delta;
      e.rec.usedQuota += used;
    }
  }

  async invalidate(ev: { id?: number; key?: string; userId?: number }): Promise<void> {
    const keys: string[] = [];
    if (ev.key) keys.push(ev.key.startsWith('sk-') ? ev.key.slice(3) : ev.key);
    if (!this.ctx.redis) {
      for (const k of keys) this.mem.delete(k);
      if (ev.id !== undefined || ev.userId !== undefined) {
        for (const [k, e] of this.mem) {
          if (
            e.rec &&
            ((ev.id !== undefined && e.rec.id === ev.id) || (ev.userId !== undefined && e.rec.userId === ev.userId))
          )
            this.mem.delete(k);
        }
      }
      if (ev.id === undefined && ev.userId === undefined && !ev.key) this.mem.clear();
      return;
    }
    if (ev.id !== undefined || ev.userId !== undefined) {
      let q = this.ctx.db.selectFrom('tokens').select('key');
      if (ev.id !== undefined) q = q.where('id', '=', ev.id);
      if (ev.userId !== undefined) q = q.where('user_id', '=', ev.userId);
      for (const r of await q.execute()) keys.push(r.key);
    }
    if (keys.length) await this.ctx.redis.del(...keys.map((k) => this.redisKey(k)));
  }

  /** Marks an expired / exhausted token in the DB, as new-api does (status 3 / 4). */
  async markStatus(rec: TokenRecord, status: number): Promise<void> {
    await this.ctx.db.updateTable('tokens').set({ status }).where('id', '=', rec.id).where('status', '=', 1).execute();
    this.ctx.changes.publish({ kind: 'token', id: rec.id, key: rec.key, userId: rec.userId });
  }
}
