// midjourney-proxy's task JSON (GET task/{id}/fetch, POST task/list-by-condition) read into midjourneys columns, the
// poller's update of one row, and a row given back to the client in new-api's MidjourneyDto shape.
import { MJ_STATUS, MJ_TASK_TIMEOUT_MS, MJ_TERMINAL_STATUSES } from './actions.js';

export interface MjTaskState {
  id: string;
  action: string;
  prompt: string;
  promptEn: string;
  description: string;
  state: string;
  submitTime: number;
  startTime: number;
  finishTime: number;
  imageUrl: string;
  videoUrl: string;
  videoUrls: { url: string }[];
  status: string;
  progress: string;
  failReason: string;
  /** null when the upstream sent none (the row's buttons are then left as they are) */
  buttons: unknown[] | null;
  properties: Record<string, unknown> | null;
}

const s = (v: unknown): string => (typeof v === 'string' ? v : '');
const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? Math.trunc(v) : 0);

/** One task item, or null when it is not an object with an id. */
export function readMjTask(item: unknown): MjTaskState | null {
  if (!item || typeof item !== 'object' || Array.isArray(item)) return null;
  const t = item as Record<string, unknown>;
  const id = s(t.id);
  if (!id) return null;
  const videoUrls = Array.isArray(t.videoUrls)
    ? (t.videoUrls as unknown[])
        .map((v) => (v && typeof v === 'object' ? s((v as Record<string, unknown>).url) : ''))
        .filter((url) => url)
        .map((url) => ({ url }))
    : [];
  const props = t.properties;
  return {
    id,
    action: s(t.action),
    prompt: s(t.prompt),
    promptEn: s(t.promptEn),
    description: s(t.description),
    state: s(t.state),
    submitTime: n(t.submitTime),
    startTime: n(t.startTime),
    finishTime: n(t.finishTime),
    imageUrl: s(t.imageUrl),
    videoUrl: s(t.videoUrl),
    videoUrls,
    status: s(t.status),
    progress: s(t.progress),
    failReason: s(t.failReason),
    buttons: Array.isArray(t.buttons) ? (t.buttons as unknown[]) : null,
    properties: props && typeof props === 'object' && !Array.isArray(props) ? (props as Record<string, unknown>) : null,
  };
}

/** A list-by-condition answer (an array of tasks); items it cannot read are left out. Null when not an array. */
export function readMjTaskList(body: unknown): MjTaskState[] | null {
  if (!Array.isArray(body)) return null;
  const out: MjTaskState[] = [];
  for (const item of body) {
    const t = readMjTask(item);
    if (t) out.push(t);
  }
  return out;
}

/** The midjourneys columns a task state fills (video_url and video_urls are the columns new-api added). */
export interface MjTaskRowFields {
  code: number;
  progress: string;
  prompt_en: string;
  state: string;
  // the three times only when the upstream gives them: a missing one never erases the gateway's (the timeout
  // counts from submit_time; new-api overwrites it with whatever the upstream sends, 0 included)
  submit_time?: number;
  start_time?: number;
  finish_time?: number;
  image_url: string;
  video_url: string;
  video_urls: string;
  status: string;
  fail_reason: string;
  buttons?: string;
  properties?: string;
}

/** A task state as midjourneys columns, as new-api's poller writes them (buttons/properties only when sent). */
export function mjTaskRowFields(t: MjTaskState): MjTaskRowFields {
  const fields: MjTaskRowFields = {
    code: 1,
    progress: t.progress,
    prompt_en: t.promptEn,
    state: t.state,
    image_url: t.imageUrl,
    video_url: t.videoUrl,
    video_urls: t.videoUrls.length ? JSON.stringify(t.videoUrls) : '',
    status: t.status,
    fail_reason: t.failReason,
  };
  if (t.submitTime > 0) fields.submit_time = t.submitTime;
  if (t.startTime > 0) fields.start_time = t.startTime;
  if (t.finishTime > 0) fields.finish_time = t.finishTime;
  if (t.buttons) fields.buttons = JSON.stringify(t.buttons);
  if (t.properties) fields.properties = JSON.stringify(t.properties);
  return fields;
}

/** The row as the poller holds it before asking the upstream. */
export interface MjRowSnapshot {
  mj_id: string;
  status: string;
  progress: string;
  submit_time: number;
  quota: number;
}

export interface MjRowUpdate {
  /** the columns to write */
  set: Partial<MjTaskRowFields>;
  /**
   * the compare-and-set: write only where the row's status is still this one (and not terminal); of two pollers or
   * a poller and a callback, one wins
   */
  expectStatus: string;
  /** the row fails with this write: refund row.quota to the user and the token, once, if the write won */
  refund: boolean;
}

export const MJ_TIMEOUT_REASON = '上游任务超时（超过1小时）';

function failure(row: MjRowSnapshot, set: Partial<MjTaskRowFields>, reason: string, now: number): MjRowUpdate {
  return {
    // the status is made FAILURE with the reason, so the stored state agrees with the refund (new-api's B6)
    set: { ...set, status: MJ_STATUS.failure, progress: '100%', fail_reason: reason, finish_time: now },
    expectStatus: row.status,
    refund: row.quota > 0,
  };
}

/**
 * What one poll changes on a row: null when nothing (a terminal row, or the same state again). A task the upstream
 * reports as failed, or one still unfinished past the timeout (whether the upstream listed it or not), fails.
 */
export function planMjPollUpdate(
  row: MjRowSnapshot,
  state: MjTaskState | undefined,
  now: number,
  timeoutMs = MJ_TASK_TIMEOUT_MS,
): MjRowUpdate | null {
  if (MJ_TERMINAL_STATUSES.includes(row.status)) return null;
  // a row without the upstream's id cannot be asked about (new-api fails it at once, with no reason)
  if (!row.mj_id) return failure(row, {}, '', now);
  const set = state ? mjTaskRowFields(state) : {};
  if (state?.status === MJ_STATUS.success) {
    return { set: { ...set, progress: '100%' }, expectStatus: row.status, refund: false };
  }
  if (state?.status === MJ_STATUS.failure || (state && state.failReason)) {
    return failure(row, set, state.failReason, now);
  }
  if (now - row.submit_time > timeoutMs) return failure(row, set, MJ_TIMEOUT_REASON, now);
  if (!state) return null;
  // the same state again may still carry new fields (image URL, buttons); writing them again is harmless
  return { set, expectStatus: row.status, refund: false };
}

/** A polled row and its update. */
export interface MjPollPlan<R extends MjRowSnapshot> {
  row: R;
  update: MjRowUpdate;
}

/**
 * One channel's batch: each row paired with the upstream's item of the same id (an item for an id not asked about
 * is ignored, where new-api's Suno poller crashes), and only the rows that change.
 */
export function planMjPollBatch<R extends MjRowSnapshot>(
  rows: readonly R[],
  states: readonly MjTaskState[],
  now: number,
  timeoutMs = MJ_TASK_TIMEOUT_MS,
): MjPollPlan<R>[] {
  const byId = new Map(states.map((s) => [s.id, s]));
  const plans: MjPollPlan<R>[] = [];
  for (const row of rows) {
    const update = planMjPollUpdate(row, row.mj_id ? byId.get(row.mj_id) : undefined, now, timeoutMs);
    if (update) plans.push({ row, update });
  }
  return plans;
}

/** The midjourneys row as read for the client. */
export interface MjRow {
  mj_id: string;
  action: string;
  prompt: string;
  prompt_en: string;
  description: string;
  state: string;
  submit_time: number;
  start_time: number;
  finish_time: number;
  image_url: string;
  video_url: string;
  video_urls: string;
  status: string;
  progress: string;
  fail_reason: string;
  buttons: string;
  properties: string;
}

export interface MjClientOptions {
  /** MjForwardUrlEnabled */
  forwardUrl: boolean;
  /** the ServerAddress option, without a trailing slash */
  serverAddress: string;
  /** the cache-busting value added to an unfinished task's forwarded URL (new-api: the time in ns) */
  rand: () => string;
}

function parseJson<T>(text: string, check: (v: unknown) => v is T): T | null {
  if (!text) return null;
  try {
    const v: unknown = JSON.parse(text);
    return check(v) ? v : null;
  } catch {
    return null;
  }
}

const isArray = (v: unknown): v is unknown[] => Array.isArray(v);
const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** new-api's MidjourneyDto for a row (fetch and list-by-condition answers). */
export function mjRowToClient(row: MjRow, options: MjClientOptions): Record<string, unknown> {
  let imageUrl = row.image_url;
  if (row.image_url && options.forwardUrl) {
    imageUrl = `${options.serverAddress.replace(/\/+$/, '')}/mj/image/${row.mj_id}`;
    if (row.status !== MJ_STATUS.success) imageUrl += `?rand=${options.rand()}`;
  }
  const props = parseJson(row.properties, isObject);
  return {
    id: row.mj_id,
    action: row.action,
    customId: '',
    botType: '',
    prompt: row.prompt,
    promptEn: row.prompt_en,
    description: row.description,
    state: row.state,
    submitTime: row.submit_time,
    startTime: row.start_time,
    finishTime: row.finish_time,
    imageUrl,
    videoUrl: row.video_url,
    videoUrls: parseJson(row.video_urls, isArray),
    status: row.status,
    progress: row.progress,
    failReason: row.fail_reason,
    buttons: parseJson(row.buttons, isArray),
    maskBase64: '',
    properties: props ? { finalPrompt: s(props.finalPrompt), finalZhPrompt: s(props.finalZhPrompt) } : null,
  };
}
