// Wallet calls under /api/user: redeem a code, quote and start an EPay top-up, and the EPay notify
// (new-api-compat.md §3.4, §9.1, §9.2).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards, caller } from './auth.js';
import { ok } from '../lib/http.js';
import { bodyOf, guarded } from './route-helpers.js';
import { redeemCode } from '../services/redemptions.js';
import { handleEpayNotify, requestAmount, requestPay } from '../services/topup.js';

/** Flattens query or form fields to single strings (the first value of a repeated one). */
function flat(input: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!input || typeof input !== 'object') return out;
  for (const [k, v] of Object.entries(input as Record<string, unknown>)) {
    const first = Array.isArray(v) ? v[0] : v;
    if (first !== undefined && first !== null) out[k] = String(first);
  }
  return out;
}

export async function registerTopupRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);

  app.post(
    '/api/user/topup',
    { preHandler: auth.user },
    guarded(async (req) => ok(await redeemCode(ctx, caller(req).id, bodyOf(req).key))),
  );

  app.post('/api/user/amount', { preHandler: auth.user }, async (req) =>
    requestAmount(ctx, bodyOf(req), caller(req).group),
  );

  app.post('/api/user/pay', { preHandler: auth.user }, async (req) => {
    const me = caller(req);
    return requestPay(ctx, { id: me.id, group: me.group }, bodyOf(req), req.log);
  });

  // The gateway calls back with GET (query) or POST (form body); the form parser stays inside this scope.
  await app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });
    const notify = async (req: FastifyRequest, reply: FastifyReply) => {
      const params = { ...flat(req.query), ...flat(req.body) };
      const answer = await handleEpayNotify(ctx, params, req.log);
      return reply.type('text/plain; charset=utf-8').send(answer);
    };
    scope.get('/api/user/epay/notify', notify);
    scope.post('/api/user/epay/notify', notify);
  });
}
