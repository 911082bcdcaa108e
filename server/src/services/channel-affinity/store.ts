// Where sticky choices live: this process's memory (an LRU bounded by max_entries, each entry with its TTL), or Redis
// when it is configured, so every node behind the load balancer sends one conversation to one channel. Keys are
// new-api's (`new-api:channel_affinity:v1:<rule>:<group>:<value>`) after the instance's Redis prefix; the value is the
// channel id as decimal text, as new-api's cache writes it.
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { redisAsk, redisTrouble } from '../cache/redis-outage.js';

export const NAMESPACE = 'new-api:channel_affinity:v1';

export interface AffinityStore {
  readonly algorithm: string;
  /** the channel id, or 0 when none (or expired); a Promise only in Redis */
  get(suffix: string): number | Promise<number>;
  set(suffix: string, channelId: number, ttlSeconds: number): void | Promise<void>;
  delete(suffix: string): void | Promise<void>;
  /** every live key suffix (after the namespace and its colon) */
  suffixes(): Promise<string[]>;
  /** deletes the suffixes starting with `start` ('' = all); how many were deleted */
  clear(start: string): Promise<number>;
  resize(maxEntries: number): void;
}

/** Map order is use order: the first key is the least recently used one. */
export class MemoryStore implements AffinityStore {
  readonly algorithm = 'lru';
  private readonly entries = new Map<string, { id: number; until: number }>();

  constructor(private capacity: number) {}

  get(suffix: string): number {
    const e = this.entries.get(suffix);
    if (!e) return 0;
    this.entries.delete(suffix);
    if (e.until <= Date.now()) return 0;
    this.entries.set(suffix, e);
    return e.id;
  }

  set(suffix: string, channelId: number, ttlSeconds: number): void {
    this.entries.delete(suffix);
    this.entries.set(suffix, { id: channelId, until: Date.now() + ttlSeconds * 1000 });
    this.evict();
  }

  delete(suffix: string): void {
    this.entries.delete(suffix);
  }

  suffixes(): Promise<string[]> {
    const now = Date.now();
    const out: string[] = [];
    for (const [k, e] of this.entries) {
      if (e.until > now) out.push(k);
      else this.entries.delete(k);
    }
    return Promise.resolve(out);
  }

  clear(start: string): Promise<number> {
    let n = 0;
    const now = Date.now();
    for (const [k, e] of this.entries) {
      if (!k.startsWith(start)) continue;
      this.entries.delete(k);
      if (e.until > now) n++;
    }
    return Promise.resolve(n);
  }

  resize(maxEntries: number): void {
    this.capacity = maxEntries;
    this.evict();
  }

  private evict(): void {
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }
}

/** Redis glob characters in a literal part of a SCAN pattern. */
function globEscape(s: string): string {
  return s.replace(/[*?[\]\\]/g, (c) => '\\' + c);
}

export class RedisStore implements AffinityStore {
  readonly algorithm = 'redis';
  private readonly base: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly log: Logger,
  ) {
    this.base = `${prefix}${NAMESPACE}:`;
  }

  async get(suffix: string): Promise<number> {
    const v = await redisAsk(this.redis, this.log, 'channel affinity', (r) => r.get(this.base + suffix));
    const id = Number(v);
    return Number.isInteger(id) && id > 0 ? id : 0;
  }

  async set(suffix: string, channelId: number, ttlSeconds: number): Promise<void> {
    await redisAsk(this.redis, this.log, 'channel affinity', (r) =>
      r.set(this.base + suffix, String(channelId), 'EX', ttlSeconds),
    );
  }

  async delete(suffix: string): Promise<void> {
    await redisAsk(this.redis, this.log, 'channel affinity', (r) => r.del(this.base + suffix));
  }

  /** new-api's statistics with Redis away: logged, and no entry counted */
  async suffixes(): Promise<string[]> {
    const out: string[] = [];
    try {
      for await (const keys of this.redis.scanStream({ match: globEscape(this.base) + '*', count: 500 }))
        for (const k of keys as string[]) out.push(k.slice(this.base.length));
    } catch (err) {
      redisTrouble(this.log, err, 'channel affinity statistics');
    }
    return out;
  }

  async clear(start: string): Promise<number> {
    let n = 0;
    const match = globEscape(this.base + start) + '*';
    for await (const keys of this.redis.scanStream({ match, count: 500 })) {
      if ((keys as string[]).length) n += await this.redis.unlink(...(keys as string[]));
    }
    return n;
  }

  resize(): void {
    // bounded by each entry's TTL (and Redis's own maxmemory policy)
  }
}
