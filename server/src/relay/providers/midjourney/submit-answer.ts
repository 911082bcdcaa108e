// midjourney-proxy's submit answer `{code, description, result, properties}` read into what the gateway does: charge
// or not, disable the channel or not, what the client receives and the midjourneys row to insert. new-api's codes:
// 1 submitted, 21 exists (charged; at SUCCESS the row is stored finished; rewritten to 1 except for INPAINT and
// CUSTOM_ZOOM), 22 queued (charged, rewritten to 1), 3 no account instance (the channel is disabled when automatic
// disabling is on), anything else not charged. Only an HTTP 200 is charged, as new-api.
import { MJ_STATUS, type MjAction } from './actions.js';
import { mjErrorAnswer, MJ_CODE } from './errors.js';

export interface MjSubmitContext {
  action: MjAction;
  /** the plan's charge: false for INPAINT and CUSTOM_ZOOM */
  chargeable: boolean;
  /** the channel's auto_ban and the AutomaticDisableChannelEnabled option, both on */
  autoDisable: boolean;
  /** ms, for the row's times */
  now: number;
}

/** The midjourneys columns a submit decides (user, channel, prompt and quota are the integrator's). */
export interface MjSubmitRow {
  code: number;
  mj_id: string;
  description: string;
  fail_reason: string;
  status: string;
  progress: string;
  image_url: string;
  submit_time: number;
  start_time: number;
  finish_time: number;
}

export interface MjSubmitDecision {
  /** take the reserved price; when false the reservation is released and the row's quota is 0 */
  charge: boolean;
  /** set the channel to status 2 with reason "No available account instance" */
  disableChannel: boolean;
  clientStatus: number;
  /** JSON text for the client */
  clientBody: string;
  /** midjourney-proxy's task id ('' when it gave none) */
  upstreamTaskId: string;
  /** the code as the upstream gave it (0 when it gave none) */
  code: number;
  /** the row to insert, or null when the answer could not be read (nothing is stored, as new-api) */
  row: MjSubmitRow | null;
}

export const MJ_DISABLE_REASON = 'No available account instance';

const ACCEPTED: readonly number[] = [MJ_CODE.submitted, MJ_CODE.exists, MJ_CODE.queued];

function unreadable(description: string): MjSubmitDecision {
  const answer = mjErrorAnswer({ code: MJ_CODE.unknown, description });
  return {
    charge: false,
    disableChannel: false,
    clientStatus: answer.status,
    clientBody: JSON.stringify(answer.body),
    upstreamTaskId: '',
    code: 0,
    row: null,
  };
}

export function readMjSubmitAnswer(httpStatus: number, text: string, ctx: MjSubmitContext): MjSubmitDecision {
  if (!text.trim()) return unreadable('empty_response_body');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return unreadable('unmarshal_response_body_failed');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return unreadable('unmarshal_response_body_failed');
  }
  const body = parsed as Record<string, unknown>;
  const code = typeof body.code === 'number' && Number.isInteger(body.code) ? body.code : 0;
  const description = typeof body.description === 'string' ? body.description : '';
  // an upload answers with a list of image URLs as its result, and no task
  const upstreamTaskId = typeof body.result === 'string' ? body.result : '';
  // an accepted submit without a task id could never be followed (nor refunded by the poller): not charged
  const accepted = ACCEPTED.includes(code) && (upstreamTaskId !== '' || ctx.action === 'UPLOAD');
  const row: MjSubmitRow = {
    code,
    mj_id: upstreamTaskId,
    description,
    fail_reason: '',
    status: '',
    progress: '0%',
    image_url: '',
    submit_time: ctx.now,
    start_time: 0,
    finish_time: 0,
  };
  if (!accepted) {
    // stored finished, so that the poller never asks about it and no refund can follow an uncharged submit
    Object.assign(row, { fail_reason: description, status: MJ_STATUS.failure, progress: '100%', finish_time: ctx.now });
  }
  let client = body;
  if (accepted && code === MJ_CODE.exists) {
    const props = body.properties;
    if (props && typeof props === 'object') {
      const { status, imageUrl } = props as Record<string, unknown>;
      if (typeof status === 'string' && typeof imageUrl === 'string') {
        row.status = status;
        row.image_url = imageUrl;
        if (status === MJ_STATUS.success)
          Object.assign(row, { progress: '100%', start_time: ctx.now, finish_time: ctx.now });
      }
    }
    if (ctx.action !== 'INPAINT' && ctx.action !== 'CUSTOM_ZOOM') client = { ...body, code: MJ_CODE.submitted };
  }
  if (accepted && code === MJ_CODE.queued) client = { ...body, code: MJ_CODE.submitted };
  if (code === MJ_CODE.submitted && ctx.action === 'UPLOAD') {
    Object.assign(row, { status: MJ_STATUS.success, progress: '100%', finish_time: ctx.now });
  }
  const charge = accepted && ctx.chargeable && httpStatus === 200;
  return {
    charge,
    disableChannel: code === MJ_CODE.noAccountInstance && ctx.autoDisable,
    clientStatus: httpStatus,
    clientBody: client === body ? text : JSON.stringify(client),
    upstreamTaskId,
    code,
    row,
  };
}
