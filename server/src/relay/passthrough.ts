// Non-JSON success bodies (audio/speech): piped to the client chunk by chunk as they arrive, with the upstream's
// content-type (and length when known, the body being unchanged) and its other passable headers
// (relay/response-headers.ts), honouring backpressure. Nothing is buffered or inspected.
import type { HttpResponse } from '../lib/http-response.js';
import { addUpstreamHeaderObject } from './response-headers.js';
import { drained, type UpstreamStream } from './stream.js';

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
  let started = false;
  let clientGone = false;
  const onClose = () => {
    if (!res.writableFinished) {
      clientGone = true;
      body.destroy();
    }
  };
  res.once('close', onClose);
  return new Promise((resolve) => {
    body.consume(
      (chunk) => {
        if (clientGone) return;
        if (!started) {
          started = true;
          res.writeHead(200, headers);
        }
        if (!res.write(chunk)) {
          body.pause();
          void drained(res).then(() => body.resume());
        }
      },
      (err) => {
        res.off('close', onClose);
        const error = clientGone ? null : err;
        if (!clientGone) {
          if (!started && !error) {
            started = true;
            res.writeHead(200, headers);
          }
          // a body broken after the first byte cannot be turned into an error response: cut the connection
          if (error && started) res.destroy(error);
          else if (started) res.end();
        }
        resolve({ started, clientGone, error });
      },
    );
  });
}
