// The counters behind the limits: windows of requests and tokens, budgets per period, channels' daily use. Each is a
// number under a key that expires. In memory on one instance; in Redis (one Lua script per check, so check and count
// are atomic) when REDIS_CONN_STRING is set, shared by every instance with the same key prefix.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { redisAsk } from '../cache/redis-outage.js';

export interface Check {
  key: string;
  limit: number;
  /** counted when every check passes (1 for a request, the token bound for tokens, the reservation for a budget) */
  add: number;
  /** the life of a counter this check creates */
  ttlMs: number;
}

/** The first check that refused, and how long its counter still lives (ms); null when all passed and were counted. */
export type Refusal = { index: number; retryMs: number } | null;

export interface CounterStore {
  /**
   * Refuses when a counter has reached its limit, or would pass it with `add` while it already counts something
   * (an empty window admits one request whatever its bound, so a large max_tokens is not refused for ever).
   */
  admit(checks: Check[]): Refusal | Promise<Refusal>;
  /** Adds to a counter, creating it for `ttlMs`; the new value. */
  add(key: string, amount: number, ttlMs: number): number | Promise<number>;
  /** Corrects a counter while it still lives (a window that has ended is not created again); the new value, or 0. */
  adjust(key: string, delta: number): number | Promise<number>;
  read(keys: string[]): number[] | Promise<number[]>;
  /** How long a counter still lives (ms); 0 when there is none (a rolling budget's reset time). */
  expiresIn(key: string): number | Promise<number>;
}

const refuses = (used: number, limit: number, add: number) => used >= limit || (used > 0 && used + add > limit);

interface Entry {
  value: number;
  expires: number;
}

/**
 * One process's counters, bounded: expired entries are swept when the map grows, and past `maxEntries` the oldest
 * are dropped (a dropped window forgets what it counted: an instance short of memory lets requests through rather
 * than grow without end).
 */
export class MemoryCounters implements CounterStore {
  private readonly entries = new Map<string, Entry>();
  private nextSweep = 0;

  constructor(
    private readonly now: () => number = Date.now,
    readonly maxEntries = 100_000,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  private live(key: string, now: number): Entry | undefined {
    const e = this.entries.get(key);
    if (e && e.expires <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  private create(key: string, value: number, ttlMs: number, now: number): Entry {
    if (this.entries.size >= this.maxEntries || now >= this.nextSweep) this.sweep(now);
    const e = { value, expires: now + ttlMs };
    this.entries.set(key, e);
    return e;
  }

  private sweep(now: number): void {
    this.nextSweep = now + 60_000;
    for (const [k, e] of this.entries) if (e.expires <= now) this.entries.delete(k);
    // still full: the oldest created go first (a Map iterates in insertion order)
    for (const k of this.entries.keys()) {
      if (this.entries.size < this.maxEntries) break;
      this.entries.delete(k);
    }
  }

  admit(checks: Check[]): Refusal {
    const now = this.now();
    for (let i = 0; i < checks.length; i++) {
      const c = checks[i];
      const e = this.live(c.key, now);
      if (e && refuses(e.value, c.limit, c.add)) return { index: i, retryMs: e.expires - now };
    }
    for (const c of checks) if (c.add > 0) this.addAt(c.key, c.add, c.ttlMs, now);
    return null;
  }

  private addAt(key: string, amount: number, ttlMs: number, now: number): number {
    const e = this.live(key, now);
    if (e) return (e.value += amount);
    return this.create(key, amount, ttlMs, now).value;
  }

  add(key: string, amount: number, ttlMs: number): number {
    return this.addAt(key, amount, ttlMs, this.now());
  }

  adjust(key: string, delta: number): number {
    const e = this.live(key, this.now());
    return e ? (e.value = Math.max(0, e.value + delta)) : 0;
  }

  read(keys: string[]): number[] {
    const now = this.now();
    return keys.map((k) => this.live(k, now)?.value ?? 0);
  }

  expiresIn(key: string): number {
    const now = this.now();
    const e = this.live(key, now);
    return e ? e.expires - now : 0;
  }
}

// KEYS: the counters. ARGV: per key, limit, add, ttl ms. Returns {index (1-based), pttl} of the first refusal, or
// {0, 0} after counting every add (a new counter gets its ttl).
const ADMIT_LUA = `
for i = 1, #KEYS do
  local used = tonumber(redis.call('GET', KEYS[i]) or '0')
  local limit = tonumber(ARGV[i * 3 - 2])
  local add = tonumber(ARGV[i * 3 - 1])
  if used >= limit or (used > 0 and used + add > limit) then
    return {i, redis.call('PTTL', KEYS[i])}
  end
end
for i = 1, #KEYS do
  local add = tonumber(ARGV[i * 3 - 1])
  if add > 0 then
    redis.call('INCRBY', KEYS[i], add)
    if redis.call('PTTL', KEYS[i]) < 0 then redis.call('PEXPIRE', KEYS[i], ARGV[i * 3]) end
  end
end
return {0, 0}
`;

const ADD_LUA = `
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return v
`;

const ADJUST_LUA = `
if redis.call('EXISTS', KEYS[1]) == 1 then
  local v = redis.call('INCRBY', KEYS[1], ARGV[1])
  if v < 0 then
    redis.call('SET', KEYS[1], 0, 'KEEPTTL')
    return 0
  end
  return v
end
return 0
`;

/** Counters every instance shares; keys under the instance's Redis prefix. A Redis outage lets requests through. */
export class RedisCounters implements CounterStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly log: Logger,
  ) {}

  async admit(checks: Check[]): Promise<Refusal> {
    const args: (string | number)[] = [];
    for (const c of checks) args.push(c.limit, c.add, Math.max(1, Math.ceil(c.ttlMs)));
    const r = await redisAsk(
      this.redis,
      this.log,
      'usage limits',
      async (redis) =>
        (await redis.eval(ADMIT_LUA, checks.length, ...checks.map((c) => this.prefix + c.key), ...args)) as [
          number,
          number,
        ],
    );
    if (!r || !r[0]) return null;
    return { index: r[0] - 1, retryMs: Math.max(0, r[1]) };
  }

  async add(key: string, amount: number, ttlMs: number): Promise<number> {
    const v = await redisAsk(this.redis, this.log, 'usage limits', (redis) =>
      redis.eval(ADD_LUA, 1, this.prefix + key, Math.round(amount), Math.max(1, Math.ceil(ttlMs))),
    );
    return Number(v ?? 0);
  }

  async adjust(key: string, delta: number): Promise<number> {
    const v = await redisAsk(this.redis, this.log, 'usage limits', (redis) =>
      redis.eval(ADJUST_LUA, 1, this.prefix + key, Math.round(delta)),
    );
    return Number(v ?? 0);
  }

  async read(keys: string[]): Promise<number[]> {
    if (!keys.length) return [];
    const vs = await redisAsk(this.redis, this.log, 'usage limits', (redis) =>
      redis.mget(...keys.map((k) => this.prefix + k)),
    );
    return keys.map((_, i) => Number(vs?.[i] ?? 0) || 0);
  }

  async expiresIn(key: string): Promise<number> {
    const ms = await redisAsk(this.redis, this.log, 'usage limits', (redis) => redis.pttl(this.prefix + key));
    return Math.max(0, Number(ms ?? 0));
  }
}
