// Suno (channel type 36) as an asynchronous task vendor: what a submit may carry, the upstream's answers read into
// the task engine's terms. A small interface of its own (validate, model name, submit answer, fetch answer), so that
// it can move into a provider manifest's task slot unchanged. The HTTP calls and the money are the engine's.
import { TASK_STATUS } from '../../../services/tasks/status.js';

export const SUNO_ACTIONS = ['MUSIC', 'LYRICS'] as const;
export type SunoAction = (typeof SUNO_ACTIONS)[number];

/** new-api's SunoSubmitReq */
export interface SunoSubmitRequest {
  gpt_description_prompt?: string;
  prompt?: string;
  mv?: string;
  title?: string;
  tags?: string;
  continue_at?: number;
  task_id?: string;
  continue_clip_id?: string;
  make_instrumental?: boolean;
}

/** the model a MUSIC default goes to when the request names none (new-api's actionValidate) */
export const SUNO_DEFAULT_MV = 'chirp-v3-0';

export type SunoValidation = { ok: true; action: SunoAction; request: SunoSubmitRequest } | { ok: false; code: string };

const STRING_FIELDS = [
  'gpt_description_prompt',
  'prompt',
  'mv',
  'title',
  'tags',
  'task_id',
  'continue_clip_id',
] as const;

/**
 * Checks a submit as new-api does (MUSIC defaults `mv`, LYRICS needs a prompt, other actions are refused) and also
 * refuses fields of the wrong type, which new-api's JSON binding refuses too. The codes are new-api's.
 */
export function validateSunoSubmit(action: string, body: unknown): SunoValidation {
  const upper = action.toUpperCase();
  if (!(SUNO_ACTIONS as readonly string[]).includes(upper)) return { ok: false, code: 'invalid_action' };
  if (!body || typeof body !== 'object' || Array.isArray(body)) return { ok: false, code: 'invalid_request' };
  const raw = body as Record<string, unknown>;
  const request: SunoSubmitRequest = {};
  for (const f of STRING_FIELDS) {
    const v = raw[f];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'string') return { ok: false, code: 'invalid_request' };
    request[f] = v;
  }
  if (raw.continue_at !== undefined && raw.continue_at !== null) {
    if (typeof raw.continue_at !== 'number' || !Number.isFinite(raw.continue_at)) {
      return { ok: false, code: 'invalid_request' };
    }
    request.continue_at = raw.continue_at;
  }
  if (raw.make_instrumental !== undefined && raw.make_instrumental !== null) {
    if (typeof raw.make_instrumental !== 'boolean') return { ok: false, code: 'invalid_request' };
    request.make_instrumental = raw.make_instrumental;
  }
  const sunoAction = upper as SunoAction;
  if (sunoAction === 'MUSIC' && !request.mv) request.mv = SUNO_DEFAULT_MV;
  if (sunoAction === 'LYRICS' && !request.prompt) return { ok: false, code: 'prompt_empty' };
  return { ok: true, action: sunoAction, request };
}

/** The per-call price's model name: suno_music or suno_lyrics. */
export function sunoModelName(action: SunoAction): string {
  return `suno_${action.toLowerCase()}`;
}

/** Suno's answer envelope, for the upstream's answers and the gateway's own. */
export interface SunoEnvelope<T> {
  code: string;
  message: string;
  data: T;
}

export function sunoEnvelope<T>(code: string, message: string, data: T): SunoEnvelope<T> {
  return { code, message, data };
}

/** The upstream's task id from a submit answer `{code:"success", data:"<id>"}`, or null when it did not accept. */
export function readSunoSubmitAnswer(body: unknown): string | null {
  if (!body || typeof body !== 'object') return null;
  const { code, data } = body as Record<string, unknown>;
  if (code !== 'success' || typeof data !== 'string' || !data) return null;
  return data;
}

/** One task's state as the upstream's fetch answer gives it. */
export interface SunoTaskState {
  upstreamId: string;
  status: string;
  failReason: string;
  /** the upstream's item, stored as the task's data */
  data: unknown;
}

const STATUS_OF: Record<string, string> = {
  NOT_START: TASK_STATUS.notStart,
  SUBMITTED: TASK_STATUS.submitted,
  QUEUED: TASK_STATUS.queued,
  IN_PROGRESS: TASK_STATUS.inProgress,
  FAILURE: TASK_STATUS.failure,
  SUCCESS: TASK_STATUS.success,
};

/**
 * The items of a fetch answer `{code:"success", data:[{task_id, status, fail_reason, …}]}`; items without an id are
 * left out and a status the engine does not know reads as UNKNOWN (the task then stays unfinished). Null when the
 * answer is not a success.
 */
export function readSunoFetchAnswer(body: unknown): SunoTaskState[] | null {
  if (!body || typeof body !== 'object') return null;
  const { code, data } = body as Record<string, unknown>;
  if (code !== 'success' || !Array.isArray(data)) return null;
  const states: SunoTaskState[] = [];
  for (const item of data as unknown[]) {
    if (!item || typeof item !== 'object') continue;
    const it = item as Record<string, unknown>;
    if (typeof it.task_id !== 'string' || !it.task_id) continue;
    states.push({
      upstreamId: it.task_id,
      status: (typeof it.status === 'string' && STATUS_OF[it.status]) || TASK_STATUS.unknown,
      failReason: typeof it.fail_reason === 'string' ? it.fail_reason : '',
      data: it.data ?? null,
    });
  }
  return states;
}
