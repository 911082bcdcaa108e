// CORS preflight of the relay's paths: the caller's origin (any), with credentials.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

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

export function registerCorsPreflight(app: FastifyInstance): void {
  for (const p of ['/v1/*', '/dashboard/*', '/pg/*', '/api/log/token']) app.options(p, corsPreflight);
}
