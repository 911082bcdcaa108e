// Operations endpoints, outside /api: GET /metrics (Prometheus text, services/metrics.ts), GET /healthz (the process
// answers) and GET /readyz (it can serve: services/health.ts). /metrics is reachable from loopback and private
// addresses only unless METRICS_ALLOW_PUBLIC=true (the caller's address as request.ip gives it: X-Forwarded-For is
// believed from trusted proxies only), and wants `Authorization: Bearer <METRICS_TOKEN>` when that is set.
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { compileIpAllowList, DEFAULT_TRUSTED_PROXIES, ipAllowed } from '../lib/ip-match.js';
import { metricsOf } from '../services/metrics.js';
import { readiness } from '../services/health.js';

/** loopback and private networks: the same ranges as the default trusted proxies */
const PRIVATE_NETWORKS = compileIpAllowList(DEFAULT_TRUSTED_PROXIES.join('\n'))!;

function bearerMatches(req: FastifyRequest, token: string): boolean {
  const got = Buffer.from(req.headers.authorization ?? '');
  const want = Buffer.from(`Bearer ${token}`);
  return got.length === want.length && timingSafeEqual(got, want);
}

export async function registerOpsRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const { metricsToken, metricsAllowPublic } = ctx.config.observability;
  const metrics = metricsOf(ctx);

  app.get('/metrics', async (req, reply) => {
    if (!metricsAllowPublic && !ipAllowed(PRIVATE_NETWORKS, req.ip)) {
      return reply.status(403).type('text/plain').send('metrics are served to private addresses only\n');
    }
    if (metricsToken && !bearerMatches(req, metricsToken)) {
      return reply.status(401).header('WWW-Authenticate', 'Bearer').type('text/plain').send('unauthorized\n');
    }
    const { contentType, body } = await metrics.exposition();
    return reply.header('Cache-Control', 'no-store').type(contentType).send(body);
  });

  app.get('/healthz', async (_req, reply) => reply.header('Cache-Control', 'no-store').send({ status: 'ok' }));

  app.get('/readyz', async (_req, reply) => {
    const r = await readiness(ctx);
    return reply
      .status(r.ready ? 200 : 503)
      .header('Cache-Control', 'no-store')
      .send({ status: r.ready ? 'ready' : 'not ready', checks: r.checks });
  });
}
