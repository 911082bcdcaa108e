// Relay errors and the OpenAI error shape (new-api-compat.md §4.2, §4.5): {"error":{"message":"… (request id:
// X)","type",…}}.
import type { HttpResponse } from '../lib/http-response.js';
import type { WireFormat } from './formats/codec.js';
import { codecFor } from './formats/index.js';
import { inClientLanguage } from '../lib/relay-english.js';

/** The request headers an error answer depends on: CORS and the language of the message. */
export type ClientHeaders = { origin?: string; 'accept-language'?: string };

export class RelayError extends Error {
  /** seconds, sent as Retry-After (a refusal by the usage limits, services/limits/) */
  retryAfter: number | undefined;

  constructor(
    readonly status: number,
    message: string,
    readonly type = 'new_api_error',
    readonly code: string | number | null = null,
    /** raised before the upstream was reached: never retried, never disables a channel */
    readonly local = true,
    readonly param: string | null = null,
  ) {
    super(message);
  }

  withStatus(status: number): RelayError {
    return new RelayError(status, this.message, this.type, this.code, this.local, this.param);
  }

  withMessage(message: string): RelayError {
    return new RelayError(this.status, message, this.type, this.code, this.local, this.param);
  }
}

/** Any error as a RelayError: an unexpected one is a 500. */
export function asRelayError(err: unknown): RelayError {
  if (err instanceof RelayError) return err;
  return new RelayError(500, (err as Error)?.message || 'internal error', 'new_api_error', 'internal_error');
}

/** Headers every relay response carries: request id and permissive CORS (new-api-compat.md §4.1). */
export function baseHeaders(reqId: string, origin: string | undefined): Record<string, string> {
  const h: Record<string, string> = { 'X-Oneapi-Request-Id': reqId, 'Access-Control-Allow-Origin': origin || '*' };
  if (origin) h['Access-Control-Allow-Credentials'] = 'true';
  return h;
}

/** The headers of an event-stream response. */
export function sseHeaders(reqId: string, origin: string | undefined): Record<string, string> {
  const h = baseHeaders(reqId, origin);
  h['Content-Type'] = 'text/event-stream';
  h['Cache-Control'] = 'no-cache';
  h['Connection'] = 'keep-alive';
  h['X-Accel-Buffering'] = 'no';
  return h;
}

export function sendJson(
  res: HttpResponse,
  status: number,
  body: Buffer | string,
  headers: Record<string, string>,
  contentType = 'application/json',
): void {
  if (res.headersSent || res.destroyed) {
    if (!res.writableEnded) res.end();
    return;
  }
  const buf = typeof body === 'string' ? Buffer.from(body) : body;
  headers['Content-Type'] = contentType;
  headers['Content-Length'] = String(buf.length);
  res.writeHead(status, headers);
  res.end(buf);
}

export function errorBody(err: RelayError, reqId: string): string {
  return JSON.stringify({
    error: { message: `${err.message} (request id: ${reqId})`, type: err.type, param: err.param ?? '', code: err.code },
  });
}

/** Answers an error in the client's format (OpenAI's error object, Anthropic's or Gemini's) and language. */
export function sendRelayError(
  res: HttpResponse,
  error: RelayError,
  reqId: string,
  client: ClientHeaders,
  format: WireFormat = 'openai',
): void {
  const origin = client.origin;
  const err = inClientLanguage(error, client['accept-language']);
  const headers = baseHeaders(reqId, origin);
  if (error.retryAfter !== undefined) headers['Retry-After'] = String(error.retryAfter);
  if (format === 'openai') return sendJson(res, err.status, errorBody(err, reqId), headers);
  const answer = codecFor(format).errorBody(err, reqId);
  sendJson(res, answer.status, answer.body, headers);
}

/**
 * The error of a request whose event-stream headers are already out (relay/keepalive.ts): the OpenAI error object as
 * an event, then `[DONE]` unless the stream is made of typed events (Responses API), and the end.
 */
export function sendStreamError(
  res: HttpResponse,
  error: RelayError,
  reqId: string,
  typedEvents: boolean,
  format: WireFormat = 'openai',
  acceptLanguage?: string,
): void {
  if (res.writableEnded || res.destroyed) return;
  const err = inClientLanguage(error, acceptLanguage);
  if (format !== 'openai') {
    const encoder = codecFor(format).streamFromHub({ id: reqId, model: '' });
    res.end(encoder.error({ ...err, message: `${err.message} (request id: ${reqId})` }));
    return;
  }
  res.end(`data: ${errorBody(err, reqId)}\n\n${typedEvents ? '' : 'data: [DONE]\n\n'}`);
}
