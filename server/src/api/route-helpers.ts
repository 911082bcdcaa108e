// The pieces every console area's handlers share: reading the query, body and `:id` param, and answering a
// caller's mistake found by a service as new-api does, `{success:false,message}` at HTTP 200.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { fail } from '../lib/http.js';
import { ChannelInputError } from '../services/channels.js';
import { TokenInputError } from '../services/tokens.js';
import { UserFacingError } from '../services/users.js';

export type Query = Record<string, string | undefined>;
export type Body = Record<string, unknown>;

/** The query string's fields (a repeated field is not split: the services read single values). */
export const queryOf = (req: FastifyRequest): Query => (req.query ?? {}) as Query;

/** The JSON body when it is an object or array; a missing or scalar body carries no fields. */
export const bodyOf = (req: FastifyRequest): Body =>
  req.body && typeof req.body === 'object' ? (req.body as Body) : {};

/** The route's `:id` as an id: plain decimal digits within 2^53, else null (no sign, hex, exponent or spaces). */
export function idParam(req: FastifyRequest): number | null {
  const raw = (req.params as { id: string }).id;
  return /^\d+$/.test(raw) && Number.isSafeInteger(Number(raw)) ? Number(raw) : null;
}

/** A numeric query field; anything that does not start with a safe integer reads as 0. */
export function queryInt(v: string | undefined): number {
  const n = Number.parseInt(v ?? '', 10);
  return Number.isSafeInteger(n) ? n : 0;
}

/** new-api's `p` (1-based; p=0 reads as the first page) and `page_size` (10 by default, at most `maxSize`). */
export function pageQuery(q: Query, maxSize = 100): { page: number; pageSize: number } {
  const page = Math.max(1, queryInt(q.p));
  let pageSize = queryInt(q.page_size);
  if (pageSize <= 0) pageSize = 10;
  return { page, pageSize: Math.min(pageSize, maxSize) };
}

// The services' error classes for input the caller got wrong. lib/input.ts's InputError is not among them: it is
// answered 400 by the app's error handler.
const isUserMistake = (err: unknown): err is Error =>
  err instanceof UserFacingError || err instanceof TokenInputError || err instanceof ChannelInputError;

/** A handler whose caller mistakes become the `success:false` envelope; anything else stays a 500. */
export function guarded(fn: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>): RouteHandlerMethod {
  return async (req, reply) => {
    try {
      return await fn(req, reply);
    } catch (err) {
      if (isUserMistake(err)) return fail(err.message);
      throw err;
    }
  };
}

/** Query or form fields flattened to single strings (the first value of a repeated one). */
function flatFields(input: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!input || typeof input !== 'object') return out;
  for (const [k, v] of Object.entries(input as Record<string, unknown>)) {
    const first = Array.isArray(v) ? v[0] : v;
    if (first !== undefined && first !== null) out[k] = String(first);
  }
  return out;
}

/**
 * A payment gateway's callback routes: the gateway calls back with GET (query) or POST (form body); the handler gets
 * the fields of both as single strings. The form parser stays inside the routes' own scope.
 */
export function gatewayCallbacks(
  app: FastifyInstance,
  routes: Record<
    string,
    (params: Record<string, string>, req: FastifyRequest, reply: FastifyReply) => Promise<unknown>
  >,
) {
  return app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });
    for (const [path, handler] of Object.entries(routes)) {
      const route = (req: FastifyRequest, reply: FastifyReply) =>
        handler({ ...flatFields(req.query), ...flatFields(req.body) }, req, reply);
      scope.get(path, route);
      scope.post(path, route);
    }
  });
}
