// Non-JSON success bodies (audio/speech): piped to the client chunk by chunk as they arrive, with the upstream's
// content-type (and length when known, the body being unchanged) and its other passable headers
// (relay/response-headers.ts), honouring backpressure. Nothing is buffered or inspected.
import type { IncomingHttpHeaders } from 'node:http';
import type { HttpResponse } from '../lib/http-response.js';
import { addUpstreamHeaderObject } from './response-headers.js';
import { drained } from './stream.js';

export interface RawPipeResult {
  started: boolean;
  clientGone: boolean;
  error: Error | null;
}

// the body goes unchanged, so its type and length stay the upstream's (the shared filter drops both for re-sent bodies)
const FORWARDED = ['content-type', 'content-length'] as const;

export async function pipeRaw(
  body: AsyncIterable<Buffer> & { destroy(err?: Error): unknown },
  res: HttpResponse,
  headers: Record<string, string>,
  upstream: IncomingHttpHeaders | Record<string, string | string[] | undefined>,
): Promise<RawPipeResult> {
  for (const h of FORWARDED) {
    const v = upstream[h];
    if (typeof v === 'string' && v) headers[h === 'content-type' ? 'Content-Type' : h] = v;
  }
  if (!headers['Content-Type']) headers['Content-Type'] = 'application/octet-stream';
  addUpstreamHeaderObject(upstream, headers);
  let started = false;
  let clientGone = false;
  let error: Error | null = null;
  const onClose = () => {
    if (!res.writableFinished) {
      clientGone = true;
      body.destroy();
    }
  };
  res.once('close', onClose);
  try {
    for await (const chunk of body) {
      if (clientGone) break;
      if (!started) {
        started = true;
        res.writeHead(200, headers);
      }
      if (!res.write(chunk)) await drained(res);
    }
  } catch (err) {
    if (!clientGone) error = err as Error;
  }
  res.off('close', onClose);
  if (!clientGone) {
    if (!started && !error) {
      started = true;
      res.writeHead(200, headers);
    }
    // a body broken after the first byte cannot be turned into an error response: cut the connection
    if (error && started) res.destroy(error);
    else if (started) res.end();
  }
  return { started, clientGone, error };
}
