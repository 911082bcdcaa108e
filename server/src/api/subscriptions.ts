// /api/subscription: new-api's routes (docs/decisions/0015-subscription-plans.md): the user's list of enabled plans,
// own subscriptions, billing preference, balance purchase and gateway orders (EPay, Stripe, Creem) with EPay's
// callbacks; the admin's plans (list, create, update, enabled switch) and users' subscriptions (bind, list,
// invalidate, delete), with new-api's shapes and texts; our windows travel beside each plan as `limits` and beside
// each subscription as `windows`. The expiry sweep rides the task poller.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards, caller } from './auth.js';
import { fail, ok } from '../lib/http.js';
import { criticalRateLimit } from '../lib/rate-limit.js';
import { bodyOf, gatewayCallbacks, guarded, idParam } from './route-helpers.js';
import {
  createPlan,
  listPlans,
  parseEnabled,
  parsePlanWrite,
  setPlanEnabled,
  updatePlan,
} from '../services/subscriptions/plans.js';
import { planIdOf, purchaseWithBalance, requestIdOf } from '../services/subscriptions/purchase.js';
import { selfView, setBillingPreference } from '../services/subscriptions/self.js';
import { requestPlanCreem, requestPlanEpay, requestPlanStripe } from '../services/subscriptions/payments.js';
import { handlePlanEpayCallback } from '../services/subscriptions/orders.js';
import {
  bindPlan,
  deleteSubscription,
  invalidateSubscription,
  userSubscriptions,
} from '../services/subscriptions/admin.js';
import { subscriptionExpiryStep } from '../services/subscriptions/expiry.js';
import { addTaskPollStep } from '../services/tasks/poller.js';

export async function registerSubscriptionRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  /** new-api's `:id` check (a plan's, a user's, a subscription's): a positive integer, else its 无效的…ID */
  const positiveId = (req: Parameters<typeof idParam>[0]) => {
    const id = idParam(req);
    return id !== null && id > 0 ? id : null;
  };

  const critical = criticalRateLimit(ctx);
  /** new-api's admin answer to a subscription change: `{message}` when the user's group changes, else null */
  const notice = (message: string) => ok(message ? { message } : null);
  // the expiry sweep: a step of the master's task poller tick, under its lease (services/subscriptions/expiry.ts)
  addTaskPollStep(subscriptionExpiryStep);

  app.get('/api/subscription/plans', { preHandler: auth.user }, async () => ok(await listPlans(ctx.db, true)));

  app.get('/api/subscription/self', { preHandler: auth.user }, async (req) => ok(await selfView(ctx, caller(req).id)));

  app.put(
    '/api/subscription/self/preference',
    { preHandler: auth.user },
    guarded(async (req) => ok({ billing_preference: await setBillingPreference(ctx, caller(req).id, req.body) })),
  );

  app.post(
    '/api/subscription/balance/pay',
    { onRequest: critical, preHandler: auth.user },
    guarded(async (req) => {
      const body = bodyOf(req);
      await purchaseWithBalance(ctx, caller(req).id, planIdOf(body), undefined, requestIdOf(body));
      return ok(null);
    }),
  );

  // gateway orders: each opens an order and a payment at the gateway, under the critical rate limit as new-api
  app.post(
    '/api/subscription/epay/pay',
    { onRequest: critical, preHandler: auth.user },
    guarded(async (req) => requestPlanEpay(ctx, caller(req).id, bodyOf(req), req.log)),
  );
  const buyer = async (id: number) => {
    const row = await ctx.db.selectFrom('users').select(['email', 'username']).where('id', '=', id).executeTakeFirst();
    return { id, email: row?.email ?? '', username: row?.username ?? '' };
  };
  app.post(
    '/api/subscription/stripe/pay',
    { onRequest: critical, preHandler: auth.user },
    guarded(async (req) => requestPlanStripe(ctx, await buyer(caller(req).id), bodyOf(req), req.log)),
  );
  app.post(
    '/api/subscription/creem/pay',
    { onRequest: critical, preHandler: auth.user },
    guarded(async (req) => requestPlanCreem(ctx, await buyer(caller(req).id), bodyOf(req), req.log)),
  );
  // EPay's callbacks of a plan order (Stripe's and Creem's come through their top-up webhooks): the notify answers
  // the plain text success/fail, the browser's return lands on the console's wallet page
  await gatewayCallbacks(app, {
    '/api/subscription/epay/notify': async (params, req, reply) => {
      const outcome = await handlePlanEpayCallback(ctx, params, req.log);
      const answer = outcome === 'activated' || outcome === 'already' ? 'success' : 'fail';
      return reply.type('text/plain; charset=utf-8').send(answer);
    },
    '/api/subscription/epay/return': async (params, req, reply) => {
      const outcome = await handlePlanEpayCallback(ctx, params, req.log);
      const pay =
        outcome === 'activated' || outcome === 'already' ? 'success' : outcome === 'unpaid' ? 'pending' : 'fail';
      return reply.redirect(`${ctx.options.get('ServerAddress').replace(/\/+$/, '')}/topup?pay=${pay}`, 302);
    },
  });

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
      const id = positiveId(req);
      if (id === null) return fail('无效的ID');
      return (await updatePlan(ctx, id, await parsePlanWrite(ctx, req.body))) ? ok(null) : fail('套餐不存在');
    }),
  );

  app.patch(
    '/api/subscription/admin/plans/:id',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const id = positiveId(req);
      if (id === null) return fail('无效的ID');
      return (await setPlanEnabled(ctx, id, await parseEnabled(req.body))) ? ok(null) : fail('套餐不存在');
    }),
  );

  app.post(
    '/api/subscription/admin/bind',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const body = bodyOf(req);
      const userId = body.user_id;
      if (typeof userId !== 'number' || !Number.isSafeInteger(userId) || userId <= 0) return fail('参数错误');
      return notice(await bindPlan(ctx, userId, planIdOf(body)));
    }),
  );

  app.get(
    '/api/subscription/admin/users/:id/subscriptions',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const id = positiveId(req);
      return id === null ? fail('无效的用户ID') : ok(await userSubscriptions(ctx, id));
    }),
  );

  app.post(
    '/api/subscription/admin/users/:id/subscriptions',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const id = positiveId(req);
      if (id === null) return fail('无效的用户ID');
      return notice(await bindPlan(ctx, id, planIdOf(bodyOf(req))));
    }),
  );

  app.post(
    '/api/subscription/admin/user_subscriptions/:id/invalidate',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const id = positiveId(req);
      return id === null ? fail('无效的订阅ID') : notice(await invalidateSubscription(ctx, id));
    }),
  );

  app.delete(
    '/api/subscription/admin/user_subscriptions/:id',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const id = positiveId(req);
      return id === null ? fail('无效的订阅ID') : notice(await deleteSubscription(ctx, id));
    }),
  );
}
