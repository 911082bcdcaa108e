// new-api's generic video routes (loaded on the first such request: video-routes.ts). `POST /v1/video/generations`
// ({model, prompt, image, images, mode, size, duration, seconds, input_reference, metadata}) is routed by its model,
// and the routed channel's platform (Sora, Kling, Veo, Vidu, Doubao, Hailuo, Wan) checks and sends it: a task submit
// (submit.ts: charged before its id is answered, refunded once if it fails), answered with the video object and the
// public `task_id`. The native `/kling/v1/videos/{text2video|image2video}` submits are converted into that shape
// first, as new-api does.
// `GET /v1/video/generations/{task_id}` (and the native GETs) answer `{code: "success", data: <task>}` from the
// caller's own task row; another user's id does not exist.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { RelayError, baseHeaders, sendJson } from '../errors.js';
import { taskAdaptorOf, taskPlatformOf, type TaskAdaptor } from '../providers/index.js';
import type { RelayServices } from '../services.js';
import { sendEnvelope, sendEnvelopeError } from './envelope.js';
import { requestOf } from './routes.js';
import { submitTask } from './submit.js';
import { videoObject } from './video-object.js';
import { VIDEO_PLATFORMS, videoResultUrl } from './video-platforms.js';

export { VIDEO_PLATFORMS } from './video-platforms.js';

/** The video platform of a channel type: its own line's, or one that also runs on it (Sora on OpenAI's type 1). */
export async function videoPlatformOf(channelType: number): Promise<TaskAdaptor | undefined> {
  const own = taskPlatformOf(channelType);
  if (own) return VIDEO_PLATFORMS.includes(own) ? taskAdaptorOf(own) : undefined;
  for (const platform of VIDEO_PLATFORMS) {
    const task = await taskAdaptorOf(platform);
    if (task.alsoOnTypes?.includes(channelType)) return task;
  }
  return undefined;
}

function submit(svc: RelayServices, ctx: AppContext, req: FastifyRequest, reply: FastifyReply, body?: Buffer) {
  const request = requestOf(req);
  return submitTask(svc, ctx, body ? { ...request, body } : request, reply.raw, null, 'generate', {
    platformOf: videoPlatformOf,
    // Sora's body names its seconds and size, Kling's its duration
    properties: (b, model) => ({ model, seconds: b.seconds ?? b.duration, size: b.size }),
    accepted: (res, t, reqId) => {
      const video = videoObject({
        task_id: t.publicId,
        status: 'NOT_START',
        progress: '0%',
        fail_reason: '',
        submit_time: t.createdAt,
        finish_time: 0,
        properties: JSON.stringify(t.properties),
        data: '{}',
      });
      sendJson(res, 200, JSON.stringify({ ...video, task_id: t.publicId }), baseHeaders(reqId, undefined));
    },
    refused: (res, err, reqId) => sendEnvelopeError(res, err, reqId),
  });
}

export function videoGenerationSubmit(svc: RelayServices, ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  return submit(svc, ctx, req, reply);
}

/** Kling's native submit in new-api's generic shape: its model (`model_name`, else `model`), prompt and the rest. */
export function klingNativeSubmit(svc: RelayServices, ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  let native: Record<string, unknown> = {};
  try {
    const v: unknown = JSON.parse(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '');
    if (v && typeof v === 'object' && !Array.isArray(v)) native = v as Record<string, unknown>;
  } catch {
    // an unreadable body is converted as an empty one: the check names what is missing
  }
  const model = typeof native.model_name === 'string' && native.model_name ? native.model_name : native.model;
  const generic = { model, prompt: native.prompt, image: native.image, metadata: native };
  return submit(svc, ctx, req, reply, Buffer.from(JSON.stringify(generic)));
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text || 'null');
  } catch {
    return null;
  }
}

/** The caller's own video task in new-api's task shape (never its upstream id, key or billing). */
export async function videoGenerationFetch(ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  try {
    const { task_id: id } = req.params as { task_id: string };
    const row = await ctx.db
      .selectFrom('tasks')
      .select([
        'task_id',
        'platform',
        'action',
        'status',
        'fail_reason',
        'submit_time',
        'start_time',
        'finish_time',
        'progress',
        'properties',
        'data',
      ])
      .where('user_id', '=', req.relayCaller!.user.id)
      .where('task_id', '=', id)
      .where('platform', 'in', VIDEO_PLATFORMS)
      .executeTakeFirst();
    if (!row) throw new RelayError(400, 'task_not_exist', 'new_api_error', 'task_not_exist');
    const data = parsed(row.data);
    const task = await taskAdaptorOf(row.platform);
    const resultUrl =
      row.status === 'SUCCESS' ? videoResultUrl(row.task_id, task.resultUrl?.(row.task_id, data) ?? '') : '';
    sendEnvelope(
      reply.raw,
      200,
      'success',
      '',
      {
        task_id: row.task_id,
        platform: row.platform,
        action: row.action,
        status: row.status,
        fail_reason: row.fail_reason,
        result_url: resultUrl,
        submit_time: Number(row.submit_time),
        start_time: Number(row.start_time),
        finish_time: Number(row.finish_time),
        progress: row.progress,
        properties: parsed(row.properties),
        data,
      },
      req.id,
    );
  } catch (err) {
    sendEnvelopeError(reply.raw, err, req.id);
  }
}
