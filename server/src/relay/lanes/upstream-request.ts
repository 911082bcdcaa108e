// The upstream request of an attempt: where it goes, its headers, its body and its authorisation. The relay's lanes
// (lanes/run.ts) and the channel probe (relay/channel-probe.ts) both build it here, so a channel test sends exactly
// what the relay would send on that channel for the same model and body.
import type { UpstreamTarget } from '../providers/index.js';
import type { Lane, LaneAttempt } from './lane.js';

/** The request's headers before authorisation: content type, accept, then the provider's own. */
export function upstreamHeaders(l: LaneAttempt, lane: Lane): Record<string, string> {
  const { req, a } = l;
  return {
    'content-type': a.mode.multipart ? String(req.headers['content-type']) : 'application/json',
    accept: (lane.native && req.headers.accept) || (a.isStream ? 'text/event-stream' : 'application/json'),
    ...l.adaptor.headers(l.info),
  };
}

/** The provider's authorisation (a signature, a fetched token) added to `headers`; undefined for a static key. */
export function authorizeUpstream(
  l: LaneAttempt,
  target: UpstreamTarget,
  headers: Record<string, string>,
  body: Buffer,
): Promise<void> | undefined {
  return l.adaptor.authorize?.(l.info, { method: 'POST', origin: target.origin, path: target.path, headers, body });
}
