// Users by id for the relay (new-api-compat.md §1.5): group, status, role, username, email, setting. Same layering as
// the token cache: a local map without Redis, hashes `<prefix>user:<id>` with TTL = SYNC_FREQUENCY with Redis (fixing
// new-api's zero-TTL bug). `quota` is informative only (messages, low-quota notices); reservations use the DB's
// conditional UPDATE.
import type { AppContext } from '../../context.js';
import { BatchRefresh } from './batch-refresh.js';
import { redisAsk, redisTrouble } from './redis-outage.js';

export interface UserRecord {
  id: number;
  username: string;
  group: string;
  status: number;
  role: number;
  email: string;
  quota: number;
  setting: Record<string, unknown>;
}

interface Raw {
  id: number | string;
  username: string;
  group: string;
  status: number | string;
  role: number | string;
  email: string;
  quota: number | string;
  setting: string;
}

const COLUMNS = ['id', 'username', 'group', 'status', 'role', 'email', 'quota', 'setting'] as const;

function parseSetting(s: string | null | undefined): Record<string, unknown> {
  if (!s) return {};
  try {
    const v = JSON.parse(s);
    return v && typeof v === 'object' ? v : {};
  } catch {
    return {};
  }
}

function toRecord(r: Raw): UserRecord {
  return {
    id: Number(r.id),
    username: r.username ?? '',
    group: r.group || 'default',
    status: Number(r.status),
    role: Number(r.role),
    email: r.email ?? '',
    quota: Number(r.quota),
    setting: parseSetting(r.setting),
  };
}

interface Entry {
  rec: UserRecord | null;
  raw: Raw | null;
  at: number;
  refreshing?: boolean;
}

export class UserCache {
  private readonly mem = new Map<number, Entry>();
  private readonly ttlMs: number;
  private unsubscribe: (() => void) | undefined;

  /** lookups answered from memory, and those that asked Redis or the database (GET /metrics) */
  hits = 0;
  misses = 0;

  constructor(private readonly ctx: AppContext) {
    this.ttlMs = ctx.config.syncFrequencySec * 1000;
  }

  private readonly refresh = new BatchRefresh<number, Raw>(
    this.mem,
    async (ids) => {
      const rows = (await this.ctx.db
        .selectFrom('users')
        .select(COLUMNS)
        .where('id', 'in', ids)
        .where('deleted_at', 'is', null)
        .execute()) as Raw[];
      return new Map(rows.map((r) => [Number(r.id), r]));
    },
    (id, raw) => this.mem.set(id, { raw, rec: raw ? toRecord(raw) : null, at: Date.now() }),
  );

  start(): void {
    this.unsubscribe = this.ctx.changes.subscribe((ev) => {
      // returned: a writer that awaits ChangeBus.publishSettled answers once the shared entry is gone
      if (ev.kind === 'user') return this.forget(ev.id);
    });
  }

  stop(): void {
    this.unsubscribe?.();
  }

  /** every key redisKey() makes (SCAN pattern) */
  get redisKeys(): string {
    return `${this.ctx.redisPrefix}user:*`;
  }

  private redisKey(id: number): string {
    return `${this.ctx.redisPrefix}user:${id}`;
  }

  private async fromDb(id: number): Promise<Raw | null> {
    const row = await this.ctx.db
      .selectFrom('users')
      .select(COLUMNS)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    return (row as Raw | undefined) ?? null;
  }

  /** The user from memory (a stale entry is refreshed in the background), else undefined: then get(). Synchronous. */
  cached(id: number): UserRecord | undefined {
    if (this.ctx.redis) return undefined;
    const e = this.mem.get(id);
    if (!e || !e.rec) return undefined;
    if (Date.now() - e.at >= this.ttlMs) this.refresh.stale(id, e);
    this.hits++;
    return e.rec;
  }

  async get(id: number): Promise<UserRecord | null> {
    const c = this.cached(id);
    if (c) return c;
    this.misses++;
    if (this.ctx.redis) return this.getRedis(id);
    const now = Date.now();
    const raw = await this.fromDb(id);
    const rec = raw ? toRecord(raw) : null;
    if (rec) this.mem.set(id, { raw, rec, at: now });
    return rec;
  }

  /** Redis down: the row, uncached */
  private async recordFromDb(id: number): Promise<UserRecord | null> {
    const raw = await this.fromDb(id);
    return raw ? toRecord(raw) : null;
  }

  private async getRedis(id: number): Promise<UserRecord | null> {
    const redis = this.ctx.redis!;
    const rk = this.redisKey(id);
    const h = await redisAsk(redis, this.ctx.log, 'user cache', (r) => r.hgetall(rk));
    if (h === undefined) return this.recordFromDb(id);
    if (h && h.id !== undefined) return toRecord(h as unknown as Raw);
    const raw = await this.fromDb(id);
    if (!raw) return null;
    await redis
      .multi()
      .hset(rk, {
        id: raw.id,
        username: raw.username,
        group: raw.group,
        status: raw.status,
        role: raw.role,
        email: raw.email ?? '',
        quota: raw.quota,
        setting: raw.setting ?? '',
      })
      .expire(rk, this.ctx.config.syncFrequencySec)
      .exec()
      .catch((err) => redisTrouble(this.ctx.log, err, 'user cache'));
    return toRecord(raw);
  }

  /** Drops the cached user (its balance proved stale): the next request reads the row again. */
  async forget(id: number): Promise<void> {
    this.mem.delete(id);
    if (this.ctx.redis) await this.ctx.redis.del(this.redisKey(id)).catch(() => undefined);
  }

  /** Keeps the cached quota close to the DB after billing (delta < 0 = spent). */
  adjustQuota(id: number, delta: number): void {
    if (!delta) return;
    if (this.ctx.redis) {
      void this.ctx.redis
        .eval(
          "if redis.call('exists', KEYS[1]) == 1 then redis.call('hincrby', KEYS[1], 'quota', ARGV[1]) end return 1",
          1,
          this.redisKey(id),
          String(delta),
        )
        .catch(() => undefined);
      return;
    }
    const e = this.mem.get(id);
    if (e?.rec) e.rec.quota += delta;
  }
}
