// The Midjourney routes (new-api's /mj/* and /{mode}/mj/*, midjourney-proxy's API), registered at start with their
// handler (mj-handlers.ts), the drawing folder and the poll (mj-poll.ts) loaded on first use. The caller is
// authenticated from the request's head (Authorization or mj-api-secret: relay/auth.ts extractKey) before its body is
// read, but for the image (unauthenticated, as new-api's) and the notify callback (signed instead).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { BODY_LIMIT, drainable } from '../../lib/body-limits.js';
import { addTaskPollStep } from '../../services/tasks/poller.js';
import { TERMINAL_STATUSES } from '../../services/tasks/status.js';
import { tokenAuth } from '../auth.js';
import { decodeBody } from '../body-decode.js';
import { RelayError } from '../errors.js';
import type { RelayServices } from '../services.js';

const PREFIXES = ['/mj', '/mj-fast/mj', '/mj-relax/mj', '/mj-turbo/mj'];

let handlers: Promise<typeof import('./mj-handlers.js')> | undefined;
const mjHandlers = () => (handlers ??= import('./mj-handlers.js'));

/** The poller's Midjourney step: its module and the drawing folder load once a drawing is unfinished. */
async function pollMjWhenDue(ctx: AppContext, now: number): Promise<unknown> {
  const due = await ctx.db
    .selectFrom('midjourneys')
    .select('id')
    .where('status', 'not in', TERMINAL_STATUSES)
    .limit(1)
    .executeTakeFirst();
  return due ? (await import('./mj-poll.js')).pollMidjourney(ctx, now) : undefined;
}

export async function registerMjRoutes(app: FastifyInstance, ctx: AppContext, svc: RelayServices): Promise<void> {
  addTaskPollStep(pollMjWhenDue);
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) =>
      decodeBody(req.headers['content-encoding'], body as Buffer, BODY_LIMIT, (err, out) =>
        err ? done(Object.assign(new Error(err.message), { statusCode: err.status })) : done(null, out),
      ),
    );
    scope.addHook('onRequest', async (req, reply) => {
      const mj = await mjHandlers();
      const parsed = mj.parseMjRoute(req.method, req.url);
      // an unknown route is answered as one (no token needed to learn that); the image and the callback need none
      if (!parsed.ok || parsed.route.kind === 'image' || parsed.route.kind === 'notify') return;
      try {
        const caller = tokenAuth(ctx, svc, req.headers, req.url);
        req.relayCaller = caller instanceof Promise ? await caller : caller;
      } catch (err) {
        reply.hijack();
        // a body too large to read and drop is left unread, and the connection closed with the answer (admit.ts)
        if (!drainable(req.headers)) reply.raw.setHeader('Connection', 'close');
        mj.sendMjError(reply.raw, err, req.id);
        return reply;
      }
    });
    scope.setErrorHandler(async (err: Error & { statusCode?: number }, req, reply) => {
      reply.hijack();
      (await mjHandlers()).sendMjError(reply.raw, new RelayError(err.statusCode ?? 400, err.message), req.id);
    });
    const handle = async (req: FastifyRequest, reply: FastifyReply) =>
      (await mjHandlers()).handleMj(svc, ctx, req, reply);
    for (const prefix of PREFIXES) {
      scope.route({ method: ['GET', 'POST'], url: `${prefix}/*`, bodyLimit: BODY_LIMIT, handler: handle });
    }
  });
}
