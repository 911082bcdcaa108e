// What the relay's GET endpoints that answer locally (model lists, billing dashboard) share: TokenAuth without a body,
// and a JSON answer with the relay's headers.
import type { FastifyReply, FastifyRequest, onResponseAsyncHookHandler } from 'fastify';
import type { AppContext } from '../../context.js';
import type { RelayServices } from '../services.js';
import { tokenAuth, type RelayCaller } from '../auth.js';
import { baseHeaders, RelayError, sendJson, sendRelayError } from '../errors.js';
import type { WireFormat } from '../formats/codec.js';

/** TokenAuth for GET endpoints; sends the error itself and returns null on failure. */
export async function getCaller(
  ctx: AppContext,
  svc: RelayServices,
  req: FastifyRequest,
  reply: FastifyReply,
  format?: WireFormat,
): Promise<RelayCaller | null> {
  reply.hijack();
  try {
    return await tokenAuth(ctx, svc, req.headers, req.url);
  } catch (err) {
    const e = err instanceof RelayError ? err : new RelayError(500, (err as Error).message);
    sendRelayError(reply.raw, e, req.id, req.headers, format);
    return null;
  }
}

/**
 * Route option `onResponse`: counts the answer in gateway_relay_requests_total under `route`, whatever its status (these
 * endpoints answer without the pipeline, which counts its own). Runs once the answer is written, off its path.
 */
export function countedAs(svc: RelayServices, route: string, format?: WireFormat): onResponseAsyncHookHandler {
  return async (_req, reply) => svc.metrics.countLocal(route, reply.raw.statusCode, format);
}

export function sendJsonAnswer(req: FastifyRequest, reply: FastifyReply, status: number, body: unknown): void {
  sendJson(reply.raw, status, JSON.stringify(body), baseHeaders(req.id, req.headers.origin));
}
