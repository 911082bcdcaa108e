// The Midjourney routes' handler, loaded on the first /mj request (mj-routes.ts registers the routes at start without
// it): the request read by providers/midjourney/routes.ts into a submit, a task read, an image-seed, the image or the
// notify callback, every answer in midjourney-proxy's shape (mj-answer.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { notFound } from '../endpoints/not-found.js';
import { readMjRequest } from '../providers/midjourney/index.js';
import type { RelayServices } from '../services.js';
import { sendMjJson } from './mj-answer.js';
import { mjImage } from './mj-image.js';
import { fetchMjTask, listMjTasks, mjImageSeed, mjNotify } from './mj-read.js';
import { submitMj } from './mj-submit.js';
import { requestOf } from './routes.js';

export { parseMjRoute } from '../providers/midjourney/index.js';
export { sendMjError } from './mj-answer.js';

function parseJson(raw: Buffer): unknown {
  try {
    return raw.length ? JSON.parse(raw.toString('utf8')) : undefined;
  } catch {
    return undefined;
  }
}

export async function handleMj(svc: RelayServices, ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  reply.hijack();
  const res = reply.raw;
  const relayReq = requestOf(req);
  const body = req.method === 'POST' ? parseJson(relayReq.body) : undefined;
  const read = readMjRequest(req.method, req.url, body);
  if (!read.ok) {
    if (read.reason === 'invalid') return sendMjJson(res, read.answer.status, read.answer.body, req.id);
    return notFound(res, req);
  }
  const userId = req.relayCaller?.user.id ?? 0;
  const r = read.route;
  switch (r.kind) {
    case 'submit':
      return submitMj(svc, ctx, relayReq, res, r, read.plan!);
    case 'fetch':
      return fetchMjTask(ctx, userId, r.taskId, res, req.id);
    case 'list':
      return listMjTasks(ctx, userId, body, res, req.id);
    case 'image-seed':
      return mjImageSeed(ctx, userId, r.taskId, res, req.id);
    case 'image':
      return mjImage(ctx, r.taskId, res, req.id);
    case 'notify':
      return mjNotify(ctx, req.query as Record<string, unknown>, body, res, req.id);
  }
}
