// Alibaba's Wan video models (DashScope's asynchronous video synthesis) read into the task engine's terms: a submit
// in new-api's generic shape ({model, prompt, image, images, input_reference, size, duration, seconds, metadata})
// checked and turned into DashScope's {model, input, parameters}, its price units (seconds × new-api's resolution
// ratio of the model), the task states mapped.
import { TASK_STATUS } from '../../../services/tasks/status.js';
import type { TaskPriceUnits, TaskStateRead } from '../types.js';

const SIZES: Record<string, string[]> = {
  '480P': ['832*480', '480*832', '624*624'],
  '720P': ['1280*720', '720*1280', '960*960', '1088*832', '832*1088'],
  '1080P': ['1920*1080', '1080*1920', '1440*1440', '1632*1248', '1248*1632'],
};
/**
 * new-api's resolution ratios in millionths (floored) over each model's cheapest resolution, from DashScope's prices.
 * wan2.2 plus at 1080P is 0.7 / 0.14 = 5 (new-api's float division gives 4.999999999999999, a unit less at times).
 */
const RATIO_PPM: Record<string, Record<string, number>> = {
  'wan2.6-i2v': { '720P': 1_000_000, '1080P': 1_666_666 },
  'wan2.5-t2v-preview': { '480P': 1_000_000, '720P': 2_000_000, '1080P': 3_333_333 },
  'wan2.5-i2v-preview': { '480P': 1_000_000, '720P': 2_000_000, '1080P': 3_333_333 },
  'wan2.2-t2v-plus': { '480P': 1_000_000, '1080P': 5_000_000 },
  'wan2.2-i2v-plus': { '480P': 1_000_000, '1080P': 5_000_000 },
  'wan2.2-kf2v-flash': { '480P': 1_000_000, '720P': 2_000_000, '1080P': 4_800_000 },
  'wan2.2-i2v-flash': { '480P': 1_000_000, '720P': 2_000_000 },
  'wan2.2-s2v': { '480P': 1_000_000, '720P': 1_800_000 },
};
const INPUT_URLS = ['img_url', 'first_frame_url', 'last_frame_url', 'audio_url'];
const INPUT_TEXTS = ['negative_prompt', 'template'];
const FLAGS = ['prompt_extend', 'watermark', 'audio'];

export type WanCheck = { ok: true; model: string; body: Record<string, unknown> } | { ok: false; message: string };

function asObject(v: unknown): Record<string, unknown> | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function secondsOf(v: unknown): number | null | undefined {
  if (v === undefined || v === null || v === '' || v === 0) return undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,2}$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= 1 && n <= 30 ? n : null;
}

const resolutionOfSize = (size: string) => Object.keys(SIZES).find((r) => SIZES[r].includes(size));

/** new-api's default when no size is given: text-to-video models a size, the others a resolution */
function defaults(model: string): { size?: string; resolution?: string } {
  if (model.includes('t2v')) return { size: /^wan2\.[25]/.test(model) ? '1920*1080' : '1280*720' };
  if (/^wan2\.[56]/.test(model) || model.startsWith('wan2.2-i2v-plus')) return { resolution: '1080P' };
  return { resolution: '720P' };
}

/** a generic size: WIDTHxHEIGHT or WIDTH*HEIGHT (one of DashScope's sizes), or a resolution label (480p…) */
function sizing(model: string, size: unknown): { size?: string; resolution?: string } | string {
  if (size === undefined || size === null || size === '') return defaults(model);
  if (typeof size !== 'string') return 'size 无效';
  const star = size.trim().toLowerCase().replace('x', '*');
  if (/^\d+\*\d+$/.test(star)) return resolutionOfSize(star) ? { size: star } : 'size 不是万相支持的尺寸';
  // text-to-video takes a size only (new-api's check)
  if (model.includes('t2v')) return 'size 不是万相支持的尺寸';
  const label = star.toUpperCase().endsWith('P') ? star.toUpperCase() : `${star.toUpperCase()}P`;
  return SIZES[label] ? { resolution: label } : 'size 不是万相支持的尺寸';
}

/**
 * Checks a generic submit: a prompt (or an image), a model, whole seconds 1–30 (`duration`, else `seconds`, else
 * `metadata.parameters.duration`; 5 when absent), a size of DashScope's list or a resolution label. `metadata.input`
 * may set DashScope's frame, audio, negative prompt and template; `metadata.parameters` its flags and seed. The model
 * is the one priced: `metadata` cannot replace it.
 */
export function checkWanSubmit(body: unknown): WanCheck {
  const b = asObject(body);
  if (!b) return { ok: false, message: '无效的请求体' };
  if (typeof b.model !== 'string' || !b.model) return { ok: false, message: 'model 不能为空' };
  const meta = b.metadata === undefined || b.metadata === null ? {} : asObject(b.metadata);
  if (!meta) return { ok: false, message: 'metadata 必须是对象' };
  const metaInput = meta.input === undefined ? {} : asObject(meta.input);
  const metaParams = meta.parameters === undefined ? {} : asObject(meta.parameters);
  if (!metaInput || !metaParams) return { ok: false, message: 'metadata 必须是对象' };
  if (b.prompt !== undefined && typeof b.prompt !== 'string') return { ok: false, message: 'prompt 必须是字符串' };
  const image = b.input_reference ?? b.image ?? (Array.isArray(b.images) ? b.images[0] : undefined);
  if (image !== undefined && (typeof image !== 'string' || !image)) return { ok: false, message: 'image 必须是字符串' };
  const input: Record<string, unknown> = {};
  if (typeof b.prompt === 'string' && b.prompt) input.prompt = b.prompt;
  if (image) input.img_url = image;
  for (const k of [...INPUT_URLS, ...INPUT_TEXTS]) {
    if (metaInput[k] === undefined) continue;
    if (typeof metaInput[k] !== 'string') return { ok: false, message: `${k} 必须是字符串` };
    input[k] = metaInput[k];
  }
  if (!input.prompt && !input.img_url && !input.first_frame_url) return { ok: false, message: 'prompt 不能为空' };
  const picked = [b.duration, b.seconds, metaParams.duration].map(secondsOf);
  if (picked.includes(null)) return { ok: false, message: '时长必须是 1 到 30 的整数秒' };
  const duration = picked.find((v) => v !== undefined) ?? 5;
  const sized = sizing(b.model, metaParams.size ?? metaParams.resolution ?? b.size);
  if (typeof sized === 'string') return { ok: false, message: sized };
  const parameters: Record<string, unknown> = { ...sized, duration, prompt_extend: true, watermark: false };
  for (const flag of FLAGS) {
    if (metaParams[flag] === undefined) continue;
    if (typeof metaParams[flag] !== 'boolean') return { ok: false, message: `${flag} 必须是布尔值` };
    parameters[flag] = metaParams[flag];
  }
  if (metaParams.seed !== undefined) {
    if (!Number.isInteger(metaParams.seed)) return { ok: false, message: 'seed 必须是整数' };
    parameters.seed = metaParams.seed;
  }
  return { ok: true, model: b.model, body: { model: b.model, input, parameters } };
}

/** A submit's price units: its seconds × the model's ratio for its resolution (1 where new-api has none). */
export function wanPriceUnits(body: Record<string, unknown>): TaskPriceUnits {
  const p = asObject(body.parameters) ?? {};
  const seconds = typeof p.duration === 'number' ? p.duration : 5;
  const resolution = typeof p.size === 'string' ? resolutionOfSize(p.size) : String(p.resolution ?? '');
  const ratioPpm = (resolution && RATIO_PPM[String(body.model)]?.[resolution]) || 0;
  if (!ratioPpm) return { units: seconds, ratioPpm: 1_000_000, ratios: { seconds } };
  return { units: seconds, ratioPpm, ratios: { seconds, [`resolution-${resolution}`]: ratioPpm / 1_000_000 } };
}

/** DashScope's `{output: {task_id, task_status}, request_id}`; the task's id, or null when it refused (`code`). */
export function readWanSubmit(status: number, body: unknown): string | null {
  const b = asObject(body);
  if (status < 200 || status >= 300 || !b || b.code) return null;
  const id = asObject(b.output)?.task_id;
  return typeof id === 'string' && id ? id : null;
}

const STATUS_OF: Record<string, string> = {
  PENDING: TASK_STATUS.queued,
  RUNNING: TASK_STATUS.inProgress,
  SUCCEEDED: TASK_STATUS.success,
  FAILED: TASK_STATUS.failure,
  CANCELED: TASK_STATUS.failure,
  // DashScope's word for a task that does not exist (any more): nothing will come of it
  UNKNOWN: TASK_STATUS.failure,
};

/** A finished task's video address, '' when it has none. */
export function wanVideoUrl(data: unknown): string {
  const url = asObject(asObject(data)?.output)?.video_url;
  return typeof url === 'string' ? url : '';
}

/**
 * The state of one task from `GET /api/v1/tasks/{id}`. Null (asked again next tick) for a 429, any other failure, an
 * answer about another task, or a status DashScope does not define (new-api counts it as queued). A success without
 * a video is a failure, never a charge for nothing.
 */
export function readWanFetch(status: number, body: unknown, askedId?: string): TaskStateRead[] | null {
  const b = asObject(body);
  const output = asObject(b?.output);
  if (status < 200 || status >= 300 || !b || !output) return null;
  const id = typeof output.task_id === 'string' && output.task_id ? output.task_id : askedId;
  if (!id || (askedId && id !== askedId)) return null;
  const mapped = typeof output.task_status === 'string' ? STATUS_OF[output.task_status] : undefined;
  if (!mapped) return null;
  if (mapped === TASK_STATUS.success && !wanVideoUrl(b))
    return [{ upstreamId: id, status: TASK_STATUS.failure, failReason: 'no video generated', data: b }];
  const message = [b.message, output.message].find((m) => typeof m === 'string' && m) as string | undefined;
  const reason = message ?? `task ${String(output.task_status).toLowerCase()}`;
  return [{ upstreamId: id, status: mapped, failReason: mapped === TASK_STATUS.failure ? reason : '', data: b }];
}
