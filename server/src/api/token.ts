// /api/token (user; only ever the caller's own tokens). new-api-compat.md §3.4, §3.5: `p` 0-based, `size` 1..100.
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards, caller } from './auth.js';
import { fail, ok } from '../lib/http.js';
import { bodyOf, guarded, idParam, queryOf } from './route-helpers.js';
import { createToken, deleteToken, getToken, listTokens, searchTokens, updateToken } from '../services/tokens.js';

export async function registerTokenRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const route = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, handler: RouteHandlerMethod) =>
    app.route({ method, url, preHandler: auth.user, handler });

  route(
    'GET',
    '/api/token/',
    guarded(async (req) => {
      const q = queryOf(req);
      const p = Math.max(0, Number.parseInt(q.p ?? '', 10) || 0);
      let size = Number.parseInt(q.size ?? '', 10) || 0;
      if (size <= 0) size = 10;
      if (size > 100) size = 100;
      return ok(await listTokens(ctx.db, caller(req).id, p, size));
    }),
  );

  route(
    'GET',
    '/api/token/search',
    guarded(async (req) => {
      const q = queryOf(req);
      return ok(await searchTokens(ctx.db, caller(req).id, q.keyword ?? '', q.token ?? ''));
    }),
  );

  route(
    'GET',
    '/api/token/:id',
    guarded(async (req) => {
      const id = idParam(req);
      if (id === null) return fail('无效的令牌 ID');
      const t = await getToken(ctx.db, caller(req).id, id);
      return t ? ok(t) : fail('令牌不存在');
    }),
  );

  route(
    'POST',
    '/api/token/',
    guarded(async (req) => {
      const me = caller(req);
      return ok(await createToken(ctx, { id: me.id, group: me.group }, bodyOf(req)));
    }),
  );

  route(
    'PUT',
    '/api/token/',
    guarded(async (req) => {
      const me = caller(req);
      // new-api treats any non-empty status_only as set.
      const statusOnly = !!queryOf(req).status_only;
      return ok(await updateToken(ctx, { id: me.id, group: me.group }, bodyOf(req), statusOnly));
    }),
  );

  route(
    'DELETE',
    '/api/token/:id',
    guarded(async (req) => {
      const id = idParam(req);
      if (id === null) return fail('无效的令牌 ID');
      return (await deleteToken(ctx, caller(req).id, id)) ? ok() : fail('令牌不存在');
    }),
  );
}
