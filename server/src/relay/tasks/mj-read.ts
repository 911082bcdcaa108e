// The Midjourney routes that send nothing to be drawn: a task and a list answered from the caller's own midjourneys
// rows (new-api's MidjourneyDto), an image-seed asked of the origin task's channel, and midjourney-proxy's notify
// callback (verified: providers/midjourney/notify.ts; applied with the poller's compare-and-set, a failure refunded
// once). The unauthenticated image route is in mj-image.ts.
import type { AppContext } from '../../context.js';
import type { HttpResponse } from '../../lib/http-response.js';
import { applyMjChange } from '../../services/tasks/mj-apply.js';
import { proxyOfSetting } from '../channel-setting.js';
import {
  applyMjNotify,
  buildMjImageSeedRequest,
  MJ_ORIGIN_CHANNEL_DISABLED,
  mjRowToClient,
  readMjListIds,
  verifyMjNotify,
  type MjRow,
} from '../providers/midjourney/index.js';
import { MjAnswerError, sendMjError, sendMjJson } from './mj-answer.js';
import { callTaskUpstream } from './upstream.js';

const DTO_COLUMNS = [
  'mj_id',
  'action',
  'prompt',
  'prompt_en',
  'description',
  'state',
  'submit_time',
  'start_time',
  'finish_time',
  'image_url',
  'video_url',
  'video_urls',
  'status',
  'progress',
  'fail_reason',
  'buttons',
  'properties',
] as const;

function dto(ctx: AppContext, r: Record<(typeof DTO_COLUMNS)[number], unknown>) {
  const row = { ...r } as unknown as MjRow;
  for (const k of ['submit_time', 'start_time', 'finish_time'] as const) row[k] = Number(r[k]);
  return mjRowToClient(row, {
    forwardUrl: ctx.options.bool('MjForwardUrlEnabled'),
    serverAddress: ctx.options.get('ServerAddress').trim(),
    // new-api's cache-busting value: the time in nanoseconds
    rand: () => `${Date.now()}000000`,
  });
}

const notFound = () => new MjAnswerError({ code: 4, description: 'task_no_found' });

/** GET …/task/{id}/fetch: the caller's own task (the latest row of that id), else new-api's task_no_found. */
export async function fetchMjTask(ctx: AppContext, userId: number, taskId: string, res: HttpResponse, reqId: string) {
  try {
    const row = await ctx.db
      .selectFrom('midjourneys')
      .select([...DTO_COLUMNS])
      .where('mj_id', '=', taskId)
      .where('user_id', '=', userId)
      .orderBy('id', 'desc')
      .executeTakeFirst();
    if (!row) throw notFound();
    sendMjJson(res, 200, dto(ctx, row), reqId);
  } catch (err) {
    sendMjError(res, err, reqId);
  }
}

/** POST …/task/list-by-condition {ids}: the caller's own tasks among them, `[]` when none. */
export async function listMjTasks(ctx: AppContext, userId: number, body: unknown, res: HttpResponse, reqId: string) {
  try {
    const ids = readMjListIds(body);
    if (!Array.isArray(ids)) return sendMjJson(res, ids.status, ids.body, reqId);
    const rows = ids.length
      ? await ctx.db
          .selectFrom('midjourneys')
          .select([...DTO_COLUMNS])
          .where('user_id', '=', userId)
          .where('mj_id', 'in', ids)
          .orderBy('id')
          .execute()
      : [];
    sendMjJson(
      res,
      200,
      rows.map((r) => dto(ctx, r)),
      reqId,
    );
  } catch (err) {
    sendMjError(res, err, reqId);
  }
}

/** GET …/task/{id}/image-seed: asked of the caller's task's channel (enabled), its answer passed on as it came. */
export async function mjImageSeed(ctx: AppContext, userId: number, taskId: string, res: HttpResponse, reqId: string) {
  try {
    const row = await ctx.db
      .selectFrom('midjourneys')
      .select(['mj_id', 'channel_id'])
      .where('mj_id', '=', taskId)
      .where('user_id', '=', userId)
      .orderBy('id', 'desc')
      .executeTakeFirst();
    if (!row) throw notFound();
    const channel = await ctx.db
      .selectFrom('channels')
      .select(['status', 'base_url', 'key', 'setting'])
      .where('id', '=', Number(row.channel_id))
      .executeTakeFirst();
    if (!channel) throw new MjAnswerError({ code: 4, description: 'get_channel_info_failed' });
    if (Number(channel.status) !== 1) throw new MjAnswerError({ code: 4, description: MJ_ORIGIN_CHANNEL_DISABLED });
    const request = buildMjImageSeedRequest(
      { baseUrl: channel.base_url ?? '', key: (channel.key ?? '').split('\n')[0].trim() },
      row.mj_id,
    );
    let answer;
    try {
      answer = await callTaskUpstream(request, request.timeoutMs, proxyOfSetting(channel.setting));
    } catch (e) {
      throw new MjAnswerError({ code: 5, description: 'do_request_failed', result: (e as Error).message });
    }
    if (answer.body === undefined) throw new MjAnswerError({ code: 5, description: 'unmarshal_response_body_failed' });
    sendMjJson(res, answer.status, answer.text, reqId);
  } catch (err) {
    sendMjError(res, err, reqId);
  }
}

/** POST /mj/notify?channel=…&sig=…: a callback of the gateway's own hook; repeated or late ones change nothing. */
export async function mjNotify(
  ctx: AppContext,
  query: Record<string, unknown>,
  body: unknown,
  res: HttpResponse,
  reqId: string,
) {
  try {
    const channelId = Number(query.channel) || 0;
    const verdict = await verifyMjNotify(query, body, ctx.config.cryptoSecret, async (mjId) => {
      const r = await ctx.db
        .selectFrom('midjourneys')
        .select(['id', 'mj_id', 'user_id', 'channel_id', 'quota', 'status', 'progress', 'submit_time'])
        .where('mj_id', '=', mjId)
        .where('channel_id', '=', channelId)
        .orderBy('id', 'desc')
        .executeTakeFirst();
      return (
        r && {
          ...r,
          id: Number(r.id),
          channel_id: Number(r.channel_id),
          user_id: Number(r.user_id),
          quota: Number(r.quota),
          submit_time: Number(r.submit_time),
        }
      );
    });
    if (!verdict.ok) return sendMjJson(res, verdict.status, verdict.body, reqId);
    const task = verdict.task as typeof verdict.task & { user_id: number };
    const update = applyMjNotify(task, verdict.state, Date.now());
    if (update) await applyMjChange(ctx, task, update, Math.floor(Date.now() / 1000));
    sendMjJson(res, 200, { code: 1, description: 'success', result: task.mj_id }, reqId);
  } catch (err) {
    sendMjError(res, err, reqId);
  }
}
