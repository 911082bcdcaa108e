// Vidu's video API read into the task engine's terms: a submit in new-api's generic shape ({model, prompt, image,
// images, size, duration, seconds, metadata}) checked and turned into Vidu's payload, its action chosen from the
// number of images (none: text to video, one: image to video, two: first and last frame, more: reference images),
// the answers read, the task states mapped. Priced per call (ModelPrice[model]), as new-api prices Vidu.
import { TASK_STATUS } from '../../../services/tasks/status.js';
import type { TaskPriceUnits, TaskStateRead } from '../types.js';

export const VIDU_DEFAULT_MODEL = 'viduq1';
/** new-api's action names, one per path under /ent/v2 */
export const VIDU_ACTIONS = {
  textGenerate: '/text2video',
  generate: '/img2video',
  firstTailGenerate: '/start-end2video',
  referenceGenerate: '/reference2video',
} as const;
const MAX_IMAGES = 7;
const MIN_SECONDS = 1;
const MAX_SECONDS = 16;
const RESOLUTIONS = new Set(['360p', '540p', '720p', '1080p']);
const AMPLITUDES = new Set(['auto', 'small', 'medium', 'large']);

export type ViduCheck =
  { ok: true; action: string; model: string; body: Record<string, unknown> } | { ok: false; message: string };

function asObject(v: unknown): Record<string, unknown> | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function secondsOf(v: unknown): number | null | undefined {
  if (v === undefined || v === null || v === '' || v === 0) return undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,2}$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= MIN_SECONDS && n <= MAX_SECONDS ? n : null;
}

/** a resolution label, or a WIDTHxHEIGHT size folded by its shorter side (new-api sends the size as it is) */
function resolutionOf(v: unknown): string | null | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') return null;
  const label = v.trim().toLowerCase();
  if (RESOLUTIONS.has(label)) return label;
  const m = /^(\d{2,5})x(\d{2,5})$/.exec(label);
  if (!m) return null;
  const short = `${Math.min(Number(m[1]), Number(m[2]))}p`;
  return RESOLUTIONS.has(short) ? short : null;
}

/** the images of a submit: `images`, else `image`, else `metadata.images` (strings only) */
function imagesOf(b: Record<string, unknown>, meta: Record<string, unknown>): string[] | null {
  const given = Array.isArray(b.images) && b.images.length ? b.images : b.image ? [b.image] : meta.images;
  if (given === undefined || given === null) return [];
  if (!Array.isArray(given) || !given.every((i) => typeof i === 'string' && i)) return null;
  return given as string[];
}

function actionOf(images: number): keyof typeof VIDU_ACTIONS {
  if (images === 0) return 'textGenerate';
  if (images === 1) return 'generate';
  return images === 2 ? 'firstTailGenerate' : 'referenceGenerate';
}

/**
 * Checks a generic submit: a prompt (or images), a model, whole seconds 1–16 (`duration`, else `seconds`, else
 * `metadata.duration`; 5 when absent), a resolution (`metadata.resolution` or `size`; 1080p when absent). `metadata`
 * may set Vidu's seed, movement_amplitude, bgm and payload, never the model, the prompt or the images, which are
 * checked and priced here (new-api lets metadata replace the priced model).
 */
export function checkViduSubmit(body: unknown): ViduCheck {
  const b = asObject(body);
  if (!b) return { ok: false, message: '无效的请求体' };
  const meta = b.metadata === undefined || b.metadata === null ? {} : asObject(b.metadata);
  if (!meta) return { ok: false, message: 'metadata 必须是对象' };
  const images = imagesOf(b, meta);
  if (!images) return { ok: false, message: 'image 必须是字符串' };
  if (images.length > MAX_IMAGES) return { ok: false, message: `图片最多 ${MAX_IMAGES} 张` };
  if (b.prompt !== undefined && b.prompt !== null && typeof b.prompt !== 'string')
    return { ok: false, message: 'prompt 必须是字符串' };
  const prompt = typeof b.prompt === 'string' ? b.prompt : '';
  if (!prompt.trim() && !images.length) return { ok: false, message: 'prompt 不能为空' };
  if (typeof b.model !== 'string' && b.model !== undefined) return { ok: false, message: 'model 必须是字符串' };
  const model = typeof b.model === 'string' && b.model ? b.model : VIDU_DEFAULT_MODEL;
  const picked = [b.duration, b.seconds, meta.duration].map(secondsOf);
  if (picked.includes(null)) return { ok: false, message: `时长必须是 ${MIN_SECONDS} 到 ${MAX_SECONDS} 的整数秒` };
  const duration = picked.find((v) => v !== undefined) ?? 5;
  const resolution = resolutionOf(meta.resolution ?? b.size);
  if (resolution === null) return { ok: false, message: 'resolution 必须是 360p、540p、720p 或 1080p' };
  const payload: Record<string, unknown> = {
    model,
    images,
    duration,
    resolution: resolution ?? '1080p',
    movement_amplitude: 'auto',
    bgm: false,
  };
  if (prompt) payload.prompt = prompt;
  if (meta.movement_amplitude !== undefined) {
    if (typeof meta.movement_amplitude !== 'string' || !AMPLITUDES.has(meta.movement_amplitude))
      return { ok: false, message: 'movement_amplitude 无效' };
    payload.movement_amplitude = meta.movement_amplitude;
  }
  if (meta.bgm !== undefined) {
    if (typeof meta.bgm !== 'boolean') return { ok: false, message: 'bgm 必须是布尔值' };
    payload.bgm = meta.bgm;
  }
  if (meta.seed !== undefined) {
    if (!Number.isInteger(meta.seed)) return { ok: false, message: 'seed 必须是整数' };
    payload.seed = meta.seed;
  }
  if (typeof meta.payload === 'string') payload.payload = meta.payload;
  return { ok: true, action: actionOf(images.length), model, body: payload };
}

/** One call, one price: ModelPrice[model] × 1 (refused when the model has no price). */
export const viduPriceUnits = (): TaskPriceUnits => ({ units: 1, ratioPpm: 1_000_000, ratios: {} });

/** The path of an action's submit under /ent/v2 (text to video for an action it does not know). */
export const viduPath = (action: string) =>
  (VIDU_ACTIONS as Record<string, string>)[action] ?? VIDU_ACTIONS.textGenerate;

/** Vidu's submit answer `{task_id, state, …}`; the task's id, or null when it refused or failed at once. */
export function readViduSubmit(status: number, body: unknown): string | null {
  const b = asObject(body);
  if (status < 200 || status >= 300 || !b || b.state === 'failed') return null;
  return typeof b.task_id === 'string' && b.task_id ? b.task_id : null;
}

const STATUS_OF: Record<string, string> = {
  created: TASK_STATUS.submitted,
  queueing: TASK_STATUS.submitted,
  processing: TASK_STATUS.inProgress,
  success: TASK_STATUS.success,
  failed: TASK_STATUS.failure,
};

/** The first creation's address in a task's data, '' when it has none. */
export function viduResultUrl(data: unknown): string {
  const creations = asObject(data)?.creations;
  const first = Array.isArray(creations) ? asObject(creations[0]) : null;
  return typeof first?.url === 'string' ? first.url : '';
}

/**
 * The state of the task asked for from `GET /ent/v2/tasks/{id}/creations` (the answer does not repeat the id).
 * Null (asked again next tick) for a 429, any other failure, or a state Vidu does not define: never a success. A
 * success without a creation is a failure, never a charge for nothing.
 */
export function readViduFetch(status: number, body: unknown, askedId?: string): TaskStateRead[] | null {
  const b = asObject(body);
  if (status < 200 || status >= 300 || !b || !askedId) return null;
  const mapped = typeof b.state === 'string' ? STATUS_OF[b.state] : undefined;
  if (!mapped) return null;
  if (mapped === TASK_STATUS.success && !viduResultUrl(b))
    return [{ upstreamId: askedId, status: TASK_STATUS.failure, failReason: 'no video generated', data: b }];
  const reason = typeof b.err_code === 'string' && b.err_code ? b.err_code : 'task failed';
  return [{ upstreamId: askedId, status: mapped, failReason: mapped === TASK_STATUS.failure ? reason : '', data: b }];
}
