// OpenAI's video API (Sora) read into the task engine's terms: what a create or a remix may carry, its price units
// (seconds × a size ratio, as new-api prices Sora), the upstream's video objects read into task states, and the video
// object a client is answered with, built from the gateway's own task row (its public id, never the upstream's).
import { TASK_STATUS } from '../../../services/tasks/status.js';
import { boundaryOf, formFields } from '../../multipart.js';
import type { TaskPriceUnits, TaskStateRead, TaskSubmitRaw } from '../types.js';

export const SORA_DEFAULT_MODEL = 'sora-2';
/** new-api's defaults when a create names none */
export const SORA_DEFAULT_SECONDS = 4;
export const SORA_DEFAULT_SIZE = '720x1280';
/** longer videos are refused before anything is charged (OpenAI sells 4, 8 and 12 s; the bound leaves room) */
const MAX_SECONDS = 60;
/** new-api's size ratio of the large sizes, 1.666667, in millionths */
const LARGE_SIZE_RATIO_PPM = 1_666_667;
const LARGE_SIZES = new Set(['1792x1024', '1024x1792']);

export type SoraCheck = { ok: true; model: string; body: Record<string, unknown> } | { ok: false; message: string };

/** The fields of a create: the JSON object, or the text fields of a multipart form (its files stay in the bytes). */
function fieldsOf(body: unknown, raw?: TaskSubmitRaw): Record<string, unknown> | null {
  const boundary = boundaryOf(raw?.contentType);
  if (raw && boundary) {
    const out: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(formFields(raw.bytes, boundary))) {
      out[name] = typeof value === 'string' ? value : { file: value.filename };
    }
    return out;
  }
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : null;
}

function secondsOf(v: unknown): number | null | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,4}$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= 1 && n <= MAX_SECONDS ? n : null;
}

/**
 * Checks a create (`POST /v1/videos`) or a remix: a prompt, and for a create a model, whole seconds (`seconds`, else
 * new-api's `duration`) and a WIDTHxHEIGHT size. The body kept is the request's fields with the defaults made explicit.
 */
export function checkSoraSubmit(action: string, body: unknown, raw?: TaskSubmitRaw): SoraCheck {
  let fields: Record<string, unknown> | null;
  try {
    fields = fieldsOf(body, raw);
  } catch {
    return { ok: false, message: '无效的 multipart 请求体' };
  }
  if (!fields) return { ok: false, message: '无效的请求体' };
  if (typeof fields.prompt !== 'string' || !fields.prompt.trim()) return { ok: false, message: 'prompt 不能为空' };
  if (action === 'remix') return { ok: true, model: '', body: { prompt: fields.prompt } };
  if (fields.model !== undefined && (typeof fields.model !== 'string' || !fields.model))
    return { ok: false, message: 'model 必须是字符串' };
  const seconds = secondsOf(fields.seconds) ?? secondsOf(fields.duration);
  if (seconds === null || secondsOf(fields.seconds) === null)
    return { ok: false, message: `seconds 必须是 1 到 ${MAX_SECONDS} 的整数` };
  const size = fields.size ?? SORA_DEFAULT_SIZE;
  if (typeof size !== 'string' || !/^\d{2,5}x\d{2,5}$/.test(size))
    return { ok: false, message: 'size 必须形如 720x1280' };
  const model = (fields.model as string | undefined) ?? SORA_DEFAULT_MODEL;
  return { ok: true, model, body: { ...fields, model, seconds: seconds ?? SORA_DEFAULT_SECONDS, size } };
}

/** A create's price units: its seconds, × 1.666667 for the two large sizes (new-api's EstimateBilling for Sora). */
export function soraPriceUnits(body: Record<string, unknown>): TaskPriceUnits {
  const seconds = typeof body.seconds === 'number' ? body.seconds : SORA_DEFAULT_SECONDS;
  const size = typeof body.size === 'string' ? body.size : SORA_DEFAULT_SIZE;
  const ratioPpm = LARGE_SIZES.has(size) ? LARGE_SIZE_RATIO_PPM : 1_000_000;
  return { units: seconds, ratioPpm, ratios: { seconds, size: ratioPpm / 1_000_000 } };
}

/** The upstream's id of a create or remix answer (a video object), or null when it refused. */
export function readSoraSubmit(status: number, body: unknown): string | null {
  if (status < 200 || status >= 300 || !body || typeof body !== 'object') return null;
  const id = (body as { id?: unknown }).id;
  return typeof id === 'string' && id ? id : null;
}

const STATUS_OF: Record<string, string> = {
  queued: TASK_STATUS.queued,
  in_progress: TASK_STATUS.inProgress,
  completed: TASK_STATUS.success,
  failed: TASK_STATUS.failure,
  cancelled: TASK_STATUS.failure,
};

/**
 * The state of one task from `GET /v1/videos/{id}`. Null (the task stays as it is, asked again next tick) for a 429,
 * an upstream failure, an answer without an id, or a status OpenAI does not define: an unknown status is never
 * taken for a success. A 404 says the upstream has no such video: the task failed.
 */
export function readSoraFetch(status: number, body: unknown, askedId?: string): TaskStateRead[] | null {
  const obj = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  if (status === 404 && askedId)
    return [
      {
        upstreamId: askedId,
        status: TASK_STATUS.failure,
        failReason: errorMessage(obj) ?? 'video not found upstream',
        data: null,
      },
    ];
  if (status < 200 || status >= 300) return null;
  const id = typeof obj.id === 'string' ? obj.id : '';
  const mapped = typeof obj.status === 'string' ? STATUS_OF[obj.status] : undefined;
  if (!id || !mapped) return null;
  const progress = typeof obj.progress === 'number' && obj.progress >= 0 && obj.progress <= 100 ? obj.progress : null;
  return [
    {
      upstreamId: id,
      status: mapped,
      failReason: mapped === TASK_STATUS.failure ? (errorMessage(obj) ?? 'task failed') : '',
      data: obj,
      ...(progress !== null && mapped !== TASK_STATUS.failure ? { progress: `${Math.floor(progress)}%` } : {}),
    },
  ];
}

function errorMessage(obj: Record<string, unknown>): string | undefined {
  const e = obj.error as { message?: unknown } | null | undefined;
  return e && typeof e.message === 'string' && e.message ? e.message : undefined;
}
