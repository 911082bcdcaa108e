// /api/redemption (admin): list, search, read, create, edit, soft delete (new-api-compat.md §3.4, §3.5, §9.2).
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards, caller } from './auth.js';
import { fail, ok } from '../lib/http.js';
import { bodyOf, guarded, idParam, queryOf } from './route-helpers.js';
import {
  createRedemptions,
  deleteRedemption,
  getRedemption,
  listRedemptions,
  redemptionPageParams,
  updateRedemption,
} from '../services/redemptions.js';

export async function registerRedemptionRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const route = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, handler: RouteHandlerMethod) =>
    app.route({ method, url, preHandler: auth.admin, handler });

  route(
    'GET',
    '/api/redemption/',
    guarded(async (req) => {
      const { page, pageSize } = redemptionPageParams(queryOf(req));
      return ok(await listRedemptions(ctx.db, { page, pageSize }));
    }),
  );

  route(
    'GET',
    '/api/redemption/search',
    guarded(async (req) => {
      const q = queryOf(req);
      const { page, pageSize } = redemptionPageParams(q);
      return ok(await listRedemptions(ctx.db, { keyword: q.keyword ?? '', page, pageSize }));
    }),
  );

  route(
    'GET',
    '/api/redemption/:id',
    guarded(async (req) => {
      const id = idParam(req);
      if (id === null) return fail('无效的兑换码 ID');
      const row = await getRedemption(ctx.db, id);
      return row ? ok(row) : fail('兑换码不存在');
    }),
  );

  route(
    'POST',
    '/api/redemption/',
    guarded(async (req) => ok(await createRedemptions(ctx, caller(req).id, bodyOf(req)))),
  );

  route(
    'PUT',
    '/api/redemption/',
    guarded(async (req) => {
      // new-api treats any non-empty status_only as set.
      const statusOnly = !!queryOf(req).status_only;
      return ok(await updateRedemption(ctx, bodyOf(req), statusOnly));
    }),
  );

  route(
    'DELETE',
    '/api/redemption/:id',
    guarded(async (req) => {
      const id = idParam(req);
      if (id === null) return fail('无效的兑换码 ID');
      return (await deleteRedemption(ctx, id)) ? ok() : fail('兑换码不存在');
    }),
  );
}
