// Relay-side endpoints that do not call an upstream: model lists (facts §4.10), OpenAI-style billing
// (/dashboard/billing/*), token log lookup (/api/log/token, no auth), CORS preflight, 501 stubs (facts §4.1).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { RelayServices } from './services.js';
import { isBuiltInModel, modelObject } from '../services/model-objects.js';
import { tokenAuth, type RelayCaller } from './auth.js';
import { baseHeaders, RelayError, sendJson, sendRelayError } from './errors.js';
import { refuseUnread } from './admit.js';
import { isUsableGroup } from '../services/groups.js';
import { tokenLogs } from '../services/log-query.js';

function corsPreflight(req: FastifyRequest, reply: FastifyReply): void {
  const origin = req.headers.origin;
  reply
    .status(204)
    .header('Access-Control-Allow-Origin', origin || '*')
    .header('Access-Control-Allow-Credentials', 'true')
    .header('Access-Control-Allow-Methods', 'GET, POST, PUT, DELETE, OPTIONS')
    .header('Access-Control-Allow-Headers', (req.headers['access-control-request-headers'] as string) || '*')
    .header('Access-Control-Max-Age', '43200')
    .send();
}

export async function registerRelayExtras(app: FastifyInstance, ctx: AppContext, svc: RelayServices): Promise<void> {
  for (const p of ['/v1/*', '/dashboard/*', '/pg/*', '/api/log/token']) app.options(p, corsPreflight);

  /** TokenAuth for GET endpoints; sends the error itself and returns null on failure. */
  const auth = async (req: FastifyRequest, reply: FastifyReply): Promise<RelayCaller | null> => {
    reply.hijack();
    try {
      return await tokenAuth(ctx, svc, req.headers, req.url);
    } catch (err) {
      const e = err instanceof RelayError ? err : new RelayError(500, (err as Error).message);
      sendRelayError(reply.raw, e, req.id, req.headers.origin);
      return null;
    }
  };
  const json = (req: FastifyRequest, reply: FastifyReply, status: number, body: unknown) =>
    sendJson(reply.raw, status, JSON.stringify(body), baseHeaders(req.id, req.headers.origin));

  app.get('/v1/models', async (req, reply) => {
    const caller = await auth(req, reply);
    if (!caller) return;
    let ids: string[];
    const token = caller.token!;
    if (token.modelLimitsEnabled) ids = [...(token.modelLimits ?? [])];
    else {
      let group = caller.user.group;
      if (token.group && isUsableGroup(ctx, group, token.group)) group = token.group;
      ids = svc.channels.modelsOfGroup(group);
    }
    json(req, reply, 200, { success: true, data: ids.map(modelObject) });
  });

  app.get('/v1/models/:model', async (req, reply) => {
    const caller = await auth(req, reply);
    if (!caller) return;
    const id = (req.params as { model: string }).model;
    const known = isBuiltInModel(id) || svc.channels.all().some((c) => c.status === 1 && c.models.includes(id));
    if (known) return json(req, reply, 200, modelObject(id));
    json(req, reply, 200, {
      error: { message: `The model '${id}' does not exist`, type: 'invalid_request_error', param: 'model', code: 'model_not_found' },
    });
  });

  const amounts = async (caller: RelayCaller) => {
    const display = ctx.options.bool('DisplayTokenStatEnabled');
    let total: number;
    let used: number;
    const token = caller.token!;
    if (display) {
      const row = await ctx.db.selectFrom('tokens').select(['remain_quota', 'used_quota']).where('id', '=', token.id).executeTakeFirst();
      used = Number(row?.used_quota ?? 0);
      total = Number(row?.remain_quota ?? 0) + used;
    } else {
      const row = await ctx.db.selectFrom('users').select(['quota', 'used_quota']).where('id', '=', caller.user.id).executeTakeFirst();
      used = Number(row?.used_quota ?? 0);
      total = Number(row?.quota ?? 0) + used;
    }
    const currency = ctx.options.bool('DisplayInCurrencyEnabled');
    const perUnit = ctx.options.num('QuotaPerUnit', 500000);
    let amount = currency ? total / perUnit : total;
    if (display && token.unlimited) amount = 100000000;
    // new-api reads the expiry only with the token's figures; the user's figures report no expiry
    return { amount, usedAmount: currency ? used / perUnit : used, expires: display && token.expiredTime > 0 ? token.expiredTime : 0 };
  };

  for (const prefix of ['', '/v1']) {
    app.get(`${prefix}/dashboard/billing/subscription`, async (req, reply) => {
      const caller = await auth(req, reply);
      if (!caller) return;
      const a = await amounts(caller);
      json(req, reply, 200, {
        object: 'billing_subscription',
        has_payment_method: true,
        soft_limit_usd: a.amount,
        hard_limit_usd: a.amount,
        system_hard_limit_usd: a.amount,
        access_until: a.expires,
      });
    });
    app.get(`${prefix}/dashboard/billing/usage`, async (req, reply) => {
      const caller = await auth(req, reply);
      if (!caller) return;
      const a = await amounts(caller);
      json(req, reply, 200, { object: 'list', total_usage: a.usedAmount * 100 });
    });
  }

  app.get('/api/log/token', async (req, reply) => {
    const origin = req.headers.origin;
    reply.header('Access-Control-Allow-Origin', origin || '*').header('Access-Control-Allow-Credentials', 'true');
    const key = String((req.query as Record<string, string>).key ?? '').replace(/^sk-/, '');
    if (!key) return reply.send({ success: false, message: '无效的令牌' });
    const token = await ctx.db.selectFrom('tokens').select('id').where('key', '=', key).executeTakeFirst();
    if (!token) return reply.send({ success: false, message: '无效的令牌' });
    const data = await tokenLogs(ctx, token.id);
    return reply.send({ success: true, message: '', data });
  });

  // answered from the head: the body is never read
  const notImplemented = async (req: FastifyRequest, reply: FastifyReply) => {
    reply.hijack();
    refuseUnread(reply.raw, req.headers, new RelayError(501, 'API not implemented', 'new_api_error', 'api_not_implemented'), req.id);
  };
  const unimplemented: Array<{ method: 'GET' | 'POST' | 'DELETE'; url: string }> = [];
  for (const [method, url] of [
    ['GET', '/v1/files'],
    ['POST', '/v1/files'],
    ['DELETE', '/v1/files/:id'],
    ['GET', '/v1/files/:id'],
    ['GET', '/v1/files/:id/content'],
    ['POST', '/v1/fine-tunes'],
    ['GET', '/v1/fine-tunes'],
    ['GET', '/v1/fine-tunes/:id'],
    ['POST', '/v1/fine-tunes/:id/cancel'],
    ['GET', '/v1/fine-tunes/:id/events'],
    ['DELETE', '/v1/models/:model'],
  ] as const) {
    unimplemented.push({ method, url });
  }
  // Own scope: whatever the body (multipart uploads to /v1/files included), it is drained unread and the answer is
  // the 501, not a 415 from a missing content-type parser.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, payload, done) => {
      payload.resume();
      payload.on('end', () => done(null));
      payload.on('error', done);
    });
    for (const r of unimplemented) scope.route({ ...r, onRequest: notImplemented, handler: notImplemented });
  });
}
