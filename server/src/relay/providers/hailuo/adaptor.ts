// MiniMax's Hailuo video models read into the task engine's terms: a submit in new-api's generic shape ({model,
// prompt, image, images, size, duration, seconds, metadata}) checked against the model's lengths and resolutions and
// turned into `/v1/video_generation`'s body, the `base_resp` envelope read, the task states mapped. Priced per call
// (ModelPrice[model]), as new-api prices Hailuo.
import { TASK_STATUS } from '../../../services/tasks/status.js';
import type { TaskPriceUnits, TaskStateRead } from '../types.js';

/** each model's lengths and resolutions, the first one its default (new-api's table, MiniMax's documentation) */
const MODELS: Record<string, { durations: number[]; resolutions: string[] }> = {
  'MiniMax-Hailuo-2.3': { durations: [6, 10], resolutions: ['768P', '1080P'] },
  'MiniMax-Hailuo-2.3-Fast': { durations: [6, 10], resolutions: ['768P', '1080P'] },
  'MiniMax-Hailuo-02': { durations: [6, 10], resolutions: ['768P', '512P', '1080P'] },
  'T2V-01-Director': { durations: [6], resolutions: ['768P', '1080P'] },
  'T2V-01': { durations: [6], resolutions: ['720P'] },
  'I2V-01-Director': { durations: [6], resolutions: ['720P', '1080P'] },
  'I2V-01-live': { durations: [6], resolutions: ['720P', '1080P'] },
  'I2V-01': { durations: [6], resolutions: ['720P', '1080P'] },
  'S2V-01': { durations: [6], resolutions: ['720P'] },
};
const OTHER_MODEL = { durations: [6], resolutions: ['720P'] };
const FLAGS = ['prompt_optimizer', 'fast_pretreatment', 'aigc_watermark'];

export type HailuoCheck = { ok: true; model: string; body: Record<string, unknown> } | { ok: false; message: string };

function asObject(v: unknown): Record<string, unknown> | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function secondsOf(v: unknown): number | null | undefined {
  if (v === undefined || v === null || v === '' || v === 0) return undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,2}$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isInteger(n) ? n : null;
}

/** new-api's size to a resolution: the first of 1080, 768, 720, 512 it contains */
function resolutionOfSize(size: string): string | undefined {
  return ['1080', '768', '720', '512'].find((r) => size.includes(r))?.concat('P');
}

const optionalUrl = (v: unknown) => v === undefined || (typeof v === 'string' && v.length > 0);

/**
 * Checks a generic submit: a prompt (or a first frame), a model, a length and a resolution the model makes (6 s and
 * its default resolution when absent), the first and last frames (`images`, or `metadata`), a subject reference and
 * MiniMax's flags in `metadata`; never the model, which is the one priced (new-api lets metadata replace it).
 */
export function checkHailuoSubmit(body: unknown): HailuoCheck {
  const b = asObject(body);
  if (!b) return { ok: false, message: '无效的请求体' };
  if (typeof b.model !== 'string' || !b.model) return { ok: false, message: 'model 不能为空' };
  const meta = b.metadata === undefined || b.metadata === null ? {} : asObject(b.metadata);
  if (!meta) return { ok: false, message: 'metadata 必须是对象' };
  const images = Array.isArray(b.images) && b.images.length ? b.images : b.image ? [b.image] : [];
  if (images.length > 2 || !images.every((i) => typeof i === 'string' && i))
    return { ok: false, message: '首尾帧图片最多 2 张，且必须是字符串' };
  const first = meta.first_frame_image ?? images[0];
  const last = meta.last_frame_image ?? images[1];
  if (!optionalUrl(first) || !optionalUrl(last)) return { ok: false, message: 'image 必须是字符串' };
  if (b.prompt !== undefined && typeof b.prompt !== 'string') return { ok: false, message: 'prompt 必须是字符串' };
  const prompt = typeof b.prompt === 'string' ? b.prompt : '';
  if (!prompt.trim() && !first) return { ok: false, message: 'prompt 不能为空' };
  const config = MODELS[b.model] ?? OTHER_MODEL;
  const picked = [b.duration, b.seconds, meta.duration].map(secondsOf);
  const duration = picked.includes(null) ? NaN : (picked.find((v) => v !== undefined) ?? config.durations[0]);
  if (!config.durations.includes(duration))
    return { ok: false, message: `该模型的时长只能是 ${config.durations.join('、')} 秒` };
  const sized = typeof b.size === 'string' && b.size ? resolutionOfSize(b.size) : undefined;
  const given = meta.resolution === undefined ? sized : String(meta.resolution).toUpperCase();
  const resolution = given ?? config.resolutions[0];
  if (!config.resolutions.includes(resolution))
    return { ok: false, message: `该模型的分辨率只能是 ${config.resolutions.join('、')}` };
  const payload: Record<string, unknown> = { model: b.model, duration, resolution };
  if (prompt) payload.prompt = prompt;
  if (first) payload.first_frame_image = first;
  if (last) payload.last_frame_image = last;
  for (const flag of FLAGS) {
    if (meta[flag] === undefined) continue;
    if (typeof meta[flag] !== 'boolean') return { ok: false, message: `${flag} 必须是布尔值` };
    payload[flag] = meta[flag];
  }
  if (meta.subject_reference !== undefined) {
    const refs = meta.subject_reference;
    const valid =
      Array.isArray(refs) &&
      refs.every((r) => {
        const o = asObject(r);
        return o && typeof o.type === 'string' && Array.isArray(o.image) && o.image.every((i) => typeof i === 'string');
      });
    if (!valid) return { ok: false, message: 'subject_reference 无效' };
    payload.subject_reference = refs;
  }
  return { ok: true, model: b.model, body: payload };
}

/** One call, one price: ModelPrice[model] × 1 (refused when the model has no price). */
export const hailuoPriceUnits = (): TaskPriceUnits => ({ units: 1, ratioPpm: 1_000_000, ratios: {} });

const baseRespOk = (b: Record<string, unknown>) => asObject(b.base_resp)?.status_code === 0;

/** `{task_id, base_resp: {status_code: 0}}`; the task's id, or null when it refused (an error code in a 200 too). */
export function readHailuoSubmit(status: number, body: unknown): string | null {
  const b = asObject(body);
  if (status < 200 || status >= 300 || !b || !baseRespOk(b)) return null;
  return typeof b.task_id === 'string' && b.task_id ? b.task_id : null;
}

const STATUS_OF: Record<string, { status: string; progress: string }> = {
  Preparing: { status: TASK_STATUS.queued, progress: '30%' },
  Queueing: { status: TASK_STATUS.queued, progress: '30%' },
  Processing: { status: TASK_STATUS.inProgress, progress: '50%' },
  Success: { status: TASK_STATUS.success, progress: '100%' },
  Fail: { status: TASK_STATUS.failure, progress: '100%' },
};

/**
 * The state of one task from `GET /v1/query/video_generation?task_id=`. Null (asked again next tick) for a 429, any
 * other failed call, a `base_resp` error code (new-api fails and refunds the task on one, a rate limit 1002 included,
 * while it may still be running), an answer about another task, or a status MiniMax does not define. A success
 * without a file is a failure.
 */
export function readHailuoFetch(status: number, body: unknown, askedId?: string): TaskStateRead[] | null {
  const b = asObject(body);
  if (status < 200 || status >= 300 || !b || !baseRespOk(b)) return null;
  const id = typeof b.task_id === 'string' && b.task_id ? b.task_id : askedId;
  if (!id || (askedId && id !== askedId)) return null;
  const mapped = typeof b.status === 'string' ? STATUS_OF[b.status] : undefined;
  if (!mapped) return null;
  const hasFile = (typeof b.file_id === 'string' && b.file_id) || typeof b.file_id === 'number';
  if (mapped.status === TASK_STATUS.success && !hasFile)
    return [{ upstreamId: id, status: TASK_STATUS.failure, failReason: 'no video generated', data: b }];
  return [
    {
      upstreamId: id,
      status: mapped.status,
      failReason: mapped.status === TASK_STATUS.failure ? 'task failed' : '',
      data: b,
      progress: mapped.progress,
    },
  ];
}
