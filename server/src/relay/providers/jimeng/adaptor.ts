// Jimeng's video API (Volcengine visual, CVSync2AsyncSubmitTask / CVSync2AsyncGetResult) read into the task engine's
// terms: a submit in new-api's generic shape ({model, prompt, image, images, duration, seconds, size, metadata}; the
// native /jimeng route is converted into it first) checked and turned into Jimeng's payload, its action chosen from
// the number of images, the answers read, the task states mapped. Priced per call (ModelPrice[model]), as new-api
// prices Jimeng (its TaskAdaptor has no billing of its own).
import { TASK_STATUS } from '../../../services/tasks/status.js';
import type { TaskPriceUnits, TaskStateRead } from '../types.js';

/** new-api's only listed Jimeng model, and its fetch req_key for a task that kept none */
export const JIMENG_DEFAULT_REQ_KEY = 'jimeng_vgfm_t2v_l20';
/** Jimeng's answer code of a success */
export const JIMENG_OK = 10000;
const MAX_IMAGES = 2;
/** frames of 5 and 10 seconds at 24 fps (+1), new-api's only two */
const FRAMES_OF: Record<number, number> = { 5: 121, 10: 241 };
const ASPECT_RATIOS = new Set(['16:9', '4:3', '1:1', '3:4', '9:16', '21:9']);
/** Volcengine's codes of a refused rate (QPS and concurrency): the task is asked again, not failed */
const RATE_CODES = new Set([50429, 50430]);

export type JimengCheck =
  { ok: true; action: string; model: string; body: Record<string, unknown> } | { ok: false; message: string };

function asObject(v: unknown): Record<string, unknown> | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function secondsOf(v: unknown): number | null | undefined {
  if (v === undefined || v === null || v === '' || v === 0) return undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,2}$/.test(v.trim()) ? Number(v) : NaN;
  return FRAMES_OF[n] ? n : null;
}

/** new-api's size to Jimeng's aspect ratio, undefined for a size it has none for */
function aspectOfSize(size: unknown): string | undefined {
  const m = typeof size === 'string' ? /^(\d{2,5})x(\d{2,5})$/.exec(size.trim()) : null;
  if (!m) return undefined;
  const [w, h] = [Number(m[1]), Number(m[2])];
  for (const r of ASPECT_RATIOS) {
    const [a, b] = r.split(':').map(Number);
    if (Math.abs(w / h - a / b) < 0.02) return r;
  }
  return undefined;
}

/** the images of a submit: `images`, else `image` (strings only) */
function imagesOf(b: Record<string, unknown>): string[] | null {
  const given = Array.isArray(b.images) && b.images.length ? b.images : b.image ? [b.image] : [];
  if (!Array.isArray(given) || !given.every((i) => typeof i === 'string' && i)) return null;
  return given as string[];
}

function actionOf(images: number): string {
  if (images === 0) return 'textGenerate';
  return images === 1 ? 'generate' : 'firstTailGenerate';
}

/**
 * Jimeng 3.0's req_key by the number of images (new-api's resolveJimengReqKey, after Volcengine's documentation):
 * `jimeng_v30[_1080p]` is text to video, first frame or first and last frames (the image keys end in `_1080`, not
 * `_1080p`); `jimeng_v30_pro` has one key; any other req_key is sent as it is.
 */
export function resolveReqKey(reqKey: string, images: number): string {
  if (!reqKey.includes('jimeng_v30')) return reqKey;
  if (reqKey === 'jimeng_v30_pro') return 'jimeng_ti2v_v30_pro';
  const trimP = (k: string) => k.replace(/p$/, '');
  if (images > 1) return trimP(reqKey.replace('jimeng_v30', 'jimeng_i2v_first_tail_v30'));
  if (images === 1) return trimP(reqKey.replace('jimeng_v30', 'jimeng_i2v_first_v30'));
  return reqKey.replace('jimeng_v30', 'jimeng_t2v_v30');
}

/**
 * Checks a generic submit: a model (Jimeng's req_key), a prompt (or images: one is the first frame, two the first and
 * last; URLs go as `image_urls`, anything else as `binary_data_base64`, the kind of the first deciding as new-api),
 * 5 or 10 seconds (`duration`, `seconds`, or `metadata.frames` 121/241; 5 when absent). `metadata` may set Jimeng's
 * seed, aspect_ratio and frames, never its req_key (new-api unmarshals the whole metadata over the payload, so
 * `metadata.req_key` sent another model than the one charged).
 */
export function checkJimengSubmit(body: unknown): JimengCheck {
  const b = asObject(body);
  if (!b) return { ok: false, message: '无效的请求体' };
  const meta = b.metadata === undefined || b.metadata === null ? {} : asObject(b.metadata);
  if (!meta) return { ok: false, message: 'metadata 必须是对象' };
  const images = imagesOf(b);
  if (!images) return { ok: false, message: 'image 必须是字符串' };
  if (images.length > MAX_IMAGES) return { ok: false, message: `图片最多 ${MAX_IMAGES} 张` };
  if (b.prompt !== undefined && b.prompt !== null && typeof b.prompt !== 'string')
    return { ok: false, message: 'prompt 必须是字符串' };
  const prompt = typeof b.prompt === 'string' ? b.prompt : '';
  if (!prompt.trim() && !images.length) return { ok: false, message: 'prompt 不能为空' };
  if (typeof b.model !== 'string' && b.model !== undefined) return { ok: false, message: 'model 必须是字符串' };
  const model = typeof b.model === 'string' && b.model ? b.model : JIMENG_DEFAULT_REQ_KEY;
  const picked = [b.duration, b.seconds].map(secondsOf);
  if (picked.includes(null)) return { ok: false, message: 'duration 必须是 5 或 10' };
  let frames = FRAMES_OF[picked.find((v) => v !== undefined) ?? 5];
  if (meta.frames !== undefined) {
    if (meta.frames !== 121 && meta.frames !== 241) return { ok: false, message: 'frames 必须是 121 或 241' };
    frames = meta.frames;
  }
  const payload: Record<string, unknown> = { req_key: model, seed: -1, frames };
  if (prompt) payload.prompt = prompt;
  if (images.length) payload[images[0].startsWith('http') ? 'image_urls' : 'binary_data_base64'] = images;
  const aspect = meta.aspect_ratio ?? aspectOfSize(b.size);
  if (aspect !== undefined) {
    if (typeof aspect !== 'string' || !ASPECT_RATIOS.has(aspect)) return { ok: false, message: 'aspect_ratio 无效' };
    payload.aspect_ratio = aspect;
  } else if (!images.length) payload.aspect_ratio = '16:9';
  if (meta.seed !== undefined) {
    if (!Number.isInteger(meta.seed)) return { ok: false, message: 'seed 必须是整数' };
    payload.seed = meta.seed;
  }
  return { ok: true, action: actionOf(images.length), model, body: payload };
}

/** One call, one price: ModelPrice[model] × 1 (refused when the model has no price). */
export const jimengPriceUnits = (): TaskPriceUnits => ({ units: 1, ratioPpm: 1_000_000, ratios: {} });

/**
 * The upstream id kept for a task: its req_key and Jimeng's task id, `<req_key>:<task_id>`. GetResult must name the
 * req_key the task was submitted with (new-api's older fetch always sent jimeng_vgfm_t2v_l20, which Volcengine answers
 * with an error for a task of any other model; its newer one sends the submit's key, as this does).
 */
export function jimengUpstreamId(reqKey: string, taskId: string): string {
  return `${reqKey}:${taskId}`;
}

/** The req_key and Jimeng's task id of a kept upstream id (a bare id: new-api's default req_key). */
export function splitUpstreamId(id: string): { reqKey: string; taskId: string } {
  const at = id.indexOf(':');
  return at < 0
    ? { reqKey: JIMENG_DEFAULT_REQ_KEY, taskId: id }
    : { reqKey: id.slice(0, at), taskId: id.slice(at + 1) };
}

/** Jimeng's task id from a submit answer `{code: 10000, data: {task_id}}`, or null when it refused. */
export function jimengTaskIdOf(status: number, body: unknown): string | null {
  const b = asObject(body);
  if (status < 200 || status >= 300 || !b || b.code !== JIMENG_OK) return null;
  const id = asObject(b.data)?.task_id;
  return typeof id === 'string' && id ? id : null;
}

/**
 * What a refusal said: Jimeng's own `{code, message}`, or Volcengine's gateway error (a bad signature, an unknown
 * action) `{ResponseMetadata: {Error: {Code, Message}}}`.
 */
export function jimengRefusal(body: unknown): { message: string; code: string } | undefined {
  const b = asObject(body);
  const gateway = asObject(asObject(b?.ResponseMetadata)?.Error);
  if (gateway && typeof gateway.Message === 'string')
    return { message: gateway.Message, code: typeof gateway.Code === 'string' ? gateway.Code : 'upstream_error' };
  if (b && typeof b.message === 'string' && b.message && b.code !== undefined)
    return { message: b.message, code: String(b.code) };
  return undefined;
}

const STATUS_OF: Record<string, string> = {
  in_queue: TASK_STATUS.queued,
  generating: TASK_STATUS.inProgress,
  done: TASK_STATUS.success,
  not_found: TASK_STATUS.failure,
  expired: TASK_STATUS.failure,
};

/** The video's address in a task's kept data, '' when it has none. */
export function jimengResultUrl(data: unknown): string {
  const url = asObject(data)?.video_url;
  return typeof url === 'string' ? url : '';
}

/**
 * The state of the task asked for from GetResult (the answer does not repeat its id). Null (asked again next tick)
 * for a status other than 2xx (a 429, a gateway error), a rate code, or a status Jimeng does not define: never a
 * success. Another code is a failure, as new-api reads it; `done` without a video is a failure, never a charge for
 * nothing. The kept data leaves out the images Jimeng may send back.
 */
export function readJimengFetch(status: number, body: unknown, askedId?: string): TaskStateRead[] | null {
  const b = asObject(body);
  if (status < 200 || status >= 300 || !b || !askedId) return null;
  if (typeof b.code !== 'number' || RATE_CODES.has(b.code)) return null;
  const fail = (reason: string, data: unknown): TaskStateRead[] => [
    { upstreamId: askedId, status: TASK_STATUS.failure, failReason: reason, data },
  ];
  if (b.code !== JIMENG_OK) {
    const message = typeof b.message === 'string' && b.message ? b.message : 'task failed';
    return fail(message, { code: b.code, message });
  }
  const { binary_data_base64: _images, ...data } = asObject(b.data) ?? {};
  const mapped = typeof data.status === 'string' ? STATUS_OF[data.status] : undefined;
  if (!mapped) return null;
  if (mapped === TASK_STATUS.failure) return fail(String(data.status), data);
  if (mapped === TASK_STATUS.success && !jimengResultUrl(data)) return fail('no video generated', data);
  return [{ upstreamId: askedId, status: mapped, failReason: '', data }];
}

/** Volcengine's answer code of an error status (new-api's JimengVideoErrorCode). */
export function jimengErrorCode(status: number): number {
  if (status === 401 || status === 403) return 50400;
  if (status === 429) return 50430;
  return status >= 500 ? 50500 : 50200;
}

/** Jimeng's envelope of an answer: `{code, data, message, request_id, status, time_elapsed}`. */
export function jimengEnvelope(code: number, data: unknown, message: string, requestId: string) {
  return { code, data, message, request_id: requestId, status: code, time_elapsed: '' };
}

/** A task row's state in GetResult's terms: Jimeng's status and the video, or the failure's message. */
export function jimengResultOf(row: { status: string; fail_reason: string; data: unknown }): {
  code: number;
  message: string;
  data: Record<string, unknown> | null;
} {
  const kept = asObject(row.data) ?? {};
  switch (row.status) {
    case TASK_STATUS.success:
      return { code: JIMENG_OK, message: 'Success', data: { status: 'done', video_url: jimengResultUrl(kept) } };
    case TASK_STATUS.inProgress:
      return { code: JIMENG_OK, message: 'Success', data: { status: 'generating', video_url: '' } };
    case TASK_STATUS.failure:
      // Jimeng's own end (not_found, expired: the reason readJimengFetch kept) as it said it; any other failure an
      // error with its reason (the engine keeps a failure's reason, not its answer, so not Jimeng's code either)
      if (row.fail_reason === 'not_found' || row.fail_reason === 'expired')
        return { code: JIMENG_OK, message: 'Success', data: { status: row.fail_reason, video_url: '' } };
      return { code: 50500, message: row.fail_reason || 'task failed', data: null };
    default:
      return { code: JIMENG_OK, message: 'Success', data: { status: 'in_queue', video_url: '' } };
  }
}
