// The task platforms' routes: Suno's submit and fetch (new-api's /suno/*), registered at start with their handlers
// (suno-handlers.ts) and the poll (poll.ts) loaded on first use. The caller is authenticated from the request's head
// as on every relay route (admit.ts), errors answered in the platform's envelope.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { BODY_LIMIT } from '../../lib/body-limits.js';
import { addTaskPollStep } from '../../services/tasks/poller.js';
import { TERMINAL_STATUSES } from '../../services/tasks/status.js';
import type { RelayRequest } from '../request.js';
import type { RelayServices } from '../services.js';
import { sendEnvelopeError } from './envelope.js';
import { prepareTaskScope } from './task-scope.js';

let handlers: Promise<typeof import('./suno-handlers.js')> | undefined;
const sunoHandlers = () => (handlers ??= import('./suno-handlers.js'));

/** The poller's step for the `tasks` table: its module and the platforms' folders load once a task is unfinished. */
async function pollTasksWhenDue(ctx: AppContext, now: number): Promise<unknown> {
  const due = await ctx.db
    .selectFrom('tasks')
    .select('id')
    .where('status', 'not in', TERMINAL_STATUSES)
    .limit(1)
    .executeTakeFirst();
  return due ? (await import('./poll.js')).pollTaskUpstreams(ctx, now) : undefined;
}

export function requestOf(req: FastifyRequest): RelayRequest {
  return {
    id: req.id,
    url: req.url,
    headers: req.headers,
    ip: req.ip,
    body: Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0),
    caller: req.relayCaller ?? null,
    sessionUserId: 0,
  };
}

export async function registerTaskRoutes(app: FastifyInstance, ctx: AppContext, svc: RelayServices): Promise<void> {
  addTaskPollStep(pollTasksWhenDue);
  await app.register(async (scope) => {
    prepareTaskScope(scope, ctx, svc, { sendError: (raw, err, req) => sendEnvelopeError(raw, err, req.id) });
    // the handlers load with the first Suno request: a gateway that sells no music never loads them
    scope.post('/suno/submit/:action', { bodyLimit: BODY_LIMIT }, async (req: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      return (await sunoHandlers()).sunoSubmit(svc, ctx, req, reply);
    });
    scope.post('/suno/fetch', async (req: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      return (await sunoHandlers()).sunoFetchMany(ctx, req, reply);
    });
    scope.get('/suno/fetch/:id', async (req: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      return (await sunoHandlers()).sunoFetchOne(ctx, req, reply);
    });
  });
}
