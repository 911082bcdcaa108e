// OpenAI's video API (new-api's /v1/videos routes), new-api's generic /v1/video/generations and the native Kling
// and Jimeng routes: registered at start as shells whose handlers (video-handlers.ts, video-generations.ts),
// the Sora folder and the content stream load with the first video request, so a gateway that sells no video never
// loads them. The caller is authenticated from the request's head as on every relay route, errors answered in
// OpenAI's error shape.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { BODY_LIMIT } from '../../lib/body-limits.js';
import { asRelayError, sendRelayError } from '../errors.js';
import type { RelayServices } from '../services.js';
import { prepareTaskScope } from './task-scope.js';

let handlers: Promise<typeof import('./video-handlers.js')> | undefined;
const videoHandlers = () => (handlers ??= import('./video-handlers.js'));
let generations: Promise<typeof import('./video-generations.js')> | undefined;
const generationHandlers = () => (generations ??= import('./video-generations.js'));
let jimeng: Promise<typeof import('./jimeng-native.js')> | undefined;
const jimengHandlers = () => (jimeng ??= import('./jimeng-native.js'));

export async function registerVideoRoutes(app: FastifyInstance, ctx: AppContext, svc: RelayServices): Promise<void> {
  await app.register(async (scope) => {
    prepareTaskScope(scope, ctx, svc, {
      sendError: (raw, err, req) => sendRelayError(raw, asRelayError(err), req.id, req.headers),
    });
    scope.post('/v1/videos', { bodyLimit: BODY_LIMIT }, async (req: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      return (await videoHandlers()).videoCreate(svc, ctx, req, reply);
    });
    scope.get('/v1/videos/:id', async (req: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      return (await videoHandlers()).videoRetrieve(ctx, req, reply);
    });
    scope.get('/v1/videos/:id/content', async (req: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      return (await videoHandlers()).videoContent(ctx, req, reply);
    });
    // new-api's generic routes, and the native Kling ones converted into them
    scope.post('/v1/video/generations', { bodyLimit: BODY_LIMIT }, async (req: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      return (await generationHandlers()).videoGenerationSubmit(svc, ctx, req, reply);
    });
    scope.get('/v1/video/generations/:task_id', async (req: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      return (await generationHandlers()).videoGenerationFetch(ctx, req, reply);
    });
    for (const kind of ['text2video', 'image2video']) {
      scope.post(`/kling/v1/videos/${kind}`, { bodyLimit: BODY_LIMIT }, async (req, reply) => {
        reply.hijack();
        return (await generationHandlers()).klingNativeSubmit(svc, ctx, req, reply);
      });
      scope.get(`/kling/v1/videos/${kind}/:task_id`, async (req: FastifyRequest, reply: FastifyReply) => {
        reply.hijack();
        return (await generationHandlers()).videoGenerationFetch(ctx, req, reply);
      });
    }
    scope.post('/v1/videos/:id/remix', { bodyLimit: BODY_LIMIT }, async (req: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      return (await videoHandlers()).videoRemix(svc, ctx, req, reply);
    });
  });
  // Jimeng's native route (`?Action=…&Version=…`), its refusals (a missing token too) in Jimeng's envelope
  await app.register(async (scope) => {
    prepareTaskScope(scope, ctx, svc, {
      sendError: async (raw, err, req) => (await jimengHandlers()).sendJimengError(raw, err, req.id),
    });
    scope.post('/jimeng/', { bodyLimit: BODY_LIMIT }, async (req: FastifyRequest, reply: FastifyReply) => {
      reply.hijack();
      return (await jimengHandlers()).jimengNative(svc, ctx, req, reply);
    });
  });
}
