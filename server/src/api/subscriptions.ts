// /api/subscription: new-api's plan routes (docs/decisions/0015-subscription-plans.md): the user's list of enabled
// plans and the admin's list, create, update and enabled switch, with new-api's shapes and texts; our windows travel
// beside each plan as `limits`.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards } from './auth.js';
import { fail, ok } from '../lib/http.js';
import { bodyOf, guarded, idParam } from './route-helpers.js';
import {
  createPlan,
  listPlans,
  parseEnabled,
  parsePlanWrite,
  setPlanEnabled,
  updatePlan,
} from '../services/subscriptions/plans.js';

export function registerSubscriptionRoutes(app: FastifyInstance, ctx: AppContext): void {
  const auth = authGuards(ctx);
  /** new-api's `:id` check: a positive integer, else 无效的ID */
  const planId = (req: Parameters<typeof idParam>[0]) => {
    const id = idParam(req);
    return id !== null && id > 0 ? id : null;
  };

  app.get('/api/subscription/plans', { preHandler: auth.user }, async () => ok(await listPlans(ctx.db, true)));

  app.get('/api/subscription/admin/plans', { preHandler: auth.admin }, async () => ok(await listPlans(ctx.db)));

  app.post(
    '/api/subscription/admin/plans',
    { preHandler: auth.admin },
    guarded(async (req) => ok(await createPlan(ctx, await parsePlanWrite(ctx, bodyOf(req))))),
  );

  app.put(
    '/api/subscription/admin/plans/:id',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const id = planId(req);
      if (id === null) return fail('无效的ID');
      return (await updatePlan(ctx, id, await parsePlanWrite(ctx, req.body))) ? ok(null) : fail('套餐不存在');
    }),
  );

  app.patch(
    '/api/subscription/admin/plans/:id',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const id = planId(req);
      if (id === null) return fail('无效的ID');
      return (await setPlanEnabled(ctx, id, await parseEnabled(req.body))) ? ok(null) : fail('套餐不存在');
    }),
  );
}
