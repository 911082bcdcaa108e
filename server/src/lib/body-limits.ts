// How much of a request body the server will hold. Only a caller authenticated from the request's head alone (a relay
// token, a console session or access token) may send up to BODY_LIMIT; every route that anyone may call (login,
// register, reset, setup, payment callbacks, unknown paths) keeps to ANONYMOUS_BODY_LIMIT, so an anonymous client
// cannot make the server read, parse or inflate much on its behalf.
import type { onRequestAsyncHookHandler } from 'fastify';

export const BODY_LIMIT = 64 * 1024 * 1024;
export const ANONYMOUS_BODY_LIMIT = 64 * 1024;

/**
 * Whether the unread body of a refused request is small enough to be read and dropped, keeping the connection for
 * the client's next request, rather than closing the connection after the answer.
 */
export function drainable(headers: { 'content-length'?: string; 'transfer-encoding'?: string }): boolean {
  if (headers['transfer-encoding'] !== undefined) return false;
  const length = headers['content-length'];
  return length === undefined || Number(length) <= ANONYMOUS_BODY_LIMIT;
}

/**
 * A hook that may refuse the request through Fastify's reply: when it does and the body is large, the answer closes
 * the connection rather than leave Node's server reading (and dropping) the body.
 */
export function closeIfRefusedLarge(hook: onRequestAsyncHookHandler): onRequestAsyncHookHandler {
  return async function (req, reply) {
    const large = !drainable(req.headers);
    if (large) reply.header('connection', 'close');
    await hook.call(this, req, reply);
    if (large && !reply.sent) reply.removeHeader('connection');
  };
}
