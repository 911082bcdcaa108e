// /api/mj/{,self} (drawing log) and /api/task/{,self} (task log): new-api's query parameters and the log pages'
// `{items,total,page,page_size}` (services/task-logs.ts). The self routes pin the caller's id; only the admin routes
// read channel_id and user_id.
import type { FastifyInstance, FastifyRequest } from 'fastify';
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
} from '../services/task-logs.js';

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
        const query = kind === 'mj' ? queryMidjourneys : queryTasks;
        return ok(await query(ctx, f, page, pageSize, admin));
      } catch (err) {
        if (err instanceof TaskLogInputError) return fail(err.message);
        throw err;
      }
    };
  for (const kind of ['mj', 'task'] as const) {
    app.get(`/api/${kind}/`, { preHandler: auth.admin }, list(kind, true));
    app.get(`/api/${kind}/self`, { preHandler: auth.user }, list(kind, false));
  }
}
