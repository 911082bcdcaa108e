// Jimeng's native route (new-api's `POST /jimeng/?Action=…&Version=2022-08-31`, loaded with its first request:
// video-routes.ts), answered in Jimeng's envelope `{code, data, message, request_id, status, time_elapsed}`:
// - CVSync2AsyncSubmitTask: Jimeng's body (req_key, prompt, image_urls, binary_data_base64, seed, aspect_ratio,
//   frames; any other field refused, as new-api) converted into new-api's generic submit, routed by its req_key to a
//   Jimeng channel and submitted as /v1/video/generations is (charged before its id is answered, refunded once if it
//   fails); the answer's `data.task_id` is the public `task_…` id;
// - CVSync2AsyncGetResult `{task_id}`: the caller's own task from its row (never asked upstream), in GetResult's
//   terms (in_queue, generating, done with its video_url, or the failure's code and message).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import type { HttpResponse } from '../../lib/http-response.js';
import { asRelayError, baseHeaders, RelayError, sendJson } from '../errors.js';
import { taskAdaptorOf } from '../providers/index.js';
import { JIMENG_OK, jimengEnvelope, jimengErrorCode, jimengResultOf } from '../providers/jimeng/adaptor.js';
import { JIMENG_VERSION } from '../providers/jimeng/index.js';
import type { RelayServices } from '../services.js';
import { requestOf } from './routes.js';
import { submitTask } from './submit.js';
import { videoPlatformOf } from './video-generations.js';

const SUBMIT = 'CVSync2AsyncSubmitTask';
const GET_RESULT = 'CVSync2AsyncGetResult';
const NATIVE_FIELDS = new Set([
  'req_key',
  'binary_data_base64',
  'image_urls',
  'prompt',
  'seed',
  'aspect_ratio',
  'frames',
]);

/** An error (a refusal of a shared step, an upstream's refusal, anything else: a 500) in Jimeng's envelope. */
export function sendJimengError(res: HttpResponse, err: unknown, reqId: string): void {
  const e = asRelayError(err);
  const code = jimengErrorCode(e.status);
  sendJson(res, e.status, JSON.stringify(jimengEnvelope(code, null, e.message, reqId)), baseHeaders(reqId, undefined));
}

function sendOk(res: HttpResponse, code: number, data: unknown, message: string, reqId: string): void {
  sendJson(res, 200, JSON.stringify(jimengEnvelope(code, data, message, reqId)), baseHeaders(reqId, undefined));
}

function bodyOf(req: FastifyRequest): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : '');
  } catch {
    v = undefined;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new RelayError(400, 'Invalid request body');
  return v as Record<string, unknown>;
}

/** Jimeng's submit in new-api's generic shape: its req_key as the model, its images, the rest as metadata. */
function genericOf(native: Record<string, unknown>): Record<string, unknown> {
  const unknown = Object.keys(native).find((k) => !NATIVE_FIELDS.has(k));
  if (unknown) throw new RelayError(400, `unknown field ${unknown}`);
  if (typeof native.req_key !== 'string' || !native.req_key.trim()) throw new RelayError(400, 'req_key is required');
  const urls = Array.isArray(native.image_urls) ? native.image_urls : [];
  const images = urls.length ? urls : Array.isArray(native.binary_data_base64) ? native.binary_data_base64 : [];
  const metadata: Record<string, unknown> = {};
  for (const k of ['seed', 'aspect_ratio', 'frames']) if (native[k] !== undefined) metadata[k] = native[k];
  return { model: native.req_key, prompt: native.prompt, images, metadata };
}

export async function jimengNative(svc: RelayServices, ctx: AppContext, req: FastifyRequest, reply: FastifyReply) {
  const res = reply.raw;
  try {
    const { Action: action, Version: version } = req.query as Record<string, unknown>;
    if (!action) throw new RelayError(400, 'Action query parameter is required');
    if (action !== SUBMIT && action !== GET_RESULT)
      throw new RelayError(400, 'Action query parameter is not supported');
    if (version !== JIMENG_VERSION) throw new RelayError(400, `Version must be ${JIMENG_VERSION}`);
    const native = bodyOf(req);
    if (action === GET_RESULT) return await getResult(ctx, req, res, native);
    const generic = Buffer.from(JSON.stringify(genericOf(native)));
    return await submitTask(svc, ctx, { ...requestOf(req), body: generic }, res, null, 'generate', {
      // the answer is Jimeng's: only a Jimeng channel takes it
      platformOf: async (type) => {
        const task = await videoPlatformOf(type);
        return task?.platform === 'jimeng' ? task : undefined;
      },
      properties: (b, model) => ({ model, seconds: b.frames === 241 ? 10 : 5 }),
      accepted: (out, t, reqId) => sendOk(out, JIMENG_OK, { task_id: t.publicId }, 'Success', reqId),
      refused: (out, err, reqId) => sendJimengError(out, err, reqId),
    });
  } catch (err) {
    sendJimengError(res, err, req.id);
  }
}

async function getResult(ctx: AppContext, req: FastifyRequest, res: HttpResponse, native: Record<string, unknown>) {
  const id = native.task_id;
  if (typeof id !== 'string' || !id.trim()) throw new RelayError(400, 'task_id is required for CVSync2AsyncGetResult');
  const row = await ctx.db
    .selectFrom('tasks')
    .select(['task_id', 'platform', 'status', 'fail_reason', 'data'])
    .where('user_id', '=', req.relayCaller!.user.id)
    .where('task_id', '=', id.trim())
    .where('platform', '=', 'jimeng')
    .executeTakeFirst();
  if (!row) throw new RelayError(400, 'task_not_exist', 'new_api_error', 'task_not_exist');
  let data: unknown = null;
  try {
    data = JSON.parse(row.data || 'null');
  } catch {
    data = null;
  }
  const result = jimengResultOf({ status: row.status, fail_reason: row.fail_reason, data });
  if (result.data && result.data.status === 'done') {
    const task = await taskAdaptorOf(row.platform);
    result.data.video_url = task.resultUrl?.(row.task_id, data) ?? '';
  }
  sendOk(res, result.code, result.data, result.message, req.id);
}
