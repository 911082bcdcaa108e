// Errors in Gemini's shape, Google's canonical `{"error":{"code","message","status","details"}}`.
import { STATUS_CODES } from 'node:http';
import type { ClientError, UpstreamError } from '../codec.js';
import { isPlainObject } from './wire.js';

const CANONICAL_STATUS: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  429: 'RESOURCE_EXHAUSTED',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
  // Anthropic's "overloaded": to a Gemini client, what Google says of an overloaded model
  529: 'UNAVAILABLE',
};

export function canonicalStatus(httpStatus: number): string {
  return CANONICAL_STATUS[httpStatus] ?? 'UNKNOWN';
}

/**
 * An error Gemini sent inside a stream that had already begun (`data: {"error":…}`, or an error element of the JSON
 * array): the decoder throws it, because a hub chunk cannot carry an error. The relay reports it as an upstream
 * failure after the stream began (StreamEncoder.error on the client side).
 */
export class GeminiStreamError extends Error {
  constructor(
    readonly status: number,
    readonly upstream: UpstreamError,
  ) {
    super(upstream.message);
  }
}

/** The error of a stream event, or null when the event is an answer. */
export function streamEventError(event: Record<string, unknown>): GeminiStreamError | null {
  const error = event.error;
  if (!isPlainObject(error)) return null;
  const status = typeof error.code === 'number' ? error.code : 500;
  return new GeminiStreamError(status, parseError(status, Buffer.from(JSON.stringify(event))));
}

export function parseError(status: number, body: Buffer): UpstreamError {
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    json = undefined;
  }
  // streamGenerateContent without alt=sse wraps its error in the array it would have streamed
  if (Array.isArray(json)) json = json[0];
  const error = isPlainObject(json) && isPlainObject(json.error) ? json.error : undefined;
  if (!error)
    return {
      message: STATUS_CODES[status] ?? `HTTP ${status}`,
      type: canonicalStatus(status),
      code: status,
      param: null,
    };
  return {
    message: typeof error.message === 'string' ? error.message : (STATUS_CODES[status] ?? ''),
    type: typeof error.status === 'string' ? error.status : canonicalStatus(status),
    code: typeof error.code === 'number' || typeof error.code === 'string' ? error.code : status,
    param: null,
  };
}

/** The error object a Gemini client expects, also written in-band when a stream fails. */
export function errorObject(
  err: ClientError,
  reqId?: string,
): { error: { code: number; message: string; status: string } } {
  const message = reqId ? `${err.message} (request id: ${reqId})` : err.message;
  return { error: { code: err.status, message, status: canonicalStatus(err.status) } };
}

export function errorBody(err: ClientError, reqId: string): { status: number; body: string } {
  return { status: err.status, body: JSON.stringify(errorObject(err, reqId)) };
}
