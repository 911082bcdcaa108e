// /api/log: admin and self log lists, stats, search and cleanup (new-api-compat.md §3.4, §3.5). Logs are read from
// ctx.logDb; the relay writes them.
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards, caller } from './auth.js';
import { fail, ok } from '../lib/http.js';
import { guarded, queryInt, queryOf, type Query } from './route-helpers.js';
import { forUser, logStat, queryLogs, searchLogs, type LogFilter } from '../services/log-query.js';
import { deleteLogsBefore, parseCleanupTypes } from '../services/log-cleanup.js';

function filterFrom(q: Query, admin: boolean): LogFilter {
  const f: LogFilter = {
    type: queryInt(q.type),
    tokenName: q.token_name ?? '',
    modelName: q.model_name ?? '',
    startTimestamp: queryInt(q.start_timestamp),
    endTimestamp: queryInt(q.end_timestamp),
    group: q.group ?? '',
  };
  if (admin) {
    f.username = q.username ?? '';
    f.channel = queryInt(q.channel);
  }
  return f;
}

function paging(q: Query, maxSize: number): { page: number; pageSize: number } {
  const page = Math.max(1, queryInt(q.p));
  let pageSize = queryInt(q.page_size);
  if (pageSize <= 0) pageSize = 10;
  return { page, pageSize: Math.min(pageSize, maxSize) };
}

export async function registerLogRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const route = (method: 'GET' | 'DELETE', url: string, preHandler: typeof auth.user, handler: RouteHandlerMethod) =>
    app.route({ method, url, preHandler, handler });

  route('GET', '/api/log/', auth.admin, async (req) => {
    const q = queryOf(req);
    const { page, pageSize } = paging(q, 1000);
    return ok(await queryLogs(ctx, filterFrom(q, true), page, pageSize));
  });

  route('GET', '/api/log/self', auth.user, async (req) => {
    const q = queryOf(req);
    const { page, pageSize } = paging(q, 100);
    const result = await queryLogs(ctx, { ...filterFrom(q, false), userId: caller(req).id }, page, pageSize);
    return ok({ ...result, items: result.items.map(forUser) });
  });

  route('GET', '/api/log/stat', auth.admin, async (req) => ok(await logStat(ctx, filterFrom(queryOf(req), true))));

  route('GET', '/api/log/self/stat', auth.user, async (req) =>
    ok(await logStat(ctx, { ...filterFrom(queryOf(req), false), userId: caller(req).id })),
  );

  route('GET', '/api/log/search', auth.admin, async (req) => ok(await searchLogs(ctx, queryOf(req).keyword ?? '')));

  route('GET', '/api/log/self/search', auth.user, async (req) => {
    const rows = await searchLogs(ctx, queryOf(req).keyword ?? '', caller(req).id);
    return ok(rows.map(forUser));
  });

  // an admin deletes consume and error rows only; root may ask for other types with `type` (log-cleanup.ts)
  route(
    'DELETE',
    '/api/log/',
    auth.admin,
    guarded(async (req) => {
      const q = queryOf(req);
      const target = queryInt(q.target_timestamp);
      if (target <= 0) return fail('target timestamp is required');
      return ok(await deleteLogsBefore(ctx, caller(req), target, parseCleanupTypes(q.type)));
    }),
  );
}
