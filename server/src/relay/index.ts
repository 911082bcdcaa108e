// The relay (/v1/*, /pg/*, /dashboard/*): token auth, channel selection, provider conversion, billing.
//
// Every JSON relay route runs one pipeline (pipeline/run.ts: authenticate, parse, admit, route, validate, price,
// reserve, attempt, settle, log). What differs per endpoint is its mode (modes/mode.ts; its line in modes/routes.ts),
// per client format its codec (formats/), per upstream its provider (providers/); docs/architecture.md says how to add
// each. registerJsonRelayRoutes creates an encapsulated Fastify scope whose routes authenticate the caller before the
// body is read (admit.ts) and whose body parser keeps the raw request as a Buffer (gzip / br / deflate decoded), so the
// pipeline parses it once and forwards the original bytes when nothing changes.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { initRelayServices, relayServices, type RelayServices } from './services.js';
import { relayJson, type JsonRelayOptions } from './pipeline/run.js';
import type { RelayRequest } from './request.js';
import { FAST_PATH_ROUTES, JSON_RELAY_ROUTES, type JsonRelayRoute } from './modes/routes.js';
import { closeProxies } from './channel-setting.js';
import { installRelayFastPath } from './fast-path.js';
import { registerCorsPreflight } from './endpoints/cors.js';
import { registerModelList } from './endpoints/models.js';
import { registerDashboardBilling } from './endpoints/dashboard-billing.js';
import { registerTokenLog } from './endpoints/token-log.js';
import { registerNotImplemented } from './endpoints/not-implemented.js';
import { registerTaskRoutes } from './tasks/routes.js';
import { registerMjRoutes } from './tasks/mj-routes.js';
import { registerVideoRoutes } from './tasks/video-routes.js';
import { admitHook } from './admit.js';
import { installRealtime } from './realtime/index.js';
import { decodeBody } from './body-decode.js';
import { BODY_LIMIT } from '../lib/body-limits.js';
import { notFound } from './endpoints/not-found.js';
import type { LocalAnswer } from './endpoints/count-tokens.js';
import { baseHeaders, RelayError, sendJson, sendRelayError } from './errors.js';

function decode(req: FastifyRequest, body: Buffer, done: (err: Error | null, body?: unknown) => void): void {
  decodeBody(req.headers['content-encoding'], body, BODY_LIMIT, (err, out) => {
    if (!err) return done(null, out);
    // Fastify's error handler answers it in the OpenAI shape (app.ts)
    done(Object.assign(new Error(err.message), { statusCode: err.status }));
  });
}

const EMPTY = Buffer.alloc(0);

/** The engine's request from Fastify's, whose caller the route's onRequest hook has authenticated (admit.ts). */
function relayRequestOf(req: FastifyRequest): RelayRequest {
  return {
    id: req.id,
    url: req.url,
    headers: req.headers,
    ip: req.ip,
    // no body at all (no content-type, nothing sent) leaves Fastify's body unset
    body: Buffer.isBuffer(req.body) ? req.body : EMPTY,
    caller: req.relayCaller ?? null,
    sessionUserId: req.auth?.id ?? 0,
  };
}

/** A route answered without an upstream (token counting): the parsed body in, the format's JSON out. */
function answerLocally(
  svc: RelayServices,
  req: FastifyRequest,
  reply: FastifyReply,
  local: LocalAnswer,
  model: string,
): void {
  reply.hijack();
  let err: RelayError;
  try {
    const body: unknown = JSON.parse(relayRequestOf(req).body.toString('utf8'));
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new RelayError(400, 'body must be a JSON object');
    const answer = local.answer(body as Record<string, any>, model);
    svc.metrics.countLocal('count_tokens', 200, local.format);
    return sendJson(reply.raw, 200, JSON.stringify(answer), baseHeaders(req.id, req.headers.origin));
  } catch (e) {
    err =
      e instanceof RelayError ? e : new RelayError(400, `无效的请求, ${(e as Error).message}`, 'invalid_request_error');
  }
  svc.metrics.countLocal('count_tokens', err.status, local.format);
  sendRelayError(reply.raw, err, req.id, req.headers, local.format);
}

/** Registers JSON relay routes (modes/routes.ts) in a scope that keeps raw bodies (see the header comment). */
async function registerJsonRelayRoutes(app: FastifyInstance, ctx: AppContext, routes: JsonRelayRoute[]): Promise<void> {
  const svc = await initRelayServices(ctx);
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) => decode(req, body as Buffer, done));
    const admitSession = admitHook(ctx, svc, true);
    for (const r of routes) {
      const admitToken = admitHook(ctx, svc, false, r.mode.format);
      const base: JsonRelayOptions = { mode: r.mode, playground: r.playground };
      scope.route({
        method: r.method ?? 'POST',
        url: r.url,
        onRequest: r.playground ? admitSession : admitToken,
        bodyLimit: BODY_LIMIT,
        handler: (req: FastifyRequest, reply: FastifyReply) => {
          let opts = base;
          if (r.modelParam) opts = { ...base, pathModel: (req.params as Record<string, string>)[r.modelParam] };
          else if (r.resolve) {
            const found = r.resolve((req.params as Record<string, string>)['*'] ?? '');
            if (!found) {
              reply.hijack();
              return notFound(reply.raw, req, r.mode.format);
            }
            if (found.local) return answerLocally(svc, req, reply, found.local, found.model);
            opts = { ...base, mode: found.mode, pathModel: found.model };
          } else if (r.local) return answerLocally(svc, req, reply, r.local, '');
          reply.hijack();
          return relayJson(svc, ctx, relayRequestOf(req), reply.raw, opts);
        },
      });
    }
  });
}

export async function registerRelayRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await initRelayServices(ctx);
  ctx.onClose(closeProxies);
  await registerJsonRelayRoutes(app, ctx, JSON_RELAY_ROUTES);
  const svc = relayServices(ctx);
  installRelayFastPath(app, ctx, svc, FAST_PATH_ROUTES);
  // GET /v1/realtime with a websocket upgrade (Node's 'upgrade' event: Fastify's routes never see it)
  installRealtime(app, ctx, svc);
  // the relay's endpoints answered locally, without an upstream
  registerCorsPreflight(app);
  registerModelList(app, ctx, svc);
  registerDashboardBilling(app, ctx, svc);
  registerTokenLog(app, ctx);
  await registerTaskRoutes(app, ctx, svc);
  await registerMjRoutes(app, ctx, svc);
  await registerVideoRoutes(app, ctx, svc);
  await registerNotImplemented(app, svc.metrics);
}
