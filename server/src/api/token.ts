// /api/token (user; only ever the caller's own tokens). Facts §3.4, §3.5: `p` 0-based, `size` 1..100.
import type { FastifyInstance, FastifyRequest, RouteHandlerMethod } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards, caller } from './auth.js';
import { fail, ok } from '../lib/http.js';
import { TokenInputError, createToken, deleteToken, getToken, listTokens, searchTokens, updateToken } from '../services/tokens.js';

type Query = Record<string, string | undefined>;

function guarded(fn: (req: FastifyRequest) => Promise<unknown>): RouteHandlerMethod {
  return async (req) => {
    try {
      return await fn(req);
    } catch (err) {
      if (err instanceof TokenInputError) return fail(err.message);
      throw err;
    }
  };
}

function tokenId(req: FastifyRequest): number | null {
  const raw = (req.params as { id: string }).id;
  return /^\d+$/.test(raw) && Number.isSafeInteger(Number(raw)) ? Number(raw) : null;
}

export async function registerTokenRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const route = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, handler: RouteHandlerMethod) => app.route({ method, url, preHandler: auth.user, handler });

  route(
    'GET',
    '/api/token/',
    guarded(async (req) => {
      const q = req.query as Query;
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
      const q = req.query as Query;
      return ok(await searchTokens(ctx.db, caller(req).id, q.keyword ?? '', q.token ?? ''));
    }),
  );

  route(
    'GET',
    '/api/token/:id',
    guarded(async (req) => {
      const id = tokenId(req);
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
      return ok(await createToken(ctx, { id: me.id, group: me.group }, (req.body ?? {}) as Record<string, unknown>));
    }),
  );

  route(
    'PUT',
    '/api/token/',
    guarded(async (req) => {
      const me = caller(req);
      // new-api treats any non-empty status_only as set.
      const statusOnly = !!(req.query as Query).status_only;
      return ok(await updateToken(ctx, { id: me.id, group: me.group }, (req.body ?? {}) as Record<string, unknown>, statusOnly));
    }),
  );

  route(
    'DELETE',
    '/api/token/:id',
    guarded(async (req) => {
      const id = tokenId(req);
      if (id === null) return fail('无效的令牌 ID');
      return (await deleteToken(ctx, caller(req).id, id)) ? ok() : fail('令牌不存在');
    }),
  );
}
