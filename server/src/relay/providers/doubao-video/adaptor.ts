// Doubao's video models (Seedance, on VolcEngine Ark) read into the task engine's terms: a submit in new-api's generic
// shape ({model, prompt, image, images, duration, seconds, metadata}) checked and turned into Ark's content generation
// task ({model, content: [image_url…, text], …}), its price units (one call × new-api's price ratio of the output
// resolution and of a video input, for the Seedance 2.0 models it has a price table for), the task states mapped.
import { TASK_STATUS } from '../../../services/tasks/status.js';
import { reportedUnits } from '../task-units.js';
import type { TaskPriceUnits, TaskStateRead } from '../types.js';

const RESOLUTIONS = new Set(['480p', '720p', '1080p']);
/** Ark's task fields `metadata` may set (the model, the prompt and the images are checked here, never replaced) */
const PASSED = new Set([
  'callback_url',
  'return_last_frame',
  'service_tier',
  'execution_expires_after',
  'generate_audio',
  'draft',
  'tools',
  'safety_identifier',
  'priority',
  'ratio',
  'frames',
  'seed',
  'camera_fixed',
  'watermark',
]);
const CONTENT_TYPES = new Set(['image_url', 'video_url', 'audio_url']);

/**
 * new-api's price ratios in millionths (floored) over each model's base price (480p or 720p without a video input),
 * from Ark's price list of 2026-01-28 in yuan per million tokens: 2.0 is 46 (28 with a video input, 51 at 1080p, 31 at
 * 1080p with a video input), 2.0 fast 37 (22 with a video input, no 1080p: priced at its base). Other models: 1.
 */
const RATIO_PPM: Record<string, Record<string, number>> = {
  'doubao-seedance-2-0-260128': { video: 608_695, '1080p': 1_108_695, '1080p+video': 673_913 },
  'doubao-seedance-2-0-fast-260128': { video: 594_594 },
};

export type DoubaoCheck = { ok: true; model: string; body: Record<string, unknown> } | { ok: false; message: string };

function asObject(v: unknown): Record<string, unknown> | null {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}

function secondsOf(v: unknown): number | null | undefined {
  if (v === undefined || v === null || v === '' || v === 0) return undefined;
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\d{1,2}$/.test(v.trim()) ? Number(v) : NaN;
  return Number.isInteger(n) && n >= 1 && n <= 60 ? n : null;
}

/** metadata.content's media items ({type, image_url|video_url|audio_url: {url}, role}), text items dropped */
function mediaOf(content: unknown): Record<string, unknown>[] | null {
  if (content === undefined || content === null) return [];
  if (!Array.isArray(content)) return null;
  const media: Record<string, unknown>[] = [];
  for (const raw of content) {
    const item = asObject(raw);
    if (!item || typeof item.type !== 'string') return null;
    if (item.type === 'text') continue;
    const url = asObject(item[item.type])?.url;
    if (!CONTENT_TYPES.has(item.type) || typeof url !== 'string' || !url) return null;
    if (item.role !== undefined && typeof item.role !== 'string') return null;
    media.push({ type: item.type, [item.type]: { url }, ...(item.role ? { role: item.role } : {}) });
  }
  return media;
}

/**
 * Checks a generic submit: a prompt, a model, whole seconds (`duration`, else `seconds`, else `metadata.duration`),
 * string images, Ark's resolution (480p, 720p, 1080p) and media items in `metadata`, with its other task fields. The
 * model is the one priced: `metadata` cannot replace it (new-api lets it).
 */
export function checkDoubaoSubmit(body: unknown): DoubaoCheck {
  const b = asObject(body);
  if (!b) return { ok: false, message: '无效的请求体' };
  if (typeof b.model !== 'string' || !b.model) return { ok: false, message: 'model 不能为空' };
  if (typeof b.prompt !== 'string' || !b.prompt.trim()) return { ok: false, message: 'prompt 不能为空' };
  const meta = b.metadata === undefined || b.metadata === null ? {} : asObject(b.metadata);
  if (!meta) return { ok: false, message: 'metadata 必须是对象' };
  const images = Array.isArray(b.images) && b.images.length ? b.images : b.image ? [b.image] : [];
  if (!images.every((i) => typeof i === 'string' && i)) return { ok: false, message: 'image 必须是字符串' };
  const media = mediaOf(meta.content);
  if (!media) return { ok: false, message: 'content 无效' };
  const picked = [b.duration, b.seconds, meta.duration].map(secondsOf);
  if (picked.includes(null)) return { ok: false, message: '时长必须是 1 到 60 的整数秒' };
  const duration = picked.find((v) => v !== undefined);
  const resolution = meta.resolution === undefined ? undefined : String(meta.resolution).toLowerCase();
  if (resolution !== undefined && !RESOLUTIONS.has(resolution))
    return { ok: false, message: 'resolution 必须是 480p、720p 或 1080p' };
  const payload: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(meta)) if (PASSED.has(k)) payload[k] = v;
  const content = [
    ...images.map((url) => ({ type: 'image_url', image_url: { url } })),
    ...media,
    { type: 'text', text: b.prompt },
  ];
  return {
    ok: true,
    model: b.model,
    body: {
      model: b.model,
      content,
      ...payload,
      ...(resolution ? { resolution } : {}),
      ...(duration ? { duration } : {}),
    },
  };
}

/** One call × the model's ratio for the output resolution (720p when unnamed) and a video input among the content. */
export function doubaoPriceUnits(body: Record<string, unknown>): TaskPriceUnits {
  const table = RATIO_PPM[String(body.model)];
  const hasVideo = Array.isArray(body.content) && body.content.some((c) => asObject(c)?.type === 'video_url');
  const hd = body.resolution === '1080p';
  const key = hd ? (hasVideo ? '1080p+video' : '1080p') : hasVideo ? 'video' : '';
  const ratioPpm = (table && key && table[key]) || 1_000_000;
  return { units: 1, ratioPpm, ratios: ratioPpm === 1_000_000 ? {} : { video_input: ratioPpm / 1_000_000 } };
}

/** Ark's submit answer `{id}`; the task's id, or null when it refused. */
export function readDoubaoSubmit(status: number, body: unknown): string | null {
  const id = asObject(body)?.id;
  if (status < 200 || status >= 300 || typeof id !== 'string' || !id) return null;
  return id;
}

const STATUS_OF: Record<string, { status: string; progress: string }> = {
  pending: { status: TASK_STATUS.queued, progress: '10%' },
  queued: { status: TASK_STATUS.queued, progress: '10%' },
  processing: { status: TASK_STATUS.inProgress, progress: '50%' },
  running: { status: TASK_STATUS.inProgress, progress: '50%' },
  succeeded: { status: TASK_STATUS.success, progress: '100%' },
  failed: { status: TASK_STATUS.failure, progress: '100%' },
  cancelled: { status: TASK_STATUS.failure, progress: '100%' },
  expired: { status: TASK_STATUS.failure, progress: '100%' },
};

/** A finished task's video address, '' when it has none. */
export function doubaoVideoUrl(data: unknown): string {
  const url = asObject(asObject(data)?.content)?.video_url;
  return typeof url === 'string' ? url : '';
}

/**
 * The state of one task from `GET …/tasks/{id}`. Null (asked again next tick) for a 429, any other failure, an
 * answer about another task, or a status Ark does not define (new-api counts it as running; never a success here).
 * A success without a video is a failure, never a charge for nothing.
 */
export function readDoubaoFetch(status: number, body: unknown, askedId?: string): TaskStateRead[] | null {
  const b = asObject(body);
  if (status < 200 || status >= 300 || !b) return null;
  const id = typeof b.id === 'string' && b.id ? b.id : askedId;
  if (!id || (askedId && id !== askedId)) return null;
  const mapped = typeof b.status === 'string' ? STATUS_OF[b.status] : undefined;
  if (!mapped) return null;
  if (mapped.status === TASK_STATUS.success && !doubaoVideoUrl(b))
    return [{ upstreamId: id, status: TASK_STATUS.failure, failReason: 'no video generated', data: b }];
  const message = asObject(b.error)?.message;
  const reason = typeof message === 'string' && message ? message : `task ${String(b.status)}`;
  // the tokens Ark billed for the video (new-api's TotalTokens), read once the task has succeeded
  const used = mapped.status === TASK_STATUS.success ? reportedUnits(asObject(b.usage)?.total_tokens) : undefined;
  return [
    {
      upstreamId: id,
      status: mapped.status,
      failReason: mapped.status === TASK_STATUS.failure ? reason : '',
      data: b,
      progress: mapped.progress,
      ...(used ? { usedUnits: used } : {}),
    },
  ];
}
