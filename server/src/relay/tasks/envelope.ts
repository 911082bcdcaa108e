// Answers of the task routes in the platform's envelope ({code, message, data}, Suno's): successes and errors alike,
// so a Suno client reads every answer the same way.
import type { HttpResponse } from '../../lib/http-response.js';
import { asRelayError, baseHeaders } from '../errors.js';

export function sendEnvelope(
  res: HttpResponse,
  status: number,
  code: string,
  message: string,
  data: unknown,
  reqId: string,
): void {
  if (res.headersSent || res.writableEnded) return;
  const body = JSON.stringify({ code, message, data });
  res.writeHead(status, {
    ...baseHeaders(reqId, undefined),
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}

/** An error (a RelayError of a shared step, or anything else: a 500) in the envelope. */
export function sendEnvelopeError(res: HttpResponse, err: unknown, reqId: string): void {
  const e = asRelayError(err);
  const code = typeof e.code === 'string' && e.code ? e.code : e.type || 'error';
  sendEnvelope(res, e.status, code, e.message, null, reqId);
}
