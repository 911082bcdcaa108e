// Claude's error shape: {"type":"error","error":{"type":…,"message":…}}, both ways.
import { STATUS_CODES } from 'node:http';
import type { ClientError, UpstreamError } from '../codec.js';

/** The Claude error type a client expects for an HTTP status. */
export function claudeErrorType(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 529:
      return 'overloaded_error';
    default:
      return 'api_error';
  }
}

export function claudeErrorJson(type: string, message: string): string {
  return JSON.stringify({ type: 'error', error: { type, message } });
}

/** An upstream's error body. Bedrock answers `{"message": …}`, so a bare message is read too. */
export function parseError(status: number, body: Buffer): UpstreamError {
  let parsed: any;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const err = parsed?.error;
  if (err && typeof err === 'object' && typeof err.message === 'string')
    return { message: err.message, type: String(err.type ?? claudeErrorType(status)), code: null, param: null };
  if (typeof parsed?.message === 'string')
    return { message: parsed.message, type: claudeErrorType(status), code: null, param: null };
  return { message: statusText(status), type: 'upstream_error', code: null, param: null };
}

function statusText(status: number): string {
  // 529 is Anthropic's own status; Node does not know its name
  return status === 529 ? 'Overloaded' : (STATUS_CODES[status] ?? `HTTP ${status}`);
}

export function errorBody(err: ClientError, reqId: string): { status: number; body: string } {
  const message = reqId ? `${err.message} (request id: ${reqId})` : err.message;
  return { status: err.status, body: claudeErrorJson(claudeErrorType(err.status), message) };
}
