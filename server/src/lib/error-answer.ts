// The answer to an error no handler caught, and to the requests Fastify refuses before routing (a malformed
// percent-encoding, an over-long path parameter): the console's envelope on /api, the OpenAI error object on the relay.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { fail, openAIError } from './http.js';
import { prefersEnglish, relayMessageInEnglish } from './relay-english.js';
import { pathOf, requestLog } from './request-log.js';

// Fastify's own messages quote the whole path back, 10,000 characters of it if that is what came
const ROUTING_MESSAGES: Record<string, string> = {
  FST_ERR_BAD_URL: '无效的请求路径',
  FST_ERR_MAX_PARAM_LENGTH: '请求路径参数过长',
};

/**
 * SQLSTATE class 22 (data exception: a value out of a column's range, too long, not valid text) is what the
 * database says about a value the caller sent, when the input checks missed it: a 400, not a server failure.
 */
function isDataException(err: unknown): boolean {
  const e = err as { sqlState?: unknown; code?: unknown; severity?: unknown };
  const state =
    typeof e.sqlState === 'string'
      ? e.sqlState
      : typeof e.severity === 'string' && typeof e.code === 'string'
        ? e.code
        : '';
  return state.startsWith('22');
}

/** Answers the error in the caller's shape; returns the status answered. */
export function answerError(ctx: { log: Logger }, err: FastifyError, req: FastifyRequest, reply: FastifyReply): number {
  if (!reply.hasHeader('X-Oneapi-Request-Id')) reply.header('X-Oneapi-Request-Id', req.id);
  const dataError = isDataException(err);
  const status = dataError ? 400 : err.statusCode && err.statusCode >= 400 ? err.statusCode : 500;
  const url = pathOf(req.url);
  if (status >= 500) requestLog(ctx.log, req).error({ err, url }, 'request failed');
  else if (dataError) requestLog(ctx.log, req).warn({ err, url }, 'the database refused a value of the request');
  const message = dataError
    ? '无效的参数'
    : status >= 500 && !err.statusCode
      ? 'internal server error'
      : (ROUTING_MESSAGES[err.code] ?? err.message);
  if (isRelayPath(req.url)) {
    const type = status >= 500 ? 'new_api_panic' : 'invalid_request_error';
    const shown = prefersEnglish(req.headers['accept-language']) ? relayMessageInEnglish(message) : message;
    reply.status(status).send(openAIError(`${shown} (request id: ${req.id})`, type));
    return status;
  }
  reply.status(status).send(fail(message));
  return status;
}

const RELAY_PREFIXES = ['/v1', '/pg', '/dashboard', '/mj', '/suno', '/v1beta'];

export function isRelayPath(url: string): boolean {
  return RELAY_PREFIXES.some((p) => url === p || url.startsWith(p + '/'));
}
