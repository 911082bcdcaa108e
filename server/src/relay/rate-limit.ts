// ModelRequestRateLimit (new-api-compat.md §10), per user id, sliding window of DurationMinutes: at most
// ModelRequestRateLimitCount requests (0 = unlimited) and ModelRequestRateLimitSuccessCount successful ones. With Redis
// the logs are new-api's lists `rateLimit:MRRL:<uid>` (requests) and `rateLimit:MRRLS:<uid>` (successes), shared by
// every node; without Redis they live in this process. Fixes of new-api: the limit check returns at once (its Redis
// path ran the handler after writing the 429), the check-and-record is one atomic script (new-api's separate
// LLEN/LINDEX/LPUSH let concurrent requests pass together), and the success counter counts only successful requests
// (new-api's memory variant also counted its own `_check` probes).
import type { Redis } from 'ioredis';
import { redisAsk } from '../services/cache/redis-outage.js';
import type { AppContext } from '../context.js';
import { RelayError } from './errors.js';
import { trimOldest } from '../lib/bounded.js';

interface Limits {
  minutes: number;
  windowMs: number;
  total: number;
  success: number;
}

function limitsOf(ctx: AppContext): Limits {
  const o = ctx.options;
  const minutes = Math.max(1, o.num('ModelRequestRateLimitDurationMinutes', 1));
  return {
    minutes,
    windowMs: minutes * 60_000,
    total: o.num('ModelRequestRateLimitCount', 0),
    success: o.num('ModelRequestRateLimitSuccessCount', 1000),
  };
}

const refusal = (minutes: number, count: number) =>
  new RelayError(429, `您已达到请求数限制：${minutes}分钟内最多请求${count}次`);

export interface ModelRateLimiter {
  /** Throws (or rejects with) the 429 RelayError when the user is over a limit; otherwise records the request. */
  check(userId: number): void | Promise<void>;
  /** Records a successful request. */
  success(userId: number, reqId?: string): void;
}

interface Window {
  total: number[];
  success: number[];
}

/** Most users with a window held at once; past it, empty windows go first, then the oldest. */
export const MODEL_RATE_LIMIT_MAX_USERS = 100_000;

export class MemoryModelRateLimiter implements ModelRateLimiter {
  private readonly users = new Map<number, Window>();
  private sweep = 0;

  constructor(
    private readonly ctx: AppContext,
    private readonly maxUsers = MODEL_RATE_LIMIT_MAX_USERS,
  ) {}

  get size(): number {
    return this.users.size;
  }

  private window(userId: number, now: number, windowMs: number): Window {
    let w = this.users.get(userId);
    if (!w) {
      if (this.users.size >= this.maxUsers) {
        for (const [id, x] of this.users) if (!x.total.length && !x.success.length) this.users.delete(id);
        trimOldest(this.users, this.maxUsers);
      }
      this.users.set(userId, (w = { total: [], success: [] }));
    }
    const cut = now - windowMs;
    while (w.total.length && w.total[0] <= cut) w.total.shift();
    while (w.success.length && w.success[0] <= cut) w.success.shift();
    if (now - this.sweep > windowMs) {
      this.sweep = now;
      for (const [id, x] of this.users)
        if (!x.total.length && !x.success.length && id !== userId) this.users.delete(id);
    }
    return w;
  }

  check(userId: number): void {
    const p = limitsOf(this.ctx);
    const now = Date.now();
    const w = this.window(userId, now, p.windowMs);
    if (p.total > 0 && w.total.length >= p.total) throw refusal(p.minutes, p.total);
    if (p.success > 0 && w.success.length >= p.success) throw refusal(p.minutes, p.success);
    w.total.push(now);
  }

  success(userId: number): void {
    const w = this.users.get(userId);
    if (w) w.success.push(Date.now());
  }
}

// KEYS: requests log, successes log (newest first, millisecond times). ARGV: total max, success max, window ms, now.
// 1 = over the request limit, 2 = over the success limit, 0 = passed and recorded. A log is full when it holds `max`
// entries and the oldest of them is inside the window (new-api's sliding log).
const CHECK_LUA = `
local function full(key, max, windowMs, now)
  if max <= 0 then return false end
  if redis.call('LLEN', key) < max then return false end
  local oldest = tonumber(redis.call('LINDEX', key, max - 1))
  return oldest ~= nil and now - oldest < windowMs
end
local total = tonumber(ARGV[1])
local success = tonumber(ARGV[2])
local windowMs = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
if full(KEYS[1], total, windowMs, now) then return 1 end
if full(KEYS[2], success, windowMs, now) then return 2 end
if total > 0 then
  redis.call('LPUSH', KEYS[1], now)
  redis.call('LTRIM', KEYS[1], 0, total - 1)
  redis.call('PEXPIRE', KEYS[1], windowMs)
end
return 0
`;

class RedisModelRateLimiter implements ModelRateLimiter {
  constructor(
    private readonly ctx: AppContext,
    private readonly redis: Redis,
  ) {}

  private key(mark: string, userId: number): string {
    return `${this.ctx.redisPrefix}rateLimit:${mark}:${userId}`;
  }

  async check(userId: number): Promise<void> {
    const p = limitsOf(this.ctx);
    // a Redis outage lets requests through (services/cache/redis-outage.ts)
    const r = await redisAsk(this.redis, this.ctx.log, 'model rate limit', async (redis) =>
      Number(
        await redis.eval(
          CHECK_LUA,
          2,
          this.key('MRRL', userId),
          this.key('MRRLS', userId),
          p.total,
          p.success,
          p.windowMs,
          Date.now(),
        ),
      ),
    );
    if (r === 1) throw refusal(p.minutes, p.total);
    if (r === 2) throw refusal(p.minutes, p.success);
  }

  success(userId: number, reqId?: string): void {
    const p = limitsOf(this.ctx);
    if (p.success <= 0) return;
    const key = this.key('MRRLS', userId);
    this.redis
      .multi()
      .lpush(key, Date.now())
      .ltrim(key, 0, p.success - 1)
      .pexpire(key, p.windowMs)
      .exec()
      .catch((err) => this.ctx.log.warn({ err, reqId }, 'model rate limit: recording a success failed'));
  }
}

const limiters = new WeakMap<AppContext, ModelRateLimiter>();

/** The instance's limiter: on Redis when it is configured (shared by all nodes), else in memory. */
export function modelRateLimit(ctx: AppContext): ModelRateLimiter {
  let l = limiters.get(ctx);
  if (!l)
    limiters.set(ctx, (l = ctx.redis ? new RedisModelRateLimiter(ctx, ctx.redis) : new MemoryModelRateLimiter(ctx)));
  return l;
}
