// Custom OAuth providers (new-api-compat.md §9.9): root's CRUD and discovery under /api/custom-oauth-provider, the
// login callback at /api/oauth/<slug> (the built-ins' static routes take precedence), and the bindings routes for
// the user and for admins.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { fail, ok } from '../lib/http.js';
import { criticalRateLimit } from '../lib/rate-limit.js';
import { authGuards, caller } from './auth.js';
import { bodyOf, guarded, idParam } from './route-helpers.js';
import { handleCallback } from './oauth.js';
import {
  PROVIDER_NOT_FOUND,
  adminView,
  createProvider,
  deleteProvider,
  listProviders,
  providerById,
  providerBySlug,
  updateProvider,
} from '../services/oauth/custom-providers.js';
import { customLoginProvider } from '../services/oauth/custom-login.js';
import { fetchDiscovery } from '../services/oauth/custom-discovery.js';
import { adminTarget, bindingsOf, unbindByAdmin, unbindOwn } from '../services/oauth/custom-bindings.js';

const INVALID_ID = '无效的 ID';
const INVALID_PROVIDER_ID = '无效的提供商 ID';

/** A route's numeric param: plain decimal digits within 2^53, else null. */
function numericParam(req: FastifyRequest, name: string): number | null {
  const raw = (req.params as Record<string, string>)[name] ?? '';
  return /^\d+$/.test(raw) && Number.isSafeInteger(Number(raw)) ? Number(raw) : null;
}

export async function registerCustomOAuthRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const critical = criticalRateLimit(ctx);
  const root = { preHandler: auth.root };

  // ---- root: the providers ----
  app.get(
    '/api/custom-oauth-provider/',
    root,
    guarded(async () => ok((await listProviders(ctx)).map(adminView))),
  );
  app.post(
    '/api/custom-oauth-provider/discovery',
    root,
    guarded(async (req) => ok(await fetchDiscovery(ctx, bodyOf(req), req.log))),
  );
  app.get(
    '/api/custom-oauth-provider/:id',
    root,
    guarded(async (req) => {
      const id = idParam(req);
      if (id === null) return fail(INVALID_ID);
      const row = await providerById(ctx, id);
      return row ? ok(adminView(row)) : fail(PROVIDER_NOT_FOUND);
    }),
  );
  app.post(
    '/api/custom-oauth-provider/',
    root,
    guarded(async (req) => ok(adminView(await createProvider(ctx, req.body)), '创建成功')),
  );
  app.put(
    '/api/custom-oauth-provider/:id',
    root,
    guarded(async (req) => {
      const id = idParam(req);
      if (id === null) return fail(INVALID_ID);
      return ok(adminView(await updateProvider(ctx, id, req.body)), '更新成功');
    }),
  );
  app.delete(
    '/api/custom-oauth-provider/:id',
    root,
    guarded(async (req) => {
      const id = idParam(req);
      if (id === null) return fail(INVALID_ID);
      await deleteProvider(ctx, id);
      return ok(undefined, '删除成功');
    }),
  );

  // ---- the login callback ----
  app.get(
    '/api/oauth/:slug',
    { onRequest: critical },
    guarded(async (req, reply) => {
      const slug = String((req.params as { slug?: string }).slug ?? '').toLowerCase();
      const row = /^[a-z0-9-]{1,64}$/.test(slug) ? await providerBySlug(ctx, slug) : undefined;
      if (!row) return reply.status(404).send(fail(PROVIDER_NOT_FOUND));
      return handleCallback(ctx, customLoginProvider(row), req, reply);
    }),
  );

  // ---- the caller's own bindings ----
  app.get(
    '/api/user/oauth/bindings',
    { preHandler: auth.user },
    guarded(async (req) => ok(await bindingsOf(ctx, caller(req).id))),
  );
  app.delete(
    '/api/user/oauth/bindings/:provider_id',
    { preHandler: auth.user },
    guarded(async (req) => {
      const providerId = numericParam(req, 'provider_id');
      if (providerId === null) return fail(INVALID_PROVIDER_ID);
      await unbindOwn(ctx, caller(req).id, providerId);
      return ok(undefined, '解绑成功');
    }),
  );

  // ---- admins, on users below their role ----
  app.get(
    '/api/user/:id/oauth/bindings',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const id = idParam(req);
      if (id === null) return fail(INVALID_ID);
      return ok(await bindingsOf(ctx, await adminTarget(ctx, caller(req).role, id)));
    }),
  );
  app.delete(
    '/api/user/:id/oauth/bindings/:provider_id',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const id = idParam(req);
      const providerId = numericParam(req, 'provider_id');
      if (id === null) return fail(INVALID_ID);
      if (providerId === null) return fail(INVALID_PROVIDER_ID);
      await unbindByAdmin(ctx, await adminTarget(ctx, caller(req).role, id), providerId);
      return ok(undefined, '解绑成功');
    }),
  );
}
