// /api/channel (admin): list, search, CRUD, batch and tag tools (facts §3.4, §3.5). The test, balance and
// fetch_models routes live in channel-test.ts; the model lists in models.ts.
import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards } from './auth.js';
import { fail, ok } from '../lib/http.js';
import {
  ChannelInputError,
  batchDeleteChannels,
  batchSetTag,
  copyChannel,
  createChannels,
  deleteChannel,
  deleteDisabledChannels,
  editTag,
  fixAbilities,
  getChannel,
  listChannels,
  searchChannels,
  setTagStatus,
  updateChannel,
} from '../services/channels.js';

type Query = Record<string, string | undefined>;

const truthy = (v: string | undefined) => v === 'true' || v === '1';

function intParam(v: string | undefined, def: number): number {
  const n = Number.parseInt(v ?? '', 10);
  return Number.isFinite(n) ? n : def;
}

/** Turns input errors into the `success:false` envelope; anything else stays a 500. */
function guarded(fn: (req: FastifyRequest) => Promise<unknown>): RouteHandlerMethod {
  return async (req) => {
    try {
      return await fn(req);
    } catch (err) {
      if (err instanceof ChannelInputError) return fail(err.message);
      throw err;
    }
  };
}

export async function registerChannelRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const admin = { preHandler: auth.admin };
  const route = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, handler: RouteHandlerMethod) => app.route({ method, url, ...admin, handler });

  route(
    'GET',
    '/api/channel/',
    guarded(async (req) => {
      const q = req.query as Query;
      let pageSize = intParam(q.page_size, 10);
      if (pageSize <= 0) pageSize = 10;
      pageSize = Math.min(pageSize, 10000);
      const page = Math.max(0, intParam(q.p, 0));
      const { items, total } = await listChannels(ctx.db, { page, pageSize, idSort: truthy(q.id_sort), tagMode: truthy(q.tag_mode) });
      // new-api's snapshot answers a bare array (facts §3.5); `total` rides next to it for pagers that want it.
      return { ...ok(items), total };
    }),
  );

  route(
    'GET',
    '/api/channel/search',
    guarded(async (req) => {
      const q = req.query as Query;
      const rows = await searchChannels(ctx.db, {
        keyword: q.keyword ?? '',
        group: q.group ?? '',
        model: q.model ?? '',
        idSort: truthy(q.id_sort),
        tagMode: truthy(q.tag_mode),
      });
      return { ...ok(rows), total: rows.length };
    }),
  );

  route(
    'POST',
    '/api/channel/',
    guarded(async (req) => {
      const ids = await createChannels(ctx, (req.body ?? {}) as Record<string, unknown>);
      return ok(ids.length === 1 ? { id: ids[0], ids } : { ids });
    }),
  );

  route(
    'PUT',
    '/api/channel/',
    guarded(async (req) => ok(await updateChannel(ctx, (req.body ?? {}) as Record<string, unknown>))),
  );

  route(
    'DELETE',
    '/api/channel/disabled',
    guarded(async () => ok(await deleteDisabledChannels(ctx))),
  );

  route(
    'POST',
    '/api/channel/batch',
    guarded(async (req) => ok(await batchDeleteChannels(ctx, (req.body ?? {}) as Record<string, unknown>))),
  );

  route(
    'POST',
    '/api/channel/fix',
    guarded(async () => ok(await fixAbilities(ctx))),
  );

  route(
    'POST',
    '/api/channel/batch/tag',
    guarded(async (req) => ok(await batchSetTag(ctx, (req.body ?? {}) as Record<string, unknown>))),
  );

  route(
    'PUT',
    '/api/channel/tag',
    guarded(async (req) => ok(await editTag(ctx, (req.body ?? {}) as Record<string, unknown>))),
  );

  route(
    'POST',
    '/api/channel/tag/enabled',
    guarded(async (req) => ok(await setTagStatus(ctx, (req.body ?? {}) as Record<string, unknown>, 1))),
  );

  route(
    'POST',
    '/api/channel/tag/disabled',
    guarded(async (req) => ok(await setTagStatus(ctx, (req.body ?? {}) as Record<string, unknown>, 2))),
  );

  const channelId = (req: FastifyRequest) => {
    const raw = (req.params as { id: string }).id;
    return /^\d+$/.test(raw) && Number.isSafeInteger(Number(raw)) ? Number(raw) : null;
  };

  route(
    'GET',
    '/api/channel/:id',
    guarded(async (req) => {
      const id = channelId(req);
      if (id === null) return fail('无效的渠道 ID');
      const ch = await getChannel(ctx.db, id);
      return ch ? ok(ch) : fail('渠道不存在');
    }),
  );

  route(
    'POST',
    '/api/channel/copy/:id',
    guarded(async (req) => {
      const id = channelId(req);
      if (id === null) return fail('无效的渠道 ID');
      const q = req.query as Query;
      // new-api's defaults: the name gets "_复制", and the copy starts with no balance and no used quota
      const suffix = typeof q.suffix === 'string' ? q.suffix : '_复制';
      const resetBalance = q.reset_balance !== 'false';
      const newId = await copyChannel(ctx, id, suffix, resetBalance);
      return newId === null ? fail('渠道不存在') : ok({ id: newId });
    }),
  );

  route(
    'DELETE',
    '/api/channel/:id',
    guarded(async (req) => {
      const id = channelId(req);
      if (id === null) return fail('无效的渠道 ID');
      return (await deleteChannel(ctx, id)) ? ok() : fail('渠道不存在');
    }),
  );
}
