// /api/data: the usage dashboard's hourly buckets (new-api-compat.md §2.11, §5.8).
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards, caller } from './auth.js';
import { fail, ok } from '../lib/http.js';
import { queryInt, queryOf } from './route-helpers.js';
import { initRelayServices } from '../relay/services.js';
import {
  DATA_SELF_MAX_SPAN_SEC,
  quotaDataByModelHour,
  quotaDataRows,
  withUnflushedByModelHour,
  withUnflushedRows,
  type QuotaDataOwner,
} from '../services/log-query.js';

export async function registerDataRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const { quotaData } = await initRelayServices(ctx);
  // quota_data plus what has not been flushed to it yet (the current minutes)
  const rowsOf = (who: QuotaDataOwner, start: number, end: number) =>
    quotaData.withUnflushed(
      () => quotaDataRows(ctx, who, start, end),
      (rows, unflushed) => withUnflushedRows(rows, unflushed, who, start, end),
    );
  const route = (path: string, preHandler: typeof auth.user, handler: RouteHandlerMethod) =>
    app.get(path, { preHandler }, handler);

  route('/api/data/', auth.admin, async (req) => {
    const q = queryOf(req);
    const start = queryInt(q.start_timestamp);
    const end = queryInt(q.end_timestamp);
    const username = (q.username ?? '').trim();
    if (username) return ok(await rowsOf({ username }, start, end));
    return ok(
      await quotaData.withUnflushed(
        () => quotaDataByModelHour(ctx, start, end),
        (rows, unflushed) => withUnflushedByModelHour(rows, unflushed, start, end),
      ),
    );
  });

  route('/api/data/self', auth.user, async (req) => {
    const q = queryOf(req);
    const start = queryInt(q.start_timestamp);
    const end = queryInt(q.end_timestamp);
    if (end - start > DATA_SELF_MAX_SPAN_SEC) return fail('时间跨度不能超过 1 个月');
    // new-api filters start <= created_at <= end as given: a missing end or one before the start matches nothing
    if (end <= 0 || end < start) return ok([]);
    return ok(await rowsOf({ userId: caller(req).id }, start, end));
  });
}
