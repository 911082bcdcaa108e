// The relay authenticates its caller from the request's head, before one byte of the body is read: the lean front and
// Node's `request` hook (fast-path.ts) and the Fastify routes' onRequest hook (index.ts) all do it here. A request
// without a valid token (or, on the playground, session) is answered at once; its body is never held, parsed or
// inflated. The caller found goes to the engine in its RelayRequest (request.ts), so it is not looked up twice; the
// checks that need the body (model limits, groups) stay in the engine.
import type { IncomingHttpHeaders } from 'node:http';
import type { onRequestAsyncHookHandler } from 'fastify';
import type { AppContext } from '../context.js';
import type { RelayServices } from './services.js';
import type { HttpResponse } from '../lib/http-response.js';
import { closeIfRefusedLarge, drainable } from '../lib/body-limits.js';
import { authenticate, ROLE_COMMON } from '../services/console-auth.js';
import { tokenAuth, type RelayCaller } from './auth.js';
import { asRelayError, sendRelayError } from './errors.js';
import type { WireFormat } from './formats/codec.js';
import type { GatewayMetrics } from '../services/metrics.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** the token's caller, authenticated before the body was read */
    relayCaller?: RelayCaller;
  }
}

/**
 * Answers a request refused before its body was read. The body is never kept: a small one is read and dropped and
 * the connection serves the client's next request; a larger one is not read, the answer closes the connection.
 * Counted in gateway_relay_requests_total under `route` (the pipeline never sees it).
 */
export function refuseUnread(
  res: HttpResponse,
  headers: IncomingHttpHeaders,
  err: unknown,
  reqId: string,
  format: WireFormat | undefined,
  metrics: GatewayMetrics,
  route = 'refused',
): void {
  if (!drainable(headers)) res.setHeader('Connection', 'close');
  const e = asRelayError(err);
  metrics.countLocal(route, e.status, format);
  sendRelayError(res, e, reqId, headers, format);
}

/** onRequest hook of the Fastify relay routes: token auth (session auth on the playground) before the body. */
export function admitHook(
  ctx: AppContext,
  svc: RelayServices,
  playground: boolean,
  format?: WireFormat,
): onRequestAsyncHookHandler {
  if (playground) {
    return closeIfRefusedLarge(async (req, reply) => {
      // answers in the console's shape itself, as the playground always has
      if (!(await authenticate(ctx, req, reply, ROLE_COMMON))) return reply;
    });
  }
  return async (req, reply) => {
    try {
      const caller = tokenAuth(ctx, svc, req.headers, req.url);
      req.relayCaller = caller instanceof Promise ? await caller : caller;
    } catch (err) {
      reply.hijack();
      refuseUnread(reply.raw, req.headers, err, req.id, format, svc.metrics);
      return reply;
    }
  };
}
