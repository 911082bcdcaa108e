// The Midjourney routes (new-api's /mj/* and /{mode}/mj/*, midjourney-proxy's API), registered at start with their
// handler (mj-handlers.ts), the drawing folder and the poll (mj-poll.ts) loaded on first use. The caller is
// authenticated from the request's head (Authorization or mj-api-secret: relay/auth.ts extractKey) before its body is
// read, but for the image (unauthenticated, as new-api's) and the notify callback (signed instead).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { BODY_LIMIT } from '../../lib/body-limits.js';
import { addTaskPollStep } from '../../services/tasks/poller.js';
import { TERMINAL_STATUSES } from '../../services/tasks/status.js';
import type { RelayServices } from '../services.js';
import { prepareTaskScope } from './task-scope.js';

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
    prepareTaskScope(scope, ctx, svc, {
      sendError: async (raw, err, req) => (await mjHandlers()).sendMjError(raw, err, req.id),
      // an unknown route is answered as one (no token needed to learn that); the image and the callback need none
      needsCaller: async (req) => {
        const parsed = (await mjHandlers()).parseMjRoute(req.method, req.url);
        return parsed.ok && parsed.route.kind !== 'image' && parsed.route.kind !== 'notify';
      },
    });
    const handle = async (req: FastifyRequest, reply: FastifyReply) =>
      (await mjHandlers()).handleMj(svc, ctx, req, reply);
    for (const prefix of PREFIXES) {
      scope.route({ method: ['GET', 'POST'], url: `${prefix}/*`, bodyLimit: BODY_LIMIT, handler: handle });
    }
  });
}
