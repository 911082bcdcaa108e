// Answers of the Midjourney routes in midjourney-proxy's shape, as new-api gives them: a submit's answer as the
// upstream sent it (or with code 21/22 rewritten to 1), a task or a list as JSON, and an error as
// `{description:"<description> <result>", type:"upstream_error", code}` (errors.ts): 400, or 429 for code 30. The
// shared relay steps' refusals (token, quota, limits, routing) take that shape too, with their own status.
import type { HttpResponse } from '../../lib/http-response.js';
import { asRelayError, baseHeaders } from '../errors.js';
import { MJ_CODE, mjErrorAnswer, type MjErrorAnswer, type MjLocalError } from '../providers/midjourney/index.js';

/** A Midjourney error raised inside a request's steps; the route answers it as it is. */
export class MjAnswerError extends Error {
  readonly answer: MjErrorAnswer;
  constructor(err: MjLocalError) {
    super(err.description);
    this.answer = mjErrorAnswer(err);
  }
}

export function sendMjJson(res: HttpResponse, status: number, body: unknown, reqId: string): void {
  if (res.headersSent || res.writableEnded) return;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    ...baseHeaders(reqId, undefined),
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}

/**
 * Any error in midjourney-proxy's shape: a Midjourney one as it is; a relay step's with its status and message, code
 * 30 (and new-api's saturation text) for a 429, 4 for another refusal, 5 for the gateway's own failure.
 */
export function sendMjError(res: HttpResponse, err: unknown, reqId: string): void {
  if (err instanceof MjAnswerError) return sendMjJson(res, err.answer.status, err.answer.body, reqId);
  const e = asRelayError(err);
  if (e.status === 429) {
    const a = mjErrorAnswer({ code: MJ_CODE.saturated, description: e.message });
    return sendMjJson(res, a.status, a.body, reqId);
  }
  const code = e.status >= 500 ? MJ_CODE.unknown : MJ_CODE.requestError;
  sendMjJson(res, e.status, { description: `${e.message} `, type: 'upstream_error', code }, reqId);
}
