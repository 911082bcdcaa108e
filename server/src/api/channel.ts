// /api/channel (admin): list, search, CRUD, batch and tag tools (new-api-compat.md §3.4, §3.5), the type catalogue.
// The test, balance and fetch_models routes live in channel-test.ts; the model lists in models.ts.
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards } from './auth.js';
import { fail, ok } from '../lib/http.js';
import { bodyOf, guarded, idParam, queryOf } from './route-helpers.js';
import {
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
import { channelTypeCatalogue } from '../services/channel-catalogue.js';
import { manageMultiKeys } from '../services/multi-key-manage.js';
import { channelFormProblemByMode } from '../services/multi-key-input.js';

const truthy = (v: string | undefined) => v === 'true' || v === '1';

function intParam(v: string | undefined, def: number): number {
  const n = Number.parseInt(v ?? '', 10);
  return Number.isFinite(n) ? n : def;
}

export async function registerChannelRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const admin = { preHandler: auth.admin };
  const route = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, handler: RouteHandlerMethod) =>
    app.route({ method, url, ...admin, handler });

  route(
    'GET',
    '/api/channel/',
    guarded(async (req) => {
      const q = queryOf(req);
      let pageSize = intParam(q.page_size, 10);
      if (pageSize <= 0) pageSize = 10;
      pageSize = Math.min(pageSize, 10000);
      const page = Math.max(0, intParam(q.p, 0));
      const { items, total } = await listChannels(ctx.db, {
        page,
        pageSize,
        idSort: truthy(q.id_sort),
        tagMode: truthy(q.tag_mode),
      });
      // new-api's snapshot answers a bare array (new-api-compat.md §3.5); `total` rides next to it for pagers that want
      // it.
      return { ...ok(items), total };
    }),
  );

  // the console's type select, placeholders and key hints (a static path: it wins over /api/channel/:id)
  route(
    'GET',
    '/api/channel/types',
    guarded(async () => ok(channelTypeCatalogue())),
  );

  // the drawer's fields checked by the rules a save applies (the providers' channel facts), before it saves; a refused
  // field is named so the message shows under it
  route(
    'POST',
    '/api/channel/check',
    guarded(async (req) => {
      const problem = channelFormProblemByMode(bodyOf(req));
      return problem ? { success: false, message: problem.message, data: { field: problem.field } } : ok();
    }),
  );

  route(
    'GET',
    '/api/channel/search',
    guarded(async (req) => {
      const q = queryOf(req);
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
      const ids = await createChannels(ctx, bodyOf(req));
      return ok(ids.length === 1 ? { id: ids[0], ids } : { ids });
    }),
  );

  // a multi-key channel's key manager (new-api's actions and answers; services/multi-key-manage.ts)
  route(
    'POST',
    '/api/channel/multi_key/manage',
    guarded(async (req) => {
      const r = await manageMultiKeys(ctx, bodyOf(req));
      return ok(r.data, r.message);
    }),
  );

  route(
    'PUT',
    '/api/channel/',
    guarded(async (req) => ok(await updateChannel(ctx, bodyOf(req)))),
  );

  route(
    'DELETE',
    '/api/channel/disabled',
    guarded(async () => ok(await deleteDisabledChannels(ctx))),
  );

  route(
    'POST',
    '/api/channel/batch',
    guarded(async (req) => ok(await batchDeleteChannels(ctx, bodyOf(req)))),
  );

  route(
    'POST',
    '/api/channel/fix',
    guarded(async () => ok(await fixAbilities(ctx))),
  );

  route(
    'POST',
    '/api/channel/batch/tag',
    guarded(async (req) => ok(await batchSetTag(ctx, bodyOf(req)))),
  );

  route(
    'PUT',
    '/api/channel/tag',
    guarded(async (req) => ok(await editTag(ctx, bodyOf(req)))),
  );

  route(
    'POST',
    '/api/channel/tag/enabled',
    guarded(async (req) => ok(await setTagStatus(ctx, bodyOf(req), 1))),
  );

  route(
    'POST',
    '/api/channel/tag/disabled',
    guarded(async (req) => ok(await setTagStatus(ctx, bodyOf(req), 2))),
  );

  route(
    'GET',
    '/api/channel/:id',
    guarded(async (req) => {
      const id = idParam(req);
      if (id === null) return fail('无效的渠道 ID');
      const ch = await getChannel(ctx.db, id);
      return ch ? ok(ch) : fail('渠道不存在');
    }),
  );

  route(
    'POST',
    '/api/channel/copy/:id',
    guarded(async (req) => {
      const id = idParam(req);
      if (id === null) return fail('无效的渠道 ID');
      const q = queryOf(req);
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
      const id = idParam(req);
      if (id === null) return fail('无效的渠道 ID');
      return (await deleteChannel(ctx, id)) ? ok() : fail('渠道不存在');
    }),
  );
}
