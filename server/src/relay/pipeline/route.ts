// Step 4, route: the channel (new-api-compat.md §4.4): the one an admin pinned (`sk-<key>-<id>`), else a pick by
// group, model and priority; a retry picks again below, never a channel that already failed in this request.
import { hasAdaptor, unsupportedTypeMessage } from '../providers/index.js';
import { RelayError } from '../errors.js';
import type { CachedChannel } from '../../services/cache/channel-cache.js';
import type { RelayState } from './state.js';
import { usageLimits } from '../../services/limits/index.js';
import { matchAffinity, stickyChannel, type AffinityHit } from './affinity.js';

/**
 * The JSON relay's route: a channel-affinity rule's remembered channel when one applies (affinity.ts), else route().
 * Synchronous unless a rule applies and its choice is kept in Redis. The task relays route without affinity.
 */
export function routeRelay(s: RelayState): void | Promise<void> {
  const hit = s.caller.channelId === null && s.model ? matchAffinity(s) : null;
  if (!hit) return route(s);
  return routeSticky(s, hit);
}

export function route(s: RelayState): void {
  const { svc, caller, mode, body, model } = s;
  if (caller.channelId !== null) {
    const channel = svc.channels.get(caller.channelId);
    if (!channel) throw new RelayError(400, '无效的渠道 Id');
    if (channel.status !== 1) throw new RelayError(403, '该渠道已被禁用');
    if (!hasAdaptor(channel.type))
      throw new RelayError(400, unsupportedTypeMessage(channel.type), 'new_api_error', 'channel_type_not_supported');
    s.channel = channel;
    return;
  }
  // without a model there is nothing to route by: the mode's own message says what is missing
  const invalid = !model ? mode.validate(body) : null;
  if (invalid) throw new RelayError(400, invalid, 'new_api_error', 'invalid_text_request');
  const channel = pickUncapped(s, 0, undefined);
  if (!channel) throw noChannel(s);
  s.channel = channel;
}

/** The remembered channel when it can be taken, else the normal choice (affinity.ts). */
function routeSticky(s: RelayState, hit: AffinityHit): void | Promise<void> {
  s.affinity = hit;
  const sticky = stickyChannel(s, hit);
  if (sticky instanceof Promise) return sticky.then((c) => routed(s, hit, c));
  routed(s, hit, sticky);
}

function routed(s: RelayState, hit: AffinityHit, sticky: CachedChannel | null): void {
  const channel = sticky ?? pickUncapped(s, 0, undefined);
  if (!channel) throw noChannel(s);
  s.channel = channel;
  hit.first = channel.id;
}

/** new-api's answer when no channel serves the group and model. */
export function noChannel(s: RelayState): RelayError {
  const message = `当前分组 ${s.group} 下对于模型 ${s.model} 无可用渠道`;
  // the playground answers as new-api's Playground handler: 500 get_playground_channel_failed
  return s.opts.playground
    ? new RelayError(500, message, 'new_api_error', 'get_playground_channel_failed')
    : new RelayError(503, message);
}

/** The channel for retry `i` (1, 2, …), skipping the failed ones; null when none is left. */
export function reroute(s: RelayState, i: number, failed: Set<number>): CachedChannel | null {
  return pickUncapped(s, i, failed);
}

/**
 * The channel cache's pick, skipping channels past their daily cap (services/limits/): the common case (no channel
 * over a cap) is the plain pick. A pick that can only fall back to a capped channel finds none.
 */
export function pickUncapped(s: RelayState, i: number, failed: Set<number> | undefined): CachedChannel | null {
  const capped = usageLimits(s.ctx).cappedChannels();
  if (!capped.size) return s.svc.channels.pick(s.group, s.model, i, failed);
  const skip = new Set(capped);
  if (failed) for (const id of failed) skip.add(id);
  const c = s.svc.channels.pick(s.group, s.model, i, skip);
  return c && !capped.has(c.id) ? c : null;
}
