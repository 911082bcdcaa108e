// The Fastify scope every task relay's routes live in (Suno, Midjourney, video): bodies kept raw as Buffers (a
// compressed body inflated up to the body limit), the caller authenticated from the request's head before the body is
// read (as on every relay route, admit.ts) unless the route needs none, and a refusal or an unreadable body answered
// in the platform's own error shape.
import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { BODY_LIMIT, drainable } from '../../lib/body-limits.js';
import { tokenAuth } from '../auth.js';
import { decodeBody } from '../body-decode.js';
import { RelayError } from '../errors.js';
import type { RelayServices } from '../services.js';

export interface TaskScopeOptions {
  /** writes `err` (a refusal, or a RelayError for an unreadable body) in the platform's shape */
  sendError(raw: ServerResponse, err: unknown, req: FastifyRequest): void | Promise<void>;
  /** false for a route that takes no token (Midjourney's image and callback, an unknown route); default: all do */
  needsCaller?(req: FastifyRequest): boolean | Promise<boolean>;
}

export function prepareTaskScope(
  scope: FastifyInstance,
  ctx: AppContext,
  svc: RelayServices,
  opts: TaskScopeOptions,
): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) =>
    decodeBody(req.headers['content-encoding'], body as Buffer, BODY_LIMIT, (err, out) =>
      err ? done(Object.assign(new Error(err.message), { statusCode: err.status })) : done(null, out),
    ),
  );
  scope.addHook('onRequest', async (req, reply) => {
    if (opts.needsCaller && !(await opts.needsCaller(req))) return;
    try {
      const caller = tokenAuth(ctx, svc, req.headers, req.url);
      req.relayCaller = caller instanceof Promise ? await caller : caller;
    } catch (err) {
      reply.hijack();
      // a body too large to read and drop is left unread, and the connection closed with the answer (admit.ts)
      if (!drainable(req.headers)) reply.raw.setHeader('Connection', 'close');
      await opts.sendError(reply.raw, err, req);
      return reply;
    }
  });
  scope.setErrorHandler(async (err: Error & { statusCode?: number }, req, reply) => {
    reply.hijack();
    await opts.sendError(reply.raw, new RelayError(err.statusCode ?? 400, err.message), req);
  });
}
