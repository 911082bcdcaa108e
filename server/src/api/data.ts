// /api/data: the usage dashboard's hourly buckets (facts §2.11, §5.8).
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards, caller } from './auth.js';
import { fail, ok } from '../lib/http.js';
import { initRelayServices } from '../services/cache/index.js';
import {
  DATA_SELF_MAX_SPAN_SEC,
  quotaDataByModelHour,
  quotaDataRows,
  withUnflushedByModelHour,
  withUnflushedRows,
  type QuotaDataOwner,
} from '../services/log-query.js';

type Query = Record<string, string | undefined>;

function int(v: string | undefined): number {
  const n = Number.parseInt(v ?? '', 10);
  return Number.isSafeInteger(n) ? n : 0;
}

export async function registerDataRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const { quotaData } = await initRelayServices(ctx);
  // quota_data plus what has not been flushed to it yet (the current minutes)
  const rowsOf = (who: QuotaDataOwner, start: number, end: number) =>
    quotaData.withUnflushed(() => quotaDataRows(ctx, who, start, end), (rows, unflushed) => withUnflushedRows(rows, unflushed, who, start, end));
  const both = (path: string, preHandler: typeof auth.user, handler: RouteHandlerMethod) => {
    app.get(path, { preHandler }, handler);
    app.get(path.endsWith('/') ? path.slice(0, -1) : path + '/', { preHandler }, handler);
  };

  both('/api/data/', auth.admin, async (req) => {
    const q = req.query as Query;
    const start = int(q.start_timestamp);
    const end = int(q.end_timestamp);
    const username = (q.username ?? '').trim();
    if (username) return ok(await rowsOf({ username }, start, end));
    return ok(
      await quotaData.withUnflushed(
        () => quotaDataByModelHour(ctx, start, end),
        (rows, unflushed) => withUnflushedByModelHour(rows, unflushed, start, end),
      ),
    );
  });

  both('/api/data/self', auth.user, async (req) => {
    const q = req.query as Query;
    const start = int(q.start_timestamp);
    const end = int(q.end_timestamp);
    // An open-ended range counts as too wide: the self view is bounded to one month.
    if (!start || !end || end - start > DATA_SELF_MAX_SPAN_SEC) return fail('时间跨度不能超过 1 个月');
    if (end < start) return fail('结束时间不能早于开始时间');
    return ok(await rowsOf({ userId: caller(req).id }, start, end));
  });
}
