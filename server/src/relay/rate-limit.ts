// ModelRequestRateLimit (facts §10), per user id, sliding window of DurationMinutes. Process-local (one instance per
// AppContext). Fixes of new-api: the limit check returns at once (no handler run after the 429), and the success
// counter counts only successful requests (new-api's memory variant also counted its own `_check` probes).
import type { AppContext } from '../context.js';
import { RelayError } from './errors.js';

interface Window {
  total: number[];
  success: number[];
}

class ModelRateLimiter {
  private readonly users = new Map<number, Window>();
  private sweep = 0;

  constructor(private readonly ctx: AppContext) {}

  private params() {
    const o = this.ctx.options;
    const minutes = Math.max(1, o.num('ModelRequestRateLimitDurationMinutes', 1));
    return { minutes, windowMs: minutes * 60_000, total: o.num('ModelRequestRateLimitCount', 0), success: o.num('ModelRequestRateLimitSuccessCount', 1000) };
  }

  private window(userId: number, now: number, windowMs: number): Window {
    let w = this.users.get(userId);
    if (!w) this.users.set(userId, (w = { total: [], success: [] }));
    const cut = now - windowMs;
    while (w.total.length && w.total[0] <= cut) w.total.shift();
    while (w.success.length && w.success[0] <= cut) w.success.shift();
    if (now - this.sweep > windowMs) {
      this.sweep = now;
      for (const [id, x] of this.users) if (!x.total.length && !x.success.length && id !== userId) this.users.delete(id);
    }
    return w;
  }

  check(userId: number): void {
    const p = this.params();
    const now = Date.now();
    const w = this.window(userId, now, p.windowMs);
    if (p.total > 0 && w.total.length >= p.total) {
      throw new RelayError(429, `您已达到请求数限制：${p.minutes}分钟内最多请求${p.total}次`);
    }
    if (p.success > 0 && w.success.length >= p.success) {
      throw new RelayError(429, `您已达到请求数限制：${p.minutes}分钟内最多请求${p.success}次`);
    }
    w.total.push(now);
  }

  success(userId: number): void {
    const w = this.users.get(userId);
    if (w) w.success.push(Date.now());
  }
}

const limiters = new WeakMap<AppContext, ModelRateLimiter>();

export function modelRateLimit(ctx: AppContext): ModelRateLimiter {
  let l = limiters.get(ctx);
  if (!l) limiters.set(ctx, (l = new ModelRateLimiter(ctx)));
  return l;
}
