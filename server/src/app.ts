// The HTTP server: console API under /api, the relay under /v1 (and friends), the built console everywhere else.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify, {
  LogController,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import fastifyCookie from '@fastify/cookie';
import type { AppContext } from './context.js';
import { newRequestId } from './lib/request-id.js';
import { consoleRequestLoggers } from './lib/request-log.js';
import { ipAllowed, proxyTrust } from './lib/ip-match.js';
import { answerError, isRelayPath } from './lib/error-answer.js';
import { ANONYMOUS_BODY_LIMIT } from './lib/body-limits.js';
import { registerApiRoutes } from './api/index.js';
import { registerRelayRoutes } from './relay/index.js';
import { registerOpsRoutes } from './api/ops.js';
import { rateLimitHook } from './lib/rate-limit.js';
import { registerGlobalApiRateLimit } from './lib/rate-limit.js';
import { registerConsoleFiles } from './lib/console-files.js';
import { registerJsonCompression } from './lib/compress-json.js';
import { consoleHtmlHeaderSource, NOSNIFF_HEADER } from './lib/security-headers.js';
import { formatOfPath, isApiPath, notFound } from './relay/endpoints/not-found.js';
import { startLogRetention } from './services/log-retention.js';
import { startTaskPoller } from './services/tasks/poller.js';
import { metricsOf } from './services/metrics.js';

export function webDistDir(ctx: AppContext): string {
  if (ctx.config.webDistDir) return resolve(ctx.config.webDistDir);
  const here = dirname(fileURLToPath(import.meta.url));
  return resolve(here, '../../web/dist');
}

export async function buildApp(ctx: AppContext): Promise<FastifyInstance> {
  const trusted = proxyTrust(ctx.config.trustedProxies);
  const metrics = metricsOf(ctx);
  // A relay request that reaches the error handler never ran its pipeline (which answers its own errors): a body too
  // large or not decodable on a Fastify route, a malformed path. Counted as refused, as admit.ts counts the others.
  const onError = (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const status = answerError(ctx, err, req, reply);
    if (isRelayPath(req.url)) metrics.countLocal('refused', status);
  };
  const app = Fastify({
    logger: false,
    // req.log: on /api, a child of ctx.log carrying the request id; elsewhere silent (lib/request-log.ts)
    childLoggerFactory: consoleRequestLoggers(ctx.log),
    // Fastify's own incoming/completed lines stay off: the console writes its access line (api/access-log.ts)
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => newRequestId(),
    // routes whose caller is authenticated before the body is read raise it (api/index.ts, relay/index.ts)
    bodyLimit: ANONYMOUS_BODY_LIMIT,
    // request.ip: the first X-Forwarded-For hop, from the socket leftwards, that is not a trusted proxy (TRUSTED_PROXIES,
    // by default loopback and private networks); with TRUSTED_PROXIES=* the left-most entry, as new-api
    trustProxy: trusted ? (addr: string) => ipAllowed(trusted, addr) : true,
    keepAliveTimeout: 65_000,
    // a stop lets requests in flight finish and closes connections itself (shutdown.ts)
    forceCloseConnections: false,
    // new-api's router answers `/x` and `/x/` alike; clients and its own console use both forms
    routerOptions: { ignoreTrailingSlash: true },
    // a malformed or over-long path parameter: answered in the caller's error shape, not Fastify's
    frameworkErrors: onError,
  });
  app.decorate('ctx', ctx);

  app.addHook('onRequest', async (req, reply) => {
    reply.header('X-Oneapi-Request-Id', req.id);
    // no answer is ever reinterpreted by the browser as another type (the relay writes its own headers: unchanged)
    reply.header(NOSNIFF_HEADER, 'nosniff');
  });

  await app.register(fastifyCookie, { secret: ctx.config.sessionSecret });

  app.setErrorHandler(onError);
  // /api answers above 1 kB go out br/gzip-compressed when asked; the relay answers on the raw socket, untouched
  registerJsonCompression(app);

  registerGlobalApiRateLimit(app, ctx);
  await registerApiRoutes(app, ctx);
  await registerRelayRoutes(app, ctx);
  // GET /metrics, /healthz, /readyz
  await registerOpsRoutes(app, ctx);
  // the master's background deletion of old logs (LogRetentionDays, QuotaDataRetentionDays)
  startLogRetention(ctx);
  // the master's sweep of asynchronous tasks (timed-out tasks failed and refunded)
  startTaskPoller(ctx);

  const dist = webDistDir(ctx);
  const indexPath = resolve(dist, 'index.html');
  const hasWeb = existsSync(indexPath);
  // CSP, X-Frame-Options, Referrer-Policy of the console's HTML: its inline script's hash, the chat links' schemes
  const htmlHeaders = consoleHtmlHeaderSource(hasWeb ? readFileSync(indexPath, 'utf8') : '', () =>
    ctx.options.get('Chats'),
  );
  if (hasWeb) await registerConsoleFiles(app, dist, htmlHeaders);

  // GlobalWebRateLimit (mark GW) counts console page loads; the hashed, long-cached assets are not counted.
  const webRateLimit = rateLimitHook(ctx, 'GW', ctx.config.globalWebRateLimit);
  const frontend = ctx.config.nodeType === 'slave' ? ctx.config.frontendBaseUrl.replace(/\/+$/, '') : '';

  app.setNotFoundHandler(async (req, reply) => {
    const path = req.url.split('?')[0];
    if (isApiPath(path)) {
      if (formatOfPath(path) === 'openai') {
        // new-api's shape exactly: no request id in the message
        reply.status(404).send({
          error: { message: `Invalid URL (${req.method} ${path})`, type: 'invalid_request_error', param: '', code: '' },
        });
        return reply;
      }
      reply.hijack();
      notFound(reply.raw, req);
      return reply;
    }
    // FRONTEND_BASE_URL on a slave node: the console is served elsewhere (new-api-compat.md §1.3).
    if (frontend) return reply.redirect(frontend + req.url, 301);
    await webRateLimit.call(app, req, reply);
    if (reply.sent) return reply;
    if (!hasWeb) {
      reply.status(404).type('text/plain').send('console not built: run `npm run build`');
      return reply;
    }
    reply.header('Cache-Control', 'no-cache');
    return reply.sendFile('index.html');
  });

  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
  }
}
