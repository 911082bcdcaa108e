// Per-client-IP request limits (new-api-compat.md §3.3, §10): a sliding log of the last N request times per key. A
// request passes when fewer than N were logged, or when the oldest of the last N is older than the window. Refusals are
// a bare 429 with no body, as in new-api. Redis keeps the log shared between nodes; otherwise it lives in memory.
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { trimOldest } from './bounded.js';
import { requestLog } from './request-log.js';

export interface RateLimitRule {
  enabled: boolean;
  count: number;
  durationSec: number;
}

/** What the limiter needs of the application (the server's context is one). */
interface RateLimitContext {
  config: { criticalRateLimit: RateLimitRule; globalApiRateLimit: RateLimitRule };
  redis: Redis | null;
  redisPrefix: string;
  log: Logger;
  onClose(fn: () => Promise<void> | void): void;
}

export interface RateLimiter {
  /** Records one request for `key` and says whether it may pass. */
  hit(key: string, max: number, durationSec: number): Promise<boolean>;
}

/** How long an idle key is kept (new-api's RateLimitKeyExpirationDuration). */
const KEY_TTL_MS = 20 * 60 * 1000;

/** Most keys (client addresses) held at once; past it, idle ones go first, then the oldest. */
export const RATE_LIMIT_MAX_KEYS = 100_000;

export class MemoryRateLimiter implements RateLimiter {
  private readonly logs = new Map<string, number[]>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly maxKeys = RATE_LIMIT_MAX_KEYS) {
    this.timer = setInterval(() => this.evictIdle(Date.now()), KEY_TTL_MS);
    this.timer.unref();
  }

  async hit(key: string, max: number, durationSec: number): Promise<boolean> {
    return this.hitSync(key, max, durationSec, Date.now());
  }

  /** Synchronous core; `now` is injectable for tests. Newest entries are at the end. */
  hitSync(key: string, max: number, durationSec: number, now: number): boolean {
    let log = this.logs.get(key);
    if (!log) {
      if (this.logs.size >= this.maxKeys) {
        this.evictIdle(now);
        trimOldest(this.logs, this.maxKeys);
      }
      log = [];
      this.logs.set(key, log);
    }
    if (log.length < max) {
      log.push(now);
      return true;
    }
    const oldest = log[log.length - max];
    if (now - oldest < durationSec * 1000) return false;
    log.push(now);
    if (log.length > max) log.splice(0, log.length - max);
    return true;
  }

  private evictIdle(now: number): void {
    for (const [key, log] of this.logs) {
      if (!log.length || now - log[log.length - 1] > KEY_TTL_MS) this.logs.delete(key);
    }
  }

  stop(): void {
    clearInterval(this.timer);
  }

  get size(): number {
    return this.logs.size;
  }
}

// One round trip and atomic, unlike new-api's LLEN/LINDEX/LPUSH sequence (two concurrent requests could both pass
// the length check there). The list holds millisecond times, newest first.
const SLIDING_LOG_LUA = `
local key = KEYS[1]
local max = tonumber(ARGV[1])
local windowMs = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local len = redis.call('LLEN', key)
if len < max then
  redis.call('LPUSH', key, now)
  redis.call('PEXPIRE', key, ttl)
  return 1
end
local oldest = tonumber(redis.call('LINDEX', key, max - 1))
if oldest and now - oldest < windowMs then
  redis.call('PEXPIRE', key, ttl)
  return 0
end
redis.call('LPUSH', key, now)
redis.call('LTRIM', key, 0, max - 1)
redis.call('PEXPIRE', key, ttl)
return 1
`;

export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async hit(key: string, max: number, durationSec: number): Promise<boolean> {
    const ttl = Math.max(KEY_TTL_MS, durationSec * 1000);
    const res = await this.redis.eval(
      SLIDING_LOG_LUA,
      1,
      `${this.prefix}rateLimit:${key}`,
      max,
      durationSec * 1000,
      Date.now(),
      ttl,
    );
    return Number(res) === 1;
  }
}

const limiters = new WeakMap<RateLimitContext, RateLimiter>();

/** The instance's limiter: Redis-backed when Redis is configured, else in memory. */
export function rateLimiterFor(ctx: RateLimitContext): RateLimiter {
  let limiter = limiters.get(ctx);
  if (!limiter) {
    if (ctx.redis) {
      limiter = new RedisRateLimiter(ctx.redis, ctx.redisPrefix);
    } else {
      const mem = new MemoryRateLimiter();
      ctx.onClose(() => mem.stop());
      limiter = mem;
    }
    limiters.set(ctx, limiter);
  }
  return limiter;
}

async function allow(ctx: RateLimitContext, mark: string, rule: RateLimitRule, req: FastifyRequest): Promise<boolean> {
  if (!rule.enabled) return true;
  try {
    return await rateLimiterFor(ctx).hit(mark + req.ip, rule.count, rule.durationSec);
  } catch (err) {
    // A Redis outage must not lock everybody out of the console.
    requestLog(ctx.log, req).warn({ err }, 'rate limiter unavailable');
    return true;
  }
}

function refuse(reply: FastifyReply): FastifyReply {
  return reply.status(429).send();
}

/** Route-level hook, e.g. `{ onRequest: rateLimitHook(ctx, 'CT', ctx.config.criticalRateLimit) }`. */
export function rateLimitHook(ctx: RateLimitContext, mark: string, rule: RateLimitRule): onRequestAsyncHookHandler {
  return async function (req, reply) {
    if (!(await allow(ctx, mark, rule, req))) return refuse(reply);
  };
}

/** CriticalRateLimit (mark CT): login, register, verification and password reset. */
export function criticalRateLimit(ctx: RateLimitContext): onRequestAsyncHookHandler {
  return rateLimitHook(ctx, 'CT', ctx.config.criticalRateLimit);
}

/** GlobalAPIRateLimit (mark GA) on every /api route, registered once on the root instance. */
export function registerGlobalApiRateLimit(app: FastifyInstance, ctx: RateLimitContext): void {
  const rule = ctx.config.globalApiRateLimit;
  if (!rule.enabled) return;
  app.addHook('onRequest', async (req, reply) => {
    const path = req.url;
    if (!(path === '/api' || path.startsWith('/api/') || path.startsWith('/api?'))) return;
    if (!(await allow(ctx, 'GA', rule, req))) return refuse(reply);
  });
}
