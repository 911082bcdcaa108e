// The OpenAI endpoints the gateway does not serve (new-api-compat.md §4.1): 501 api_not_implemented, answered from the
// head.
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { RelayError } from '../errors.js';
import { refuseUnread } from '../admit.js';
import type { GatewayMetrics } from '../../services/metrics.js';

const NOT_IMPLEMENTED: Array<[HTTPMethods, string]> = [
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
  ['POST', '/v1/images/variations'],
  ['GET', '/v1/fine_tuning/jobs'],
  ['POST', '/v1/fine_tuning/jobs'],
  ['GET', '/v1/fine_tuning/jobs/:id'],
  ['POST', '/v1/fine_tuning/jobs/:id/cancel'],
  ['GET', '/v1/fine_tuning/jobs/:id/events'],
  ['GET', '/v1/fine_tuning/jobs/:id/checkpoints'],
];

export async function registerNotImplemented(app: FastifyInstance, metrics: GatewayMetrics): Promise<void> {
  // answered from the head: the body is never read
  const notImplemented = async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    reply.hijack();
    refuseUnread(
      reply.raw,
      req.headers,
      new RelayError(501, 'API not implemented', 'new_api_error', 'api_not_implemented'),
      req.id,
      undefined,
      metrics,
      'not_implemented',
    );
  };
  // Own scope: whatever the body (multipart uploads to /v1/files included), it is drained unread and the answer is
  // the 501, not a 415 from a missing content-type parser.
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, payload, done) => {
      payload.resume();
      payload.on('end', () => done(null));
      payload.on('error', done);
    });
    for (const [method, url] of NOT_IMPLEMENTED)
      scope.route({ method, url, onRequest: notImplemented, handler: notImplemented });
  });
}
