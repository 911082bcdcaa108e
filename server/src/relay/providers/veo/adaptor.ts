// Google's Veo video models on the Gemini API read into the task engine's terms: a submit in new-api's generic shape
// ({model, prompt, size, duration, seconds, metadata}) checked and turned into `predictLongRunning`'s
// {instances: [{prompt}], parameters}, its price units (seconds × the 4K ratio, as new-api's task/gemini/billing.go
// prices Veo), and the long-running operation read into task states.
import { TASK_STATUS } from '../../../services/tasks/status.js';
import type { TaskPriceUnits, TaskStateRead } from '../types.js';

/** Veo's default length when a submit names none (new-api's too) */
export const VEO_DEFAULT_SECONDS = 8;
const MIN_SECONDS = 4;
const MAX_SECONDS = 8;
const RESOLUTIONS = new Set(['720p', '1080p', '4k']);
const PERSON_GENERATION = new Set(['allow_all', 'allow_adult', 'dont_allow']);
/** new-api's 4K ratios in millionths: Google's 4K price over the standard one (3.1 fast, 3.1); 3.0 has no 4K */
const RATIO_4K_FAST_PPM = 2_333_333;
const RATIO_4K_PPM = 1_500_000;

/** What one Veo API takes beyond the other's: Vertex writes the videos to a Cloud Storage prefix when asked. */
export interface VeoCheckOptions {
  /** `metadata.storageUri` (a `gs://` prefix) is passed on as Vertex's `parameters.storageUri` */
  storageUri?: boolean;
}

export type VeoCheck = { ok: true; model: string; body: Record<string, unknown> } | { ok: false; message: string };

export function asObject(v: unknown): Record<string, unknown> | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function secondsOf(v: unknown): number | null | undefined {
  if (v === undefined || v === null || v === '' || v === 0) return undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,2}$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= MIN_SECONDS && n <= MAX_SECONDS ? n : null;
}

/** a WIDTHxHEIGHT size's longer side as Veo's resolution, and its orientation as the aspect ratio (new-api's) */
function fromSize(size: string): { resolution: string; aspectRatio: string } {
  const [w, h] = size.split('x').map(Number);
  const longer = Math.max(w, h);
  return {
    resolution: longer >= 3840 ? '4k' : longer >= 1920 ? '1080p' : '720p',
    aspectRatio: h > w ? '9:16' : '16:9',
  };
}

/**
 * Checks a generic submit: a prompt, a model, whole seconds 4–8 (`metadata.durationSeconds`, else `duration`, else
 * `seconds`; 8 when absent), a WIDTHxHEIGHT size or Veo's own `resolution` and `aspectRatio` in `metadata`. Images are
 * refused: the upstream call sends the prompt only (as new-api's does), so an image would be charged and ignored.
 */
export function checkVeoSubmit(body: unknown, opts: VeoCheckOptions = {}): VeoCheck {
  const b = asObject(body);
  if (!b) return { ok: false, message: '无效的请求体' };
  if (typeof b.prompt !== 'string' || !b.prompt.trim()) return { ok: false, message: 'prompt 不能为空' };
  if (typeof b.model !== 'string' || !b.model) return { ok: false, message: 'model 不能为空' };
  const meta = b.metadata === undefined || b.metadata === null ? {} : asObject(b.metadata);
  if (!meta) return { ok: false, message: 'metadata 必须是对象' };
  if (b.image || (Array.isArray(b.images) && b.images.length) || b.input_reference || meta.image)
    return { ok: false, message: 'Veo 视频任务暂不支持图片输入' };
  const picked = [meta.durationSeconds, b.duration, b.seconds].map(secondsOf);
  if (picked.includes(null)) return { ok: false, message: `时长必须是 ${MIN_SECONDS} 到 ${MAX_SECONDS} 的整数秒` };
  const seconds = picked.find((v) => v !== undefined) ?? VEO_DEFAULT_SECONDS;
  if (b.size !== undefined && (typeof b.size !== 'string' || !/^\d{2,5}x\d{2,5}$/.test(b.size)))
    return { ok: false, message: 'size 必须形如 1280x720' };
  const sized = typeof b.size === 'string' ? fromSize(b.size) : { resolution: '720p', aspectRatio: '16:9' };
  const resolution = meta.resolution === undefined ? sized.resolution : String(meta.resolution).toLowerCase();
  if (!RESOLUTIONS.has(resolution)) return { ok: false, message: 'resolution 必须是 720p、1080p 或 4k' };
  const aspectRatio = meta.aspectRatio ?? sized.aspectRatio;
  if (aspectRatio !== '16:9' && aspectRatio !== '9:16')
    return { ok: false, message: 'aspectRatio 必须是 16:9 或 9:16' };
  const parameters: Record<string, unknown> = { aspectRatio, durationSeconds: seconds, resolution };
  if (typeof meta.negativePrompt === 'string') parameters.negativePrompt = meta.negativePrompt;
  if (meta.personGeneration !== undefined) {
    if (typeof meta.personGeneration !== 'string' || !PERSON_GENERATION.has(meta.personGeneration))
      return { ok: false, message: 'personGeneration 无效' };
    parameters.personGeneration = meta.personGeneration;
  }
  if (opts.storageUri && meta.storageUri !== undefined) {
    if (typeof meta.storageUri !== 'string' || !/^gs:\/\/[a-z0-9][a-z0-9._-]{1,221}(\/\S*)?$/.test(meta.storageUri))
      return { ok: false, message: 'storageUri 必须是 gs:// 开头的 Cloud Storage 地址' };
    parameters.storageUri = meta.storageUri;
  }
  return { ok: true, model: b.model, body: { model: b.model, prompt: b.prompt, seconds, parameters } };
}

/** new-api's resolution ratio: 1 below 4K; at 4K 2.333333 for the 3.1 fast models, 1.5 for the other 3.1 ones. */
export function veoResolutionRatioPpm(model: string, resolution: string): number {
  if (resolution !== '4k') return 1_000_000;
  if (model.includes('3.1-fast-generate')) return RATIO_4K_FAST_PPM;
  if (model.includes('3.1')) return RATIO_4K_PPM;
  return 1_000_000;
}

/** A submit's price units: its seconds × the resolution ratio (per second, ModelPrice[model]). */
export function veoPriceUnits(body: Record<string, unknown>): TaskPriceUnits {
  const seconds = typeof body.seconds === 'number' ? body.seconds : VEO_DEFAULT_SECONDS;
  const resolution = String(asObject(body.parameters)?.resolution ?? '720p');
  const ratioPpm = veoResolutionRatioPpm(String(body.model), resolution);
  return { units: seconds, ratioPpm, ratios: { seconds, resolution: ratioPpm / 1_000_000 } };
}

/** an operation's name as Google gives it (`models/<model>/operations/<id>`): a path under the API version */
export const isOperationName = (name: string) =>
  /^[A-Za-z0-9._-]+(\/[A-Za-z0-9._-]+)+$/.test(name) && !name.split('/').includes('..');

/** The operation's name of a `predictLongRunning` answer, or null when it refused. */
export function readVeoSubmit(status: number, body: unknown): string | null {
  const name = asObject(body)?.name;
  if (status < 200 || status >= 300 || typeof name !== 'string' || !isOperationName(name)) return null;
  return name;
}

/** The first generated video's URI of a finished operation, '' when it has none. */
export function veoVideoUri(operation: unknown): string {
  const response = asObject(asObject(operation)?.response);
  const samples = asObject(response?.generateVideoResponse)?.generatedSamples;
  const first = Array.isArray(samples) ? asObject(asObject(samples[0])?.video) : null;
  return typeof first?.uri === 'string' ? first.uri : '';
}

/** What a finished operation made: its first video's address ('' when none) and why none, when every sample was filtered. */
export interface VeoOutcome {
  video: string;
  filtered: string;
}

/** Gemini's answer: `response.generateVideoResponse.generatedSamples[].video.uri`. */
function geminiOutcome(op: Record<string, unknown>): VeoOutcome {
  const reasons = asObject(asObject(op.response)?.generateVideoResponse)?.raiMediaFilteredReasons;
  return {
    video: veoVideoUri(op),
    filtered: Array.isArray(reasons) && typeof reasons[0] === 'string' ? reasons[0] : '',
  };
}

/**
 * The state of a long-running Veo operation (Gemini's and Vertex's share it; `outcome` reads the response of either):
 * an error is a failure; not done is in progress; done with a video is a success, done without one (every sample
 * filtered) a failure, never a success charged for nothing. Null (asked again next tick) for a 429 or any other failed
 * call, or an answer that is not this operation. `kept` is what the task row keeps of the operation.
 */
export function readVeoOperation(
  status: number,
  body: unknown,
  askedName: string | undefined,
  outcome: (op: Record<string, unknown>) => VeoOutcome,
  kept: (op: Record<string, unknown>) => unknown = (op) => op,
): TaskStateRead[] | null {
  const op = asObject(body);
  if (status < 200 || status >= 300 || !op) return null;
  const name = typeof op.name === 'string' && op.name ? op.name : askedName;
  if (!name || (askedName && name !== askedName)) return null;
  const data = kept(op);
  const error = asObject(op.error);
  if (error) {
    const message = typeof error.message === 'string' && error.message ? error.message : 'task failed';
    return [{ upstreamId: name, status: TASK_STATUS.failure, failReason: message, data }];
  }
  if (op.done !== true) return [{ upstreamId: name, status: TASK_STATUS.inProgress, failReason: '', data }];
  const made = outcome(op);
  if (!made.video)
    return [{ upstreamId: name, status: TASK_STATUS.failure, failReason: made.filtered || 'no video generated', data }];
  return [{ upstreamId: name, status: TASK_STATUS.success, failReason: '', data }];
}

/** The state of an operation from Gemini's `GET {version}/{name}` (readVeoOperation). */
export function readVeoFetch(status: number, body: unknown, askedName?: string): TaskStateRead[] | null {
  return readVeoOperation(status, body, askedName, geminiOutcome);
}
