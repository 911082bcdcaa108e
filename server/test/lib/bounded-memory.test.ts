// In-process maps keyed by traffic stay within their size bound: filled with more distinct keys than the bound,
// they hold at most the bound, and they still do their job for the keys they keep.
import { describe, expect, it, vi } from 'vitest';
import { CappedMap, trimOldest } from '../../src/lib/bounded.js';
import { MemoryRateLimiter } from '../../src/lib/rate-limit.js';
import { MemoryModelRateLimiter } from '../../src/relay/rate-limit.js';
import { QuotaNotifier } from '../../src/services/quota-notify.js';
import { OptionStore } from '../../src/services/options.js';
import { priceText, priceTexts } from '../../src/relay/consume-log.js';
import { originCache, splitBase } from '../../src/relay/providers/openai/index.js';
import { closeProxies, proxies, transportFor } from '../../src/relay/channel-setting.js';
import type { Transport, UndiciTransport } from '../../src/relay/transport/index.js';
import type { PriceData } from '../../src/services/pricing/index.js';
import { wrapSqlite } from '../../src/db/connect.js';
import BetterSqlite3 from 'better-sqlite3';
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

  it('CappedMap forgets the oldest-inserted key past its bound, and hands each dropped value to onDrop', () => {
    const dropped: string[] = [];
    const m = new CappedMap<number, string>(3, (v) => dropped.push(v));
    for (let i = 1; i <= 10; i++) m.set(i, `v${i}`);
    expect(m.size).toBe(3);
    expect([...m.keys()]).toEqual([8, 9, 10]);
    expect(dropped).toEqual(['v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7']);
    m.set(10, 'again'); // an update is not an insert: nothing forgotten
    expect([...m.entries()]).toEqual([
      [8, 'v8'],
      [9, 'v9'],
      [10, 'again'],
    ]);
  });

  it('consume-log price texts (relay/consume-log.ts): at most their bound however many model names', () => {
    const price = { usePrice: false, modelPrice: 0, modelRatio: 2, completionRatio: 3, groupRatio: 1, cacheRatio: 1 };
    const p = price as PriceData;
    for (let i = 0; i < priceTexts.max * 3; i++) priceText(`model-${i}`, p);
    expect(priceTexts.size).toBe(priceTexts.max);
    // still a memo for the names it keeps, and still right for a name it forgot
    const last = `model-${priceTexts.max * 3 - 1}`;
    expect(priceText(last, p)).toBe(priceText(last, p));
    expect(priceText('model-0', p).content).toBe('模型倍率 2.00，补全倍率 3.00，分组倍率 1.00');
    expect(priceTexts.size).toBe(priceTexts.max);
  });

  it('base-URL splits (relay/providers/openai): at most their bound however many base URLs', () => {
    for (let i = 0; i < originCache.max + 500; i++) splitBase(`https://h${i}.example/v${i}/`);
    expect(originCache.size).toBe(originCache.max);
    expect(splitBase('https://h0.example/v0/')).toEqual({ origin: 'https://h0.example', prefix: '/v0' });
  });

  it('SQLite prepared statements (db/connect.ts): at most their bound however many SQL texts, each still right', () => {
    const database = new BetterSqlite3(':memory:');
    try {
      const w = wrapSqlite(database) as unknown as {
        statements: CappedMap<string, unknown>;
        prepare(sql: string): { all(params: unknown[]): unknown[] };
      };
      // distinct texts (in the server: one per IN-list length, and console lists take their ids from the caller)
      for (let n = 1; n <= w.statements.max + 200; n++)
        expect(w.prepare(`select ? + ${n} as v`).all([1])).toEqual([{ v: n + 1 }]);
      expect(w.statements.size).toBe(w.statements.max);
      expect(w.prepare('select ? as v').all([7])).toEqual([{ v: 7 }]);
      expect(w.statements.size).toBe(w.statements.max);
    } finally {
      database.close();
    }
  });

  it('channel proxies (relay/channel-setting.ts): at most their bound, the forgotten ones closed', async () => {
    const direct = {} as Transport;
    try {
      const first = transportFor({ setting: { proxy: 'http://127.0.0.1:1' } } as never, direct) as UndiciTransport;
      // its proxy agent, made (undici imported) as for a first request
      const agent = await first.ready();
      for (let i = 2; i <= proxies.max + 10; i++)
        transportFor({ setting: { proxy: `http://127.0.0.1:${i}` } } as never, direct);
      expect(proxies.size).toBe(proxies.max);
      expect(proxies.has('http://127.0.0.1:1')).toBe(false);
      expect(first.closed).toBe(true);
      await vi.waitFor(() => expect((agent as unknown as { closed: boolean }).closed).toBe(true));
      // a kept proxy's transport is reused; a channel without a proxy goes direct
      const lastUrl = `http://127.0.0.1:${proxies.max + 10}`;
      expect(transportFor({ setting: { proxy: lastUrl } } as never, direct)).toBe(proxies.get(lastUrl));
      expect(transportFor({ setting: null } as never, direct)).toBe(direct);
    } finally {
      await closeProxies();
    }
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
