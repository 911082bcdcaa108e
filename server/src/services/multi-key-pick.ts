// The key of one attempt on a multi-key channel (services/multi-key.ts). A single-key channel is returned as it is,
// synchronously: no lookup, no allocation. `random` picks among the enabled keys of the cached channel; `polling` takes
// turns in key order, skipping disabled keys, with the index shared by every node: in Redis when it is configured (one
// script call), else in the channel's row (multi-key-store.ts). Neither is held in the channel cache, so a cache reload
// does not reset the rotation.
import type { AppContext } from '../context.js';
import type { CachedChannel, MultiKeyState } from './cache/channel-cache.js';
import { redisAsk } from './cache/redis-outage.js';
import { nextPolledKeyFromDb } from './multi-key-store.js';

// KEYS[1] the channel's index; ARGV[1] one character per key, '1' when enabled. Same step as nextEnabledFrom. The
// index expires after 30 days unused (a deleted channel's goes away; a channel idle that long starts at key 0).
const POLL_LUA = `
local flags = ARGV[1]
local n = string.len(flags)
local start = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if start < 0 or start >= n then start = 0 end
for k = 0, n - 1 do
  local i = (start + k) % n
  if string.sub(flags, i + 1, i + 1) == '1' then
    redis.call('SET', KEYS[1], (i + 1) % n, 'EX', 2592000)
    return i
  end
end
return -1`;

/** The channel as one attempt uses it: its key is one key, and `keyIndex` says which. */
export function withKey(ch: CachedChannel, index: number, key: string): CachedChannel {
  return { ...ch, key, keyIndex: index };
}

/**
 * The channel with the key this attempt uses; null when a multi-key channel has no key enabled any more (another node
 * disabled the last one since this node's cache was loaded).
 */
export function keyedChannel(ctx: AppContext, ch: CachedChannel): CachedChannel | null | Promise<CachedChannel | null> {
  const mk = ch.multiKey;
  if (!mk) return ch;
  if (!mk.enabled.length) return null;
  if (mk.mode !== 'polling') {
    // random (and new-api's fallback for an unknown mode is the first enabled key; random is as good and spreads load)
    const i = mk.enabled[Math.floor(Math.random() * mk.enabled.length)];
    return withKey(ch, i, mk.keys[i]);
  }
  return polled(ctx, ch, mk);
}

async function polled(ctx: AppContext, ch: CachedChannel, mk: MultiKeyState): Promise<CachedChannel | null> {
  if (ctx.redis) {
    const i = await redisAsk(ctx.redis, ctx.log, 'multi-key polling', (r) =>
      r.eval(POLL_LUA, 1, `${ctx.redisPrefix}channel_poll:${ch.id}`, mk.flags),
    );
    if (typeof i === 'number') return i >= 0 && i < mk.keys.length ? withKey(ch, i, mk.keys[i]) : null;
    // Redis not answering: the database keeps the turns
  }
  const next = await nextPolledKeyFromDb(ctx, ch.id);
  return next ? withKey(ch, next.index, next.key) : null;
}

/** The key a channel test uses when no index is asked for: the first enabled one (the test does not move the turn). */
export function firstEnabledKey(ch: CachedChannel): CachedChannel | null {
  const mk = ch.multiKey;
  if (!mk) return ch;
  const i = mk.enabled[0];
  return i === undefined ? null : withKey(ch, i, mk.keys[i]);
}
