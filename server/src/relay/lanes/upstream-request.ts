// The upstream request of an attempt: where it goes, its headers, its body and its authorisation. The relay's lanes
// (lanes/run.ts) and the channel probe (relay/channel-probe.ts) both build it here, so a channel test sends exactly
// what the relay would send on that channel for the same model and body.
import type { Adaptor, UpstreamTarget } from '../providers/index.js';
import type { CachedChannel } from '../../services/cache/channel-cache.js';
import { proxyOf, transportFor } from '../channel-setting.js';
import type { RelayServices } from '../services.js';
import type { Transport } from '../transport/index.js';
import { WebSocketExchange } from '../transport/ws-exchange.js';
import { UpstreamCall } from '../upstream-call.js';
import type { OutgoingRequest } from '../../lib/response-sink.js';
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

/**
 * The provider's authorisation (a signature, a fetched token) added to `headers`, and to `target.path` when the vendor
 * takes its token in the query (Baidu's access_token); undefined for a static key.
 */
export function authorizeUpstream(
  l: LaneAttempt,
  target: UpstreamTarget,
  headers: Record<string, string>,
  body: Buffer,
): Promise<void> | undefined {
  if (!l.adaptor.authorize) return undefined;
  const req = { method: 'POST', origin: target.origin, path: target.path, headers, body };
  return l.adaptor.authorize(l.info, req).then(() => {
    if (req.path !== target.path) target.path = req.path;
  });
}

/** The transport of a channel's requests: its proxy's or the direct pool, or a websocket for a provider spoken over one. */
export function upstreamTransport(
  svc: RelayServices,
  adaptor: Pick<Adaptor, 'carrier'>,
  channel: Pick<CachedChannel, 'setting'>,
): Transport {
  if (adaptor.carrier === 'websocket') return new WebSocketExchange(svc.websockets, proxyOf(channel));
  return transportFor(channel, svc.upstream);
}

/** One request through `transport`, read whole (a body that fails after the head throws); redirects are never followed. */
export async function sendWhole(
  transport: Transport,
  req: OutgoingRequest,
): Promise<{ status: number; body: Buffer; headers: Record<string, string> }> {
  const call = await new UpstreamCall(false).send(transport, req);
  if (call.error) throw call.error;
  return { status: call.statusCode, body: call.body(), headers: call.headerRecord() };
}
