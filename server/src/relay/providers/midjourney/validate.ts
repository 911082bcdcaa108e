// A submit's body checked and named: the action, the model it is priced under, whether it is charged, and the
// origin task a follow-up acts on. new-api's error descriptions (code 4) are kept; where new-api lets a request
// through with an empty action (priced as "mj_"), crashes on a short customId, or never runs its simple-change
// branch, ours refuses or reads it properly (docs/new-api-compat.md, Midjourney).
import { isMjAction, mjModelName, MJ_UNCHARGED_ACTIONS, type MjAction } from './actions.js';
import { mjRequestError, type MjLocalError } from './errors.js';
import type { MjSubmitRoute } from './routes.js';

export interface MjSubmitPlan {
  action: MjAction;
  modelName: string;
  /** false for INPAINT and CUSTOM_ZOOM: their modal is charged instead */
  charge: boolean;
  /** the task a follow-up acts on (change, simple-change, action, modal, video with a taskId), else null */
  originTaskId: string | null;
  /** UPSCALE / VARIATION index (1–4) of a change, simple-change or action, else null */
  index: number | null;
  /** the prompt to store on the row; a follow-up's is the origin task's (mjOriginCheck gives it) */
  prompt: string;
  /** the client's JSON body, unchanged: buildMjUpstreamRequest filters it */
  body: Record<string, unknown>;
}

export type MjValidation = { ok: true; plan: MjSubmitPlan } | { ok: false; error: MjLocalError };

const CHANGE_ACTIONS: readonly MjAction[] = ['UPSCALE', 'VARIATION', 'REROLL'];

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

/** "<taskId> U1".."U4" | "V1".."V4" | "R" (case-insensitive), as midjourney-proxy's simple-change reads it. */
export function parseSimpleChange(content: string): { taskId: string; action: MjAction; index: number | null } | null {
  const parts = content.trim().split(/\s+/);
  if (parts.length !== 2) return null;
  const [taskId, op] = parts as [string, string];
  const m = /^(?:([uv])([1-4])|(r))$/i.exec(op);
  if (!m) return null;
  if (m[3]) return { taskId, action: 'REROLL', index: null };
  return { taskId, action: m[1]!.toLowerCase() === 'u' ? 'UPSCALE' : 'VARIATION', index: Number(m[2]) };
}

/**
 * A Plus button's customId (`MJ::JOB::upsample::2::<hash>`, `MJ::Outpaint::50::1::<hash>::SOLO`, …) read into the
 * plain action, as new-api's CoverPlusActionToNormalAction, but an id it cannot read is refused instead of crashing
 * (new-api indexes past the end of a short id) or passing with an empty action.
 */
export function parsePlusCustomId(customId: string): { action: MjAction; index: number } | MjLocalError {
  const splits = customId.split('::');
  const name = splits[1] === 'JOB' ? (splits[2] ?? '') : (splits[1] ?? '');
  if (splits.length < 2 || !name) return mjRequestError('unknown_action');
  const indexAt = (): number | null => {
    const n = Number(splits[3]);
    return Number.isInteger(n) && n >= 1 && n <= 4 && /^\d+$/.test(splits[3] ?? '') ? n : null;
  };
  if (name.includes('upsample')) {
    const index = indexAt();
    return index === null ? mjRequestError('index_parse_failed') : { action: 'UPSCALE', index };
  }
  if (name === 'variation') {
    const index = indexAt();
    return index === null ? mjRequestError('index_parse_failed') : { action: 'VARIATION', index };
  }
  if (name === 'low_variation') return { action: 'LOW_VARIATION', index: 1 };
  if (name === 'high_variation') return { action: 'HIGH_VARIATION', index: 1 };
  if (name.includes('pan')) return { action: 'PAN', index: 1 };
  if (name.includes('reroll')) return { action: 'REROLL', index: 1 };
  if (name === 'Outpaint') return { action: 'ZOOM', index: 1 };
  if (name === 'CustomZoom') return { action: 'CUSTOM_ZOOM', index: 1 };
  if (name === 'Inpaint') return { action: 'INPAINT', index: 1 };
  return mjRequestError(`unknown_action:${customId}`);
}

const FIXED_ACTION: Partial<Record<MjSubmitRoute, MjAction>> = {
  imagine: 'IMAGINE',
  describe: 'DESCRIBE',
  blend: 'BLEND',
  shorten: 'SHORTEN',
  'upload-discord-images': 'UPLOAD',
  edits: 'EDITS',
  swap: 'SWAP_FACE',
};

function plan(
  action: MjAction,
  body: Record<string, unknown>,
  originTaskId: string | null,
  index: number | null,
): MjValidation {
  return {
    ok: true,
    plan: {
      action,
      modelName: mjModelName(action),
      charge: !MJ_UNCHARGED_ACTIONS.includes(action),
      originTaskId,
      index,
      prompt: action === 'SWAP_FACE' ? 'InsightFace' : str(body.prompt),
      body,
    },
  };
}

/** Checks a submit route's JSON body (already parsed; anything but an object is bind_request_body_failed). */
export function validateMjSubmit(route: MjSubmitRoute, rawBody: unknown): MjValidation {
  if (!rawBody || typeof rawBody !== 'object' || Array.isArray(rawBody)) {
    return { ok: false, error: mjRequestError('bind_request_body_failed') };
  }
  const body = rawBody as Record<string, unknown>;
  const taskId = str(body.taskId);
  const fail = (description: string): MjValidation => ({ ok: false, error: mjRequestError(description) });
  switch (route) {
    case 'imagine':
      if (!str(body.prompt)) return fail('prompt_is_required');
      return plan('IMAGINE', body, null, null);
    case 'swap':
      if (!str(body.sourceBase64) || !str(body.targetBase64)) return fail('sour_base64_and_target_base64_is_required');
      return plan('SWAP_FACE', body, null, null);
    case 'change': {
      if (!taskId) return fail('task_id_is_required');
      const action = body.action;
      if (action === undefined || action === null || action === '') return fail('action_is_required');
      if (!isMjAction(action) || !CHANGE_ACTIONS.includes(action)) return fail('unknown_action');
      if (action === 'REROLL') return plan(action, body, taskId, null);
      const index = body.index;
      if (index === undefined || index === null || index === 0) return fail('index_is_required');
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 1 || index > 4) {
        return fail('index_parse_failed');
      }
      return plan(action, body, taskId, index);
    }
    case 'simple-change': {
      const content = str(body.content);
      if (!content) return fail('content_is_required');
      const parsed = parseSimpleChange(content);
      if (!parsed) return fail('content_parse_failed');
      return plan(parsed.action, body, parsed.taskId, parsed.index);
    }
    case 'action': {
      const customId = str(body.customId);
      if (!customId) return fail('custom_id_is_required');
      if (!taskId) return fail('task_id_is_required');
      const parsed = parsePlusCustomId(customId);
      if ('code' in parsed) return { ok: false, error: parsed };
      return plan(parsed.action, body, taskId, parsed.index);
    }
    case 'modal':
      if (!taskId) return fail('task_id_is_required');
      return plan('MODAL', body, taskId, null);
    case 'video':
      // a video from a task's image is a follow-up; one from an uploaded image stands alone, as new-api lets it
      return plan('VIDEO', body, taskId || null, null);
    default:
      return plan(FIXED_ACTION[route]!, body, null, null);
  }
}

/** The origin task of a follow-up as the integrator loads it: the user's own midjourneys row and its channel. */
export interface MjOrigin {
  status: string;
  prompt: string;
  channelId: number;
  /** the channel's status (1 enabled), or null when the channel no longer exists */
  channelStatus: number | null;
}

export const MJ_ORIGIN_CHANNEL_DISABLED = '该任务所属渠道已被禁用';

/**
 * Whether a follow-up may go on: the origin task exists (user-scoped), has succeeded when
 * MjActionCheckSuccessEnabled is on (a modal may act on a task waiting for it), and its channel is still there and
 * enabled. On success: the channel to pin the request to and the prompt to store on the new row.
 */
export function mjOriginCheck(
  plan: MjSubmitPlan,
  origin: MjOrigin | null | undefined,
  actionCheckSuccess: boolean,
): { ok: true; channelId: number; prompt: string } | { ok: false; error: MjLocalError } {
  if (!origin) return { ok: false, error: mjRequestError('task_not_found') };
  if (actionCheckSuccess && plan.action !== 'MODAL' && origin.status !== 'SUCCESS') {
    return { ok: false, error: mjRequestError('task_status_not_success') };
  }
  if (origin.channelStatus === null) return { ok: false, error: mjRequestError('get_channel_info_failed') };
  if (origin.channelStatus !== 1) return { ok: false, error: mjRequestError(MJ_ORIGIN_CHANNEL_DISABLED) };
  return { ok: true, channelId: origin.channelId, prompt: origin.prompt };
}
