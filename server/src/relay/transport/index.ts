// The one way the relay sends an upstream request: the engine (JSON, streams, raw audio) and the channel probes
// (test, balance, model list) all call a Transport with an OutgoingRequest and a ResponseSink (lib/response-sink.ts).
// Which client carries it is chosen here and in channel-setting.ts's transportFor: a channel with a proxy goes
// through undici's proxy agent; every other request goes to the lean client (lib/lean-http/client.ts) when it is on
// (LEAN_HTTP) and takes the request, else to undici's keep-alive pool. Upstream websockets have their own transport
// beside these (websocket.ts), under the same proxy, timeouts and connection limit.
import type { Dispatcher } from 'undici';
import type { LeanHttpClient } from '../../lib/lean-http/client.js';
import type { OutgoingRequest, ResponseSink } from '../../lib/response-sink.js';
import { UndiciTransport } from './undici.js';

export type { OutgoingRequest, ResponseSink } from '../../lib/response-sink.js';
export { UndiciTransport } from './undici.js';

export interface Transport {
  send(req: OutgoingRequest, sink: ResponseSink): void;
}

/** The lean client for the requests it takes (no proxy, a plain request: see its file's head), undici for the rest. */
class LeanFirstTransport implements Transport {
  constructor(
    private readonly lean: LeanHttpClient,
    private readonly fallback: Transport,
  ) {}

  send(req: OutgoingRequest, sink: ResponseSink): void {
    if (!this.lean.dispatch(req, sink)) this.fallback.send(req, sink);
  }
}

/**
 * The transport for upstreams reached without a proxy: `lean` first when there is one, else undici's `pool` (a
 * dispatcher, or an UndiciTransport that makes it on first use).
 */
export function directTransport(pool: Dispatcher | UndiciTransport, lean: LeanHttpClient | null): Transport {
  const undici = pool instanceof UndiciTransport ? pool : new UndiciTransport(pool);
  return lean ? new LeanFirstTransport(lean, undici) : undici;
}
