// Pure rules of the drawing log (/midjourney) and the task log (/task): spec §2, §4 statuses and actions, §9 duration
// colours. The drawing log's times are milliseconds (midjourney-proxy's), the task log's seconds (new-api's tasks).
export interface MjRow {
  id: number;
  code: number;
  user_id: number;
  username?: string;
  channel_id: number;
  channel_name?: string;
  action: string;
  mj_id: string;
  prompt: string;
  prompt_en: string;
  description: string;
  submit_time: number;
  start_time: number;
  finish_time: number;
  image_url: string;
  video_url?: string;
  status: string;
  progress: string;
  fail_reason: string;
  quota: number;
  buttons?: string;
  properties?: string;
}

export interface TaskRow {
  id: number;
  task_id: string;
  platform: string;
  user_id: number;
  username?: string;
  channel_id: number;
  channel_name?: string;
  action: string;
  status: string;
  fail_reason: string;
  result_url: string;
  /** the server's content route of a finished video whose result needs the gateway's key (Sora's); '' else */
  content_url?: string;
  submit_time: number;
  start_time: number;
  finish_time: number;
  progress: string;
  quota: number;
  created_at: number;
  properties?: unknown;
  data?: unknown;
}

/** The task platforms that make videos (the server's video routes'); a finished one of them has a player. */
export const VIDEO_PLATFORMS: readonly string[] = [
  'sora',
  'kling',
  'veo',
  'vidu',
  'doubao-video',
  'hailuo',
  'wan',
  'jimeng',
  'vertex-veo',
];

/**
 * Where the player reads a finished video: the gateway's content route when the server gives one (read with the
 * console session; the server gives it for every video platform), else the upstream's address of the result; null
 * for any other task, an unfinished one, or a result that is no web address (the relay's /v1 paths need an API key).
 */
export function videoSource(row: TaskRow): { url: string; viaConsole: boolean } | null {
  if (row.status !== 'SUCCESS' || !VIDEO_PLATFORMS.includes(row.platform)) return null;
  if (row.content_url) return { url: row.content_url, viaConsole: true };
  if (/^https?:\/\//i.test(row.result_url)) return { url: row.result_url, viaConsole: false };
  return null;
}

/** A video's length and size as its submit named them (tasks.properties: seconds or duration, size or resolution). */
export function videoShape(row: TaskRow): { seconds: number | null; size: string } {
  const props = (row.properties && typeof row.properties === 'object' ? row.properties : {}) as Record<string, unknown>;
  const rawSeconds = props.seconds ?? props.duration;
  const seconds = typeof rawSeconds === 'number' || typeof rawSeconds === 'string' ? Number(rawSeconds) : NaN;
  const rawSize = props.size ?? props.resolution;
  return {
    seconds: Number.isFinite(seconds) && seconds > 0 ? seconds : null,
    size: typeof rawSize === 'string' || typeof rawSize === 'number' ? String(rawSize) : '',
  };
}

export interface Page<T> {
  items: T[];
  total: number;
  page: number;
  page_size: number;
}

/** Seconds from submit to finish; null while unfinished (no colour, no number). */
export function durationSeconds(submit: number, finish: number, unit: 'ms' | 's'): number | null {
  if (!submit || !finish || finish < submit) return null;
  const secs = unit === 'ms' ? (finish - submit) / 1000 : finish - submit;
  return Math.round(secs * 10) / 10;
}

/** Spec §9: a drawing or task that took over 60 s is red, else green. */
export function durationColor(seconds: number): 'green' | 'red' {
  return seconds > 60 ? 'red' : 'green';
}

/** A progress such as "40%" as a number for the circle; null when it is not a percentage. */
export function progressPercent(progress: string): number | null {
  const m = /^(\d{1,3})(?:\.\d+)?%$/.exec(progress.trim());
  if (!m) return null;
  return Math.min(100, Number(m[1]));
}

/** Tag colours of the statuses (spec §4), shared by both logs. */
export const STATUS_COLORS: Record<string, string> = {
  SUCCESS: 'green',
  NOT_START: 'default',
  SUBMITTED: 'gold',
  QUEUED: 'orange',
  IN_PROGRESS: 'blue',
  FAILURE: 'red',
  MODAL: 'purple',
  UNKNOWN: 'default',
};

export const MJ_STATUSES = ['SUCCESS', 'NOT_START', 'SUBMITTED', 'IN_PROGRESS', 'FAILURE', 'MODAL'] as const;
export const TASK_STATUSES = [
  'SUCCESS',
  'NOT_START',
  'SUBMITTED',
  'IN_PROGRESS',
  'FAILURE',
  'QUEUED',
  'UNKNOWN',
] as const;
export const MJ_ACTIONS = [
  'IMAGINE',
  'UPSCALE',
  'VARIATION',
  'HIGH_VARIATION',
  'LOW_VARIATION',
  'PAN',
  'DESCRIBE',
  'BLEND',
  'UPLOAD',
  'SHORTEN',
  'REROLL',
  'INPAINT',
  'ZOOM',
  'CUSTOM_ZOOM',
  'MODAL',
  'SWAP_FACE',
  'VIDEO',
  'EDITS',
] as const;
export const TASK_ACTIONS = ['MUSIC', 'LYRICS'] as const;

/** Spec §4 submit codes; others show as the number. */
export const SUBMIT_CODES: Record<number, string> = { 1: 'code.1', 21: 'code.21', 22: 'code.22', 0: 'code.0' };

export interface Filters {
  channel_id: string;
  id: string;
  status: string;
  action: string;
  /** the task log's platform (suno, or a channel type as new-api writes it); unused by the drawing log */
  platform: string;
  /** unix seconds; 0 for none */
  start: number;
  end: number;
}

/**
 * The list's query parameters: the drawing log's times in milliseconds, the task log's in seconds; channel only for an
 * admin; empty fields left out.
 */
export function buildQuery(
  kind: 'mj' | 'task',
  f: Filters,
  admin: boolean,
  page: number,
  pageSize: number,
): Record<string, string | number> {
  const q: Record<string, string | number> = { p: page, page_size: pageSize };
  const scale = kind === 'mj' ? 1000 : 1;
  if (f.start) q.start_timestamp = f.start * scale;
  if (f.end) q.end_timestamp = f.end * scale;
  if (f.id.trim()) q[kind === 'mj' ? 'mj_id' : 'task_id'] = f.id.trim();
  if (f.status) q.status = f.status;
  if (f.action) q.action = f.action;
  if (kind === 'task' && f.platform.trim()) q.platform = f.platform.trim();
  if (admin && f.channel_id.trim()) q.channel_id = f.channel_id.trim();
  return q;
}

/** The row's result as indented JSON for the detail modal. */
export function prettyJson(value: unknown): string {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2);
}
