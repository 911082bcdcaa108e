// Step 6c, channel cap: a channel with a daily cap (daily_token_cap / daily_quota_cap in its setting; services/limits/)
// counts the request's bound (its tokens' bound, its reservation) on its day counters when it is picked, and settle
// corrects that to the usage, so requests in flight together cannot pass the cap together. A channel the request would
// take past its cap is passed over for another one, as a capped one is (route.ts); none left answers "no channel". A
// channel pinned by the key (`sk-<key>-<id>`) is used whatever its cap, and counted only after the charge.
import type { CachedChannel } from '../../services/cache/channel-cache.js';
import { channelCaps, usageLimits } from '../../services/limits/index.js';
import { tokenBound } from './limit.js';
import { noChannel, pickUncapped, reroute } from './route.js';
import type { RelayState } from './state.js';

/** Nothing to wait for unless the routed channel has a cap. */
export function holdChannel(s: RelayState): Promise<void> | undefined {
  if (!s.channel.setting || s.caller.channelId !== null || !channelCaps(s.channel.setting)) return;
  return holdFirst(s);
}

async function holdFirst(s: RelayState): Promise<void> {
  const refused = new Set<number>();
  for (let channel: CachedChannel | null = s.channel; channel; channel = pickUncapped(s, 0, refused)) {
    if (refused.has(channel.id)) break; // every channel left was tried
    if (await held(s, channel)) {
      s.channel = channel;
      return;
    }
    refused.add(channel.id);
  }
  throw noChannel(s);
}

/**
 * The channel for retry `i` once the previous one failed: its hold goes back (it charged nothing there), and a
 * capped channel is held before it is used, or passed over. Null when none is left.
 */
export async function rerouteHeld(s: RelayState, i: number, failed: Set<number>): Promise<CachedChannel | null> {
  const previous = s.channelHold;
  if (previous) {
    s.channelHold = null;
    void usageLimits(s.ctx).channelReleased(previous);
  }
  const refused = new Set<number>();
  for (;;) {
    const next = reroute(s, i, failed);
    if (!next || refused.has(next.id)) return null;
    if (await held(s, next)) return next;
    refused.add(next.id);
    failed.add(next.id);
  }
}

/** True when the channel may take the request: it has no cap, or the request's bound fits and is now counted. */
async function held(s: RelayState, channel: CachedChannel): Promise<boolean> {
  const caps = channel.setting ? channelCaps(channel.setting) : null;
  if (!caps) return true;
  const tokens = caps.tokens ? tokenBound(s) : 0;
  const hold = await usageLimits(s.ctx).channelHeld(channel, caps, tokens, s.reserveAmount, s.req.id);
  if (hold) s.channelHold = hold;
  return !!hold;
}
