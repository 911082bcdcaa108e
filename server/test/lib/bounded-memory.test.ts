// In-process maps keyed by traffic stay within their size bound: filled with more distinct keys than the bound,
// they hold at most the bound, and they still do their job for the keys they keep.
import { describe, expect, it } from 'vitest';
import { trimOldest } from '../../src/lib/bounded.js';
import { MemoryRateLimiter } from '../../src/lib/rate-limit.js';
import { MemoryModelRateLimiter } from '../../src/relay/rate-limit.js';
import { QuotaNotifier } from '../../src/services/quota-notify.js';
import { OptionStore } from '../../src/services/options.js';
import type { AppContext } from '../../src/context.js';

/** An AppContext with only the parts these structures read: in-memory options over defaults, no Redis. */
function bareContext(options: Record<string, string> = {}): AppContext {
  const store = new OptionStore(null as never, 'sqlite');
  for (const [k, v] of Object.entries(options)) store['apply'](k, v);
  return { options: store, redis: null, redisPrefix: '', onClose: () => undefined } as unknown as AppContext;
}

describe('bounded in-process maps', () => {
  it('trimOldest leaves room for one more, deleting in insertion order', () => {
    const m = new Map([1, 2, 3, 4, 5].map((k) => [k, k]));
    trimOldest(m, 3);
    expect([...m.keys()]).toEqual([4, 5]);
  });

  it('per-IP rate limiter (lib/rate-limit.ts): at most maxKeys addresses, the newest kept and still limited', () => {
    const rl = new MemoryRateLimiter(100);
    try {
      const now = Date.now();
      for (let i = 0; i < 1000; i++) expect(rl.hitSync(`10.0.${i >> 8}.${i & 255}`, 2, 60, now)).toBe(true);
      expect(rl.size).toBeLessThanOrEqual(100);
      const last = `10.0.${999 >> 8}.${999 & 255}`;
      expect(rl.hitSync(last, 2, 60, now)).toBe(true);
      expect(rl.hitSync(last, 2, 60, now)).toBe(false);
    } finally {
      rl.stop();
    }
  });

  it('model request rate limiter (relay/rate-limit.ts): at most maxUsers windows, the limit still applies', () => {
    const ctx = bareContext({ ModelRequestRateLimitCount: '2' });
    const rl = new MemoryModelRateLimiter(ctx, 50);
    for (let id = 1; id <= 500; id++) rl.check(id);
    expect(rl.size).toBeLessThanOrEqual(50);
    rl.check(500);
    expect(() => rl.check(500)).toThrow(/请求数限制/);
  });

  it('notice slots (services/quota-notify.ts): at most maxSlots remembered, a recent one still holds', async () => {
    const n = new QuotaNotifier(bareContext());
    n.maxSlots = 100;
    for (let id = 1; id <= 1000; id++) expect(await n['takeSlot'](id)).toBe(true);
    expect(n.slotCount).toBeLessThanOrEqual(100);
    expect(await n['takeSlot'](1000)).toBe(false);
  });
});
