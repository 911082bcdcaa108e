// Non-JSON success bodies (audio/speech), the raw lane of the stream pump (stream/pump.ts): piped to the client chunk
// by chunk as they arrive, with the upstream's content-type (and length when known, the body being unchanged) and its
// other passable headers (relay/response-headers.ts). Nothing is buffered or inspected.
import type { HttpResponse } from '../lib/http-response.js';
import { addUpstreamHeaderObject } from './response-headers.js';
import { StreamPump, type PumpLane, type UpstreamStream } from './stream/pump.js';

export interface RawPipeResult {
  started: boolean;
  clientGone: boolean;
  error: Error | null;
}

// the body goes unchanged, so its type and length stay the upstream's (the shared filter drops both for re-sent bodies)
const FORWARDED = ['content-type', 'content-length'] as const;

/** Raw response headers as a header object: lower-case names, a repeated header's values in an array. */
function headerObject(raw: readonly Buffer[]): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toString('latin1').toLowerCase();
    const value = raw[i + 1].toString('latin1');
    const had = out[name];
    out[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return out;
}

export function pipeRaw(
  body: UpstreamStream,
  res: HttpResponse,
  headers: Record<string, string>,
  rawHeaders: readonly Buffer[],
): Promise<RawPipeResult> {
  const upstream = headerObject(rawHeaders);
  for (const h of FORWARDED) {
    const v = upstream[h];
    if (typeof v === 'string' && v) headers[h === 'content-type' ? 'Content-Type' : h] = v;
  }
  if (!headers['Content-Type']) headers['Content-Type'] = 'application/octet-stream';
  addUpstreamHeaderObject(upstream, headers);
  // the answer is billed from the request: a client that leaves before its first byte aborts it too
  const pump = new StreamPump(body, { res, headers, abortBeforeStart: true });
  return pump.run(rawLane(pump), () => ({ started: pump.started, clientGone: pump.clientGone, error: pump.error }));
}

function rawLane(pump: StreamPump): PumpLane {
  return {
    chunk: (bytes) => pump.write(bytes),
    // an empty body still gets its head
    end: () => (pump.started ? undefined : pump.write('')),
    // a body broken after the first byte cannot be turned into an error response: the connection is cut
    error: () => null,
  };
}
