// OpenAI's video API on the task engine (loaded on the first video request: video-routes.ts). A create or a remix is
// a task submit (submit.ts: charged before its id is answered, refunded once if it fails), answered with the video
// object. A create is routed by its model to a channel of any video platform, as new-api routes it (a Sora or OpenAI
// channel gets the client's bytes, any other the request converted: video-create.ts); a remix is Sora's only. A
// retrieve is answered from the caller's own task row of any video platform (the poller asks the upstream, never a
// client); the content is streamed from the upstream (video-content.ts). Another user's id is not found.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { HttpResponse } from '../../lib/http-response.js';
import { upstreamTaskId } from '../../services/tasks/apply.js';
import { TASK_STATUS } from '../../services/tasks/status.js';
import { RelayError, asRelayError, baseHeaders, sendJson, sendRelayError } from '../errors.js';
import { taskAdaptorOf, type TaskPriceUnits } from '../providers/index.js';
import type { RelayServices } from '../services.js';
import { requestOf } from './routes.js';
import { submitTask, type AcceptedTask, type TaskOrigin, type TaskSubmitOptions } from './submit.js';
import { streamVideoContent } from './video-content.js';
import { readVideoCreate, type VideoCreateRequest } from './video-create.js';
import { videoPlatformOf } from './video-generations.js';
import { videoObject, type VideoTaskRow } from './video-object.js';
import { VIDEO_PLATFORMS } from './video-platforms.js';

/** the platform that takes OpenAI's video requests as they are, and the only one with remixes */
const SORA = 'sora';

function sendVideo(res: HttpResponse, row: VideoTaskRow, reqId: string): void {
  sendJson(res, 200, JSON.stringify(videoObject(row)), baseHeaders(reqId, undefined));
}

function answers(req: FastifyRequest): Pick<TaskSubmitOptions, 'accepted' | 'refused'> {
  return {
    accepted: (res, t: AcceptedTask, reqId) =>
      sendVideo(
        res,
        {
          task_id: t.publicId,
          status: TASK_STATUS.notStart,
          progress: '0%',
          fail_reason: '',
          submit_time: t.createdAt,
          finish_time: 0,
          properties: JSON.stringify(t.properties),
          data: '{}',
        },
        reqId,
      ),
    refused: (res, err, reqId) => sendRelayError(res, asRelayError(err), reqId, req.headers),
  };
}

const notFound = (id: string) =>
  new RelayError(404, `Video with id '${id}' not found.`, 'invalid_request_error', 'video_not_found');

/** The caller's own video task of any video platform, with what the engine keeps of it. */
async function ownVideo(ctx: AppContext, req: FastifyRequest) {
  const { id } = req.params as { id: string };
  const row = await ctx.db
    .selectFrom('tasks')
    .select([
      'task_id',
      'status',
      'progress',
      'fail_reason',
      'submit_time',
      'finish_time',
      'properties',
      'data',
      'channel_id',
      'private_data',
      'platform',
    ])
    .where('platform', 'in', VIDEO_PLATFORMS)
    .where('user_id', '=', req.relayCaller!.user.id)
    .where('task_id', '=', id)
    .executeTakeFirst();
  if (!row) throw notFound(id);
  return row;
}

export async function videoCreate(svc: RelayServices, ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  // read once, when the submit asks for the model (after the caller is known), refused there in OpenAI's shape
  let create: VideoCreateRequest | undefined;
  return submitTask(svc, ctx, requestOf(req), reply.raw, null, 'generate', {
    ...answers(req),
    platformOf: videoPlatformOf,
    modelOf: (_parsed, raw) => (create = readVideoCreate(raw.bytes, raw.contentType)).model,
    convert: (task) => {
      if (task.platform === SORA || !create) return undefined;
      const generic = create.generic();
      const bytes = Buffer.from(JSON.stringify(generic));
      return { parsed: generic, raw: { bytes, contentType: 'application/json' } };
    },
    // the seconds and size the platform kept (Kling keeps a duration, Veo no size), else those the client asked for
    properties: (body, model) => ({
      model,
      seconds: body.seconds ?? body.duration ?? create?.seconds,
      size: typeof body.size === 'string' ? body.size : create?.size,
    }),
  });
}

export async function videoRetrieve(ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  try {
    sendVideo(reply.raw, await ownVideo(ctx, req), req.id);
  } catch (err) {
    sendRelayError(reply.raw, asRelayError(err), req.id, req.headers);
  }
}

function priceUnitsOf(privateData: string): TaskPriceUnits | undefined {
  try {
    const v = (JSON.parse(privateData || '{}') as { price_units?: TaskPriceUnits }).price_units;
    return v && Number.isInteger(v.units) && Number.isInteger(v.ratioPpm) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** A remix of the caller's finished video: on its channel, with its model, charged as the origin was. */
export async function videoRemix(svc: RelayServices, ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  const sent = answers(req);
  let origin: TaskOrigin;
  let shape: { seconds: string; size: string };
  try {
    const row = await ownVideo(ctx, req);
    // new-api remixes Sora's videos only: nothing is charged or sent for another platform's
    if (row.platform !== SORA)
      throw new RelayError(400, '只能混剪 Sora 视频', 'invalid_request_error', 'video_remix_unsupported');
    if (row.status !== TASK_STATUS.success)
      throw new RelayError(400, '只能混剪已完成的视频', 'invalid_request_error', 'video_not_completed');
    const props = videoObject(row);
    origin = {
      publicId: row.task_id,
      upstreamId: upstreamTaskId(row.private_data),
      channelId: Number(row.channel_id),
      model: props.model,
      units: priceUnitsOf(row.private_data),
    };
    shape = { seconds: props.seconds, size: props.size };
  } catch (err) {
    return sent.refused!(reply.raw, err, req.id);
  }
  return submitTask(svc, ctx, requestOf(req), reply.raw, await taskAdaptorOf(SORA), 'remix', {
    ...sent,
    origin,
    properties: (_body, model) => ({
      model,
      seconds: shape.seconds,
      size: shape.size,
      remixed_from: origin.publicId,
    }),
  });
}

/** A finished video of any video platform, from wherever its platform keeps it (video-content.ts). */
export async function videoContent(ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  try {
    const row = await ownVideo(ctx, req);
    if (row.status !== TASK_STATUS.success)
      throw new RelayError(400, '视频尚未生成完成', 'invalid_request_error', 'video_not_ready');
    const variant = (req.query as { variant?: unknown }).variant;
    await streamVideoContent(
      ctx,
      row,
      {
        variant: typeof variant === 'string' && /^[a-z_]{1,32}$/.test(variant) ? variant : null,
        range: typeof req.headers.range === 'string' ? req.headers.range : undefined,
      },
      reply.raw,
      req.id,
    );
  } catch (err) {
    sendRelayError(reply.raw, asRelayError(err), req.id, req.headers);
  }
}
