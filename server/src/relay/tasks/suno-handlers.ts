// Suno's route handlers (new-api's /suno/*), loaded on the first Suno request (routes.ts registers the routes at
// start without them): the submit through the task engine's steps, and fetches answered from the local task rows, the
// caller's own only: the upstream is asked by the poller (poll.ts), never on a client's behalf.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { taskAdaptorOf } from '../providers/index.js';
import type { RelayServices } from '../services.js';
import { sendEnvelope, sendEnvelopeError } from './envelope.js';
import { requestOf } from './routes.js';
import { submitTask } from './submit.js';

const PLATFORM = 'suno';

/** ids asked for in one fetch at most */
const MAX_FETCH_IDS = 100;

interface TaskRow {
  task_id: string;
  action: string;
  status: string;
  fail_reason: string;
  submit_time: number | string;
  start_time: number | string;
  finish_time: number | string;
  progress: string;
  data: string;
}

/** new-api's TaskDto: what a client sees of a task (never private_data, the channel or the quota's context). */
function dto(r: TaskRow) {
  let data: unknown = null;
  try {
    data = r.data ? JSON.parse(r.data) : null;
  } catch {
    data = null;
  }
  return {
    task_id: r.task_id,
    action: r.action,
    status: r.status,
    fail_reason: r.fail_reason,
    submit_time: Number(r.submit_time),
    start_time: Number(r.start_time),
    finish_time: Number(r.finish_time),
    progress: r.progress,
    data,
  };
}

async function ownTasks(ctx: AppContext, userId: number, platform: string, ids: string[]) {
  if (!ids.length) return [];
  const rows = await ctx.db
    .selectFrom('tasks')
    .select([
      'task_id',
      'action',
      'status',
      'fail_reason',
      'submit_time',
      'start_time',
      'finish_time',
      'progress',
      'data',
    ])
    .where('platform', '=', platform)
    .where('user_id', '=', userId)
    .where('task_id', 'in', ids)
    .orderBy('id')
    .execute();
  return rows.map(dto);
}

export async function sunoSubmit(svc: RelayServices, ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  const { action } = req.params as { action: string };
  return submitTask(svc, ctx, requestOf(req), reply.raw, await taskAdaptorOf(PLATFORM), action);
}

export async function sunoFetchMany(ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  let ids: unknown;
  try {
    ids = (JSON.parse(requestOf(req).body.toString('utf8')) as { ids?: unknown }).ids;
  } catch {
    ids = undefined;
  }
  if (!Array.isArray(ids) || ids.some((i) => typeof i !== 'string') || ids.length > MAX_FETCH_IDS) {
    return sendEnvelope(
      reply.raw,
      400,
      'invalid_request',
      `ids 必须是不超过 ${MAX_FETCH_IDS} 个任务 ID 的数组`,
      null,
      req.id,
    );
  }
  try {
    const tasks = await ownTasks(ctx, req.relayCaller!.user.id, PLATFORM, ids as string[]);
    sendEnvelope(reply.raw, 200, 'success', '', tasks, req.id);
  } catch (err) {
    sendEnvelopeError(reply.raw, err, req.id);
  }
}

export async function sunoFetchOne(ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  const { id } = req.params as { id: string };
  try {
    const [task] = await ownTasks(ctx, req.relayCaller!.user.id, PLATFORM, [id]);
    if (!task) return sendEnvelope(reply.raw, 404, 'task_not_exist', '任务不存在', null, req.id);
    sendEnvelope(reply.raw, 200, 'success', '', task, req.id);
  } catch (err) {
    sendEnvelopeError(reply.raw, err, req.id);
  }
}
