// Kling's video API read into the task engine's terms: a submit in new-api's generic shape ({model, prompt, image,
// mode, duration, size, metadata}; the native /kling routes are converted into it first) checked and turned into
// Kling's payload, its action (image2video when an image is given, else text2video), the answers read, the task
// states mapped. Priced per call (ModelPrice[model]); a model priced by ModelRatio only is charged new-api's estimate
// and settled on `final_unit_deduction` at completion (services/tasks/settle.ts).
import { TASK_STATUS } from '../../../services/tasks/status.js';
import { reportedUnits } from '../task-units.js';
import type { TaskPriceUnits, TaskStateRead } from '../types.js';

export const KLING_DEFAULT_MODEL = 'kling-v1';
/** new-api's actions: `generate` is image to video, `textGenerate` text to video */
export const KLING_IMAGE_ACTION = 'generate';
export const KLING_TEXT_ACTION = 'textGenerate';
const DURATIONS = new Set([5, 10]);
/** fields of `metadata` a client may not set: the model is the one priced */
const RESERVED = new Set(['model', 'model_name', 'prompt', 'image', 'image_tail', 'mode', 'duration']);

export type KlingCheck =
  { ok: true; action: string; model: string; body: Record<string, unknown> } | { ok: false; message: string };

function asObject(v: unknown): Record<string, unknown> | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function optionalString(v: unknown): string | null | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  return typeof v === 'string' ? v : null;
}

function durationOf(v: unknown): number | null | undefined {
  if (v === undefined || v === null || v === '' || v === 0) return undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,3}$/.test(v.trim()) ? Number(v) : NaN;
  return DURATIONS.has(n) ? n : null;
}

/** new-api's size to Kling's aspect ratio (1:1 for any other size) */
function aspectRatioOf(size: unknown): string {
  if (size === '1280x720' || size === '1920x1080') return '16:9';
  if (size === '720x1280' || size === '1080x1920') return '9:16';
  return '1:1';
}

/**
 * Checks a generic submit: a prompt (or an image), a model, a mode (std or pro), a duration of 5 or 10 seconds
 * (`duration`, else `seconds`; 5 when absent), string images; `metadata` carries Kling's own fields (aspect_ratio,
 * negative_prompt, cfg_scale, camera_control, …) but never the model, the prompt or the image, which are checked here.
 */
export function checkKlingSubmit(body: unknown): KlingCheck {
  const b = asObject(body);
  if (!b) return { ok: false, message: '无效的请求体' };
  const meta = b.metadata === undefined || b.metadata === null ? {} : asObject(b.metadata);
  if (!meta) return { ok: false, message: 'metadata 必须是对象' };
  const image = optionalString(b.image ?? (Array.isArray(b.images) ? b.images[0] : undefined) ?? meta.image);
  const imageTail = optionalString(meta.image_tail);
  if (image === null || imageTail === null) return { ok: false, message: 'image 必须是字符串' };
  const prompt = optionalString(b.prompt);
  if (prompt === null) return { ok: false, message: 'prompt 必须是字符串' };
  if (!prompt?.trim() && !image) return { ok: false, message: 'prompt 不能为空' };
  const model = optionalString(b.model) ?? KLING_DEFAULT_MODEL;
  if (model === null) return { ok: false, message: 'model 必须是字符串' };
  const mode = optionalString(b.mode ?? meta.mode) ?? 'std';
  if (mode !== 'std' && mode !== 'pro') return { ok: false, message: 'mode 必须是 std 或 pro' };
  // null (a bad value) must not fall through to `seconds` as undefined (an absent one) does
  const given = durationOf(b.duration ?? meta.duration);
  const seconds = durationOf(b.seconds);
  if (given === null || seconds === null) return { ok: false, message: 'duration 必须是 5 或 10' };
  const duration = given ?? seconds;
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(meta)) if (!RESERVED.has(k)) extra[k] = v;
  const payload: Record<string, unknown> = {
    model_name: model,
    model,
    prompt: prompt ?? '',
    mode,
    duration: String(duration ?? 5),
    aspect_ratio: aspectRatioOf(b.size),
    cfg_scale: 0.5,
    ...extra,
  };
  if (image) payload.image = klingImage(image);
  if (imageTail) payload.image_tail = klingImage(imageTail);
  const action = image || imageTail ? KLING_IMAGE_ACTION : KLING_TEXT_ACTION;
  return { ok: true, action, model, body: payload };
}

/**
 * Kling takes an image as a URL or as bare base64: a data URI (what OpenAI's video API and new-api's clients send)
 * loses its `data:<type>;base64,` prefix, which Kling refuses.
 */
function klingImage(image: string): string {
  const m = /^data:[\w.+-]+\/[\w.+-]+;base64,/i.exec(image);
  return m ? image.slice(m[0].length) : image;
}

/** One call, one price: ModelPrice[model] × 1 (refused when the model has neither a price nor a ratio, as Sora's). */
export const klingPriceUnits = (): TaskPriceUnits => ({ units: 1, ratioPpm: 1_000_000, ratios: {} });

/** The path of an action's requests (`/v1/videos/image2video` or `/v1/videos/text2video`). */
export const klingPath = (action: string) =>
  action === KLING_IMAGE_ACTION ? '/v1/videos/image2video' : '/v1/videos/text2video';

/** Kling's envelope `{code: 0, message, data: {task_id, …}}`; the task's id, or null when it refused. */
export function readKlingSubmit(status: number, body: unknown): string | null {
  const b = asObject(body);
  if (status < 200 || status >= 300 || !b || b.code !== 0) return null;
  const id = asObject(b.data)?.task_id;
  return typeof id === 'string' && id ? id : null;
}

const STATUS_OF: Record<string, string> = {
  submitted: TASK_STATUS.submitted,
  processing: TASK_STATUS.inProgress,
  succeed: TASK_STATUS.success,
  failed: TASK_STATUS.failure,
};

/**
 * The state of one task from `GET …/{id}`. Null (the task stays as it is, asked again next tick) for a 429, any
 * other failure, an envelope with a code other than 0, or a status Kling does not define: an unknown status is an
 * error, never a success.
 */
export function readKlingFetch(status: number, body: unknown): TaskStateRead[] | null {
  const b = asObject(body);
  if (status < 200 || status >= 300 || !b || b.code !== 0) return null;
  const data = asObject(b.data);
  const id = data?.task_id;
  const mapped = typeof data?.task_status === 'string' ? STATUS_OF[data.task_status] : undefined;
  if (!data || typeof id !== 'string' || !id || !mapped) return null;
  const reason = typeof data.task_status_msg === 'string' && data.task_status_msg ? data.task_status_msg : '';
  // the units Kling deducted ("2.5"), read once the task has succeeded
  const used = mapped === TASK_STATUS.success ? reportedUnits(data.final_unit_deduction) : undefined;
  return [
    {
      upstreamId: id,
      status: mapped,
      failReason: mapped === TASK_STATUS.failure ? reason || 'task failed' : '',
      data,
      ...(used ? { usedUnits: used } : {}),
    },
  ];
}

/** The first video's address in a finished task's data (Kling's own URL, as new-api answers it). */
export function klingResultUrl(data: unknown): string {
  const videos = asObject(asObject(data)?.task_result)?.videos;
  const first = Array.isArray(videos) ? asObject(videos[0]) : null;
  return typeof first?.url === 'string' ? first.url : '';
}
