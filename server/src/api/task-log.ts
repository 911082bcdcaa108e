// /api/mj/{,self} (drawing log) and /api/task/{,self} (task log): new-api's query parameters and the log pages'
// `{items,total,page,page_size}` (services/task-logs.ts). The self routes pin the caller's id; only the admin routes
// read channel_id and user_id. /api/task/{,self/}{id}/content streams a finished video of any video platform for the
// console's player (the relay's /v1/videos/{id}/content takes an API key, which a <video> element in the console does
// not have), through the same stream (relay/tasks/video-content.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards, caller } from './auth.js';
import { fail, ok } from '../lib/http.js';
import { pageQuery, queryOf, type Query } from './route-helpers.js';
import {
  checkRange,
  optionalInt,
  optionalText,
  queryMidjourneys,
  queryTasks,
  TaskLogInputError,
  type TaskLogFilter,
  type TaskView,
} from '../services/task-logs.js';
import { RelayError } from '../relay/errors.js';
import { taskAdaptorOf, type TaskAdaptor } from '../relay/providers/index.js';
import { VIDEO_PLATFORMS, videoResultUrl } from '../relay/tasks/video-platforms.js';

/**
 * A finished task's result URL where its row keeps none (a video's): its platform's, as /v1/video/generations/{id}
 * answers it (the gateway's content route for a video with no address of its own); and a video's console content
 * route, for the player (whatever the upstream keeps: a URL, inline bytes, a file id, a keyed endpoint). Each
 * platform's reader is loaded once a page.
 */
async function addResults(items: TaskView[], admin: boolean): Promise<void> {
  const readers = new Map<string, TaskAdaptor['resultUrl']>();
  for (const item of items) {
    if (item.status !== 'SUCCESS') continue;
    if (!readers.has(item.platform))
      readers.set(item.platform, (await taskAdaptorOf(item.platform).catch(() => undefined))?.resultUrl);
    const reader = readers.get(item.platform);
    if (!item.result_url && reader) item.result_url = reader(item.task_id, item.data);
    if (!VIDEO_PLATFORMS.includes(item.platform)) continue;
    item.result_url = videoResultUrl(item.task_id, item.result_url);
    item.content_url = `/api/task/${admin ? '' : 'self/'}${encodeURIComponent(item.task_id)}/content`;
  }
}

function filterFrom(q: Query, idParam: 'mj_id' | 'task_id', admin: boolean): TaskLogFilter {
  const f: TaskLogFilter = {
    id: optionalText(q[idParam], 191),
    status: optionalText(q.status, 20),
    action: optionalText(q.action, 40),
    platform: optionalText(q.platform, 30),
    startTimestamp: optionalInt(q.start_timestamp),
    endTimestamp: optionalInt(q.end_timestamp),
  };
  if (admin) {
    f.channelId = optionalInt(q.channel_id);
    f.userId = optionalInt(q.user_id);
  }
  return checkRange(f);
}

export async function registerTaskLogRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const list =
    (kind: 'mj' | 'task', admin: boolean) =>
    async (req: FastifyRequest): Promise<unknown> => {
      const q = queryOf(req);
      try {
        const f = filterFrom(q, kind === 'mj' ? 'mj_id' : 'task_id', admin);
        if (!admin) f.userId = caller(req).id;
        // 1-based like the usage log; at most 100 rows a page
        const { page, pageSize } = pageQuery(q);
        if (kind === 'mj') return ok(await queryMidjourneys(ctx, f, page, pageSize, admin));
        const tasks = await queryTasks(ctx, f, page, pageSize, admin);
        await addResults(tasks.items, admin);
        return ok(tasks);
      } catch (err) {
        if (err instanceof TaskLogInputError) return fail(err.message);
        throw err;
      }
    };
  const content = (admin: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    const { id } = req.params as { id: string };
    let q = ctx.db
      .selectFrom('tasks')
      .select(['task_id', 'platform', 'channel_id', 'private_data', 'data'])
      .where('task_id', '=', id)
      .where('status', '=', 'SUCCESS')
      .where('platform', 'in', VIDEO_PLATFORMS);
    if (!admin) q = q.where('user_id', '=', caller(req).id);
    const row = await q.executeTakeFirst();
    if (!row) return reply.status(404).send(fail('任务不存在'));
    reply.hijack();
    try {
      // loaded with the first video played, as the relay's video routes load it
      const { streamVideoContent } = await import('../relay/tasks/video-content.js');
      await streamVideoContent(
        ctx,
        row,
        { variant: null, range: typeof req.headers.range === 'string' ? req.headers.range : undefined },
        reply.raw,
        req.id,
      );
    } catch (err) {
      // refused before any byte was written (the stream's own failures end the connection)
      const status = err instanceof RelayError ? err.status : 500;
      const message = err instanceof RelayError ? err.message : `上游请求失败: ${(err as Error).message}`;
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
        reply.raw.end(JSON.stringify(fail(message)));
      } else reply.raw.destroy();
    }
  };
  app.get('/api/task/:id/content', { preHandler: auth.admin }, content(true));
  app.get('/api/task/self/:id/content', { preHandler: auth.user }, content(false));
  for (const kind of ['mj', 'task'] as const) {
    app.get(`/api/${kind}/`, { preHandler: auth.admin }, list(kind, true));
    app.get(`/api/${kind}/self`, { preHandler: auth.user }, list(kind, false));
  }
}
