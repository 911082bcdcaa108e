// Wallet calls under /api/user: redeem a code, quote and start an EPay, Stripe or Creem top-up, their notify and
// webhooks (new-api-compat.md §3.4, §9.1, §9.2, §29, §31), the top-up history and an admin's completion of a
// pending order (services/topup-history.ts, topup.ts), and the daily check-in (services/checkin.ts).
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards, caller } from './auth.js';
import { ok } from '../lib/http.js';
import { bodyOf, gatewayCallbacks, guarded, pageQuery, queryOf } from './route-helpers.js';
import { redeemCode } from '../services/redemptions.js';
import { checkIn, checkinStatus } from '../services/checkin.js';
import { humanCheck } from './human-check.js';
import { criticalRateLimit } from '../lib/rate-limit.js';
import { completeTopUpByAdmin, handleEpayNotify, requestAmount, requestPay } from '../services/topup.js';
import { listTopUps } from '../services/topup-history.js';
import { handleCreemWebhook, requestCreemPay } from '../services/creem-topup.js';
import { handleStripeWebhook, requestStripeAmount, requestStripePay } from '../services/stripe-topup.js';

export async function registerTopupRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);

  app.post(
    '/api/user/topup',
    { preHandler: auth.user },
    guarded(async (req) => ok(await redeemCode(ctx, caller(req).id, bodyOf(req).key))),
  );

  app.get(
    '/api/user/checkin',
    { preHandler: auth.user },
    guarded(async (req) => ok(await checkinStatus(ctx, caller(req).id, queryOf(req).month))),
  );
  app.post(
    '/api/user/checkin',
    { preHandler: [auth.user, humanCheck(ctx)] },
    guarded(async (req) => ({ success: true, message: '签到成功', data: await checkIn(ctx, caller(req).id) })),
  );

  app.post('/api/user/amount', { preHandler: auth.user }, async (req) =>
    requestAmount(ctx, bodyOf(req), caller(req).group),
  );

  app.post('/api/user/pay', { preHandler: auth.user }, async (req) => {
    const me = caller(req);
    return requestPay(ctx, { id: me.id, group: me.group }, bodyOf(req), req.log);
  });

  // the top-up history: the caller's own orders, or every user's for an admin (new-api's paths and page object)
  const history = (admin: boolean) =>
    guarded(async (req) => {
      const q = queryOf(req);
      const keyword = typeof q.keyword === 'string' ? q.keyword : '';
      const userId = admin ? undefined : caller(req).id;
      return ok(await listTopUps(ctx, { userId, keyword, ...pageQuery(q) }));
    });
  app.get('/api/user/topup/self', { preHandler: auth.user }, history(false));
  app.get('/api/user/topup', { preHandler: auth.admin }, history(true));

  app.post(
    '/api/user/topup/complete',
    { preHandler: auth.admin },
    guarded(async (req) => {
      await completeTopUpByAdmin(ctx, bodyOf(req).trade_no, caller(req).id);
      return ok(null);
    }),
  );

  app.post('/api/user/stripe/amount', { preHandler: auth.user }, async (req) => requestStripeAmount(ctx, bodyOf(req)));
  // each call opens a Checkout session at Stripe: the critical rate limit, as new-api
  app.post('/api/user/stripe/pay', { onRequest: criticalRateLimit(ctx), preHandler: auth.user }, async (req) => {
    const me = caller(req);
    const row = await ctx.db.selectFrom('users').select('email').where('id', '=', me.id).executeTakeFirst();
    return requestStripePay(ctx, { id: me.id, email: row?.email ?? '' }, bodyOf(req), req.log);
  });

  // each call opens a checkout at Creem: the critical rate limit, as new-api
  app.post('/api/user/creem/pay', { onRequest: criticalRateLimit(ctx), preHandler: auth.user }, async (req) => {
    const me = caller(req);
    const row = await ctx.db
      .selectFrom('users')
      .select(['email', 'username'])
      .where('id', '=', me.id)
      .executeTakeFirst();
    return requestCreemPay(
      ctx,
      { id: me.id, email: row?.email ?? '', username: row?.username ?? '' },
      bodyOf(req),
      req.log,
    );
  });

  // Stripe and Creem sign the exact bytes they sent: inside this scope JSON bodies stay raw Buffers for the
  // verification.
  await app.register(async (scope) => {
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    scope.post('/api/stripe/webhook', async (req, reply) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const signature = req.headers['stripe-signature'];
      const status = await handleStripeWebhook(
        ctx,
        raw,
        typeof signature === 'string' ? signature : undefined,
        req.log,
      );
      return reply.code(status).send();
    });
    scope.post('/api/creem/webhook', async (req, reply) => {
      const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      const signature = req.headers['creem-signature'];
      const status = await handleCreemWebhook(ctx, raw, typeof signature === 'string' ? signature : undefined, req.log);
      return reply.code(status).send();
    });
  });

  // EPay's notify of a top-up (a plan order's has its own path: api/subscriptions.ts)
  await gatewayCallbacks(app, {
    '/api/user/epay/notify': async (params, req, reply) =>
      reply.type('text/plain; charset=utf-8').send(await handleEpayNotify(ctx, params, req.log)),
  });
}
