// The OpenAI relay endpoints beyond chat / completions / embeddings, each a RelayMode under modes/ run by the same
// engine (auth, routing, retries, billing, logs), plus the 501 answers for the endpoints the gateway does not serve.
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { AppContext } from '../context.js';
import { RelayError } from './errors.js';
import { refuseUnread } from './admit.js';
import { registerJsonRelayRoutes } from './index.js';
import { speechMode, transcriptionsMode, translationsMode } from './modes/audio.js';
import { editsMode } from './modes/edits.js';
import { imageEditsMode, imageGenerationsMode } from './modes/images.js';
import { moderationsMode } from './modes/moderations.js';
import { rerankMode } from './modes/rerank.js';
import { responsesMode } from './modes/responses.js';

/** 501 routes not already answered in extras.ts (files, fine-tunes and DELETE /v1/models/:model live there). */
const NOT_IMPLEMENTED: Array<[HTTPMethods, string]> = [
  ['POST', '/v1/images/variations'],
  ['GET', '/v1/fine_tuning/jobs'],
  ['POST', '/v1/fine_tuning/jobs'],
  ['GET', '/v1/fine_tuning/jobs/:id'],
  ['POST', '/v1/fine_tuning/jobs/:id/cancel'],
  ['GET', '/v1/fine_tuning/jobs/:id/events'],
  ['GET', '/v1/fine_tuning/jobs/:id/checkpoints'],
];

export async function registerExtraRelayModes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  await registerJsonRelayRoutes(app, ctx, [
    { url: '/v1/edits', mode: editsMode },
    { url: '/v1/moderations', mode: moderationsMode },
    { url: '/v1/images/generations', mode: imageGenerationsMode },
    { url: '/v1/images/edits', mode: imageEditsMode },
    { url: '/v1/audio/speech', mode: speechMode },
    { url: '/v1/audio/transcriptions', mode: transcriptionsMode },
    { url: '/v1/audio/translations', mode: translationsMode },
    { url: '/v1/rerank', mode: rerankMode },
    { url: '/v1/responses', mode: responsesMode },
  ]);
  // answered from the head: the body is never read
  const notImplemented = async (req: FastifyRequest, reply: FastifyReply) => {
    reply.hijack();
    refuseUnread(reply.raw, req.headers, new RelayError(501, 'API not implemented', 'new_api_error', 'api_not_implemented'), req.id);
  };
  for (const [method, url] of NOT_IMPLEMENTED) app.route({ method, url, onRequest: notImplemented, handler: notImplemented });
}
