// A task submit (POST /suno/submit/:action; POST /v1/videos and POST /v1/video/generations, routed by their model to
// a channel of any video platform; a video's remix): the relay pipeline's shared steps (admit,
// route, limit, reserve) around one upstream call, with the platform's task adaptor (providers/<vendor>/, the
// manifest's `task` slot) for what is the vendor's. The charge is the per-call price (ModelPrice[model] × group
// ratio), or for a platform that prices by units (a video's seconds × size ratio) that price × its units, computed
// once (services/pricing perUnitTaskQuota); it is reserved before the call; when the upstream accepts, the task row
// is written and the reservation settled with its consume log row (one commit, as every relay request); when it
// refuses or cannot be reached, the reservation goes back and nothing is written. A follow-up (a remix) is pinned
// to its origin's channel and model. The answers are Suno's envelope unless the caller gives its own (OpenAI's).
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.js';
import type { HttpResponse } from '../../lib/http-response.js';
import { nowSec } from '../../lib/time.js';
import { perUnitTaskQuota, taskQuota, unsetRatioMessage } from '../../services/pricing/index.js';
import { TASK_STATUS } from '../../services/tasks/status.js';
import { consumeLogRow } from '../consume-log.js';
import { RelayError } from '../errors.js';
import type { RelayMode } from '../modes/mode.js';
import {
  taskPlatformOf,
  type TaskAdaptor,
  type TaskPriceUnits,
  type TaskRequest,
  type TaskSubmitRaw,
} from '../providers/index.js';
import type { RelayRequest } from '../request.js';
import type { RelayServices } from '../services.js';
import { admit } from '../pipeline/admit.js';
import { authenticate } from '../pipeline/authenticate.js';
import { holdChannel } from '../pipeline/channel-cap.js';
import { limit, releaseLimits } from '../pipeline/limit.js';
import { observe } from '../pipeline/observe.js';
import { quote, reserve } from '../pipeline/reserve.js';
import { taskPlanKeys } from '../../services/subscriptions/refund.js';
import { route } from '../pipeline/route.js';
import { refund } from '../pipeline/settle.js';
import { newState, type RelayState } from '../pipeline/state.js';
import { sendEnvelope, sendEnvelopeError } from './envelope.js';
import { callTaskUpstream } from './upstream.js';
import { proxyOf } from '../channel-setting.js';

const none = () => ({ text: '', toolCalls: 0 });

/** The pipeline's mode of a task submit: no tokens, no stream; the model comes from the action. */
export function taskMode(platform: string): RelayMode {
  return {
    name: `${platform}_submit`,
    endpoint: 'chat',
    canStream: false,
    validate: () => null,
    promptTokens: () => 0,
    responseText: none,
    chunkText: none,
  };
}

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** The gateway's public id of a task: `task_` and 32 random letters or digits (the upstream's id is never shown). */
export function newPublicTaskId(): string {
  const bytes = randomBytes(32);
  let id = 'task_';
  // 256 mod 62 leaves the first 8 letters a little likelier: of no matter for an id of 190 random bits
  for (const b of bytes) id += ID_ALPHABET[b % 62];
  return id;
}

function parseBody(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The task a follow-up starts from (a video's remix): the caller's own, checked by the platform's handler. */
export interface TaskOrigin {
  publicId: string;
  upstreamId: string;
  channelId: number;
  model: string;
  /** the origin's price units: a follow-up is charged as its origin was */
  units?: TaskPriceUnits;
}

/** What differs per platform around the engine's submit: its answers, and what its task row keeps. */
export interface TaskSubmitOptions {
  origin?: TaskOrigin;
  /** the accepted submit's answer; Suno's envelope with the public id when absent */
  accepted?(res: HttpResponse, accepted: AcceptedTask, reqId: string): void;
  /** a refused submit's answer; the envelope when absent */
  refused?(res: HttpResponse, err: unknown, reqId: string): void;
  /**
   * The platform is the routed channel's (new-api's generic /v1/video/generations): the submit is routed by its
   * `model` first, then checked by that channel's platform; undefined refuses a channel that sells no such task.
   */
  platformOf?(channelType: number): Promise<TaskAdaptor | undefined>;
  /** with platformOf: the request's model where its body is no JSON object naming one (OpenAI's multipart form) */
  modelOf?(parsed: unknown, raw: TaskSubmitRaw): string;
  /**
   * with platformOf: the request in the routed platform's terms before it checks it (OpenAI's video create for a
   * Kling channel); the request as it came when absent or when it answers undefined
   */
  convert?(task: TaskAdaptor, parsed: unknown, raw: TaskSubmitRaw): { parsed: unknown; raw: TaskSubmitRaw } | undefined;
  /** what tasks.properties keeps besides the prompt (a video's model, seconds and size) */
  properties?(body: Record<string, unknown>, model: string): Record<string, unknown>;
}

export interface AcceptedTask {
  publicId: string;
  model: string;
  createdAt: number;
  properties: Record<string, unknown>;
}

export function submitTask(
  svc: RelayServices,
  ctx: AppContext,
  req: RelayRequest,
  res: HttpResponse,
  task: TaskAdaptor | null,
  action: string,
  opts: TaskSubmitOptions = {},
): Promise<void> {
  const s = newState(svc, ctx, req, res, { mode: taskMode(task?.platform ?? 'video') });
  const p = run(s, task, action, opts);
  svc.inFlight.add(p);
  return p.finally(() => svc.inFlight.delete(p));
}

/** A follow-up's channel: its origin's, which must still be there and enabled. */
function pinToOrigin(s: RelayState, origin: TaskOrigin): void {
  const channel = s.svc.channels.get(origin.channelId);
  if (!channel || channel.status !== 1)
    throw new RelayError(
      400,
      `原任务的渠道 #${origin.channelId} 不可用`,
      'new_api_error',
      'origin_channel_unavailable',
    );
  s.channel = channel;
}

/** The charge of a submit: per call, or per unit (a video's seconds × size ratio) where the platform prices so. */
function chargeOf(s: RelayState, task: TaskAdaptor, units: TaskPriceUnits | undefined) {
  const name = task.priceName(s.model);
  if (!units) return taskQuota(s.ctx.options, name, s.group);
  const q = perUnitTaskQuota(s.ctx.options, name, s.group, units.units, units.ratioPpm);
  if (q) return q;
  if (!s.ctx.options.bool('SelfUseModeEnabled'))
    throw new RelayError(500, unsetRatioMessage(name, s.caller.user.id), 'new_api_error', 'model_price_error');
  return { quota: 0, modelPrice: 0, groupRatio: 1 };
}

/** The submit's model before any platform reads it (the generic route's): a JSON object naming one. */
function modelOfGeneric(body: unknown): string {
  const model = body && typeof body === 'object' ? (body as { model?: unknown }).model : undefined;
  if (typeof model !== 'string' || !model.trim())
    throw new RelayError(400, 'model 不能为空', 'new_api_error', 'invalid_request');
  return model;
}

/** `given`: the platform's adaptor, null when the routed channel's platform takes the task (opts.platformOf) */
async function run(s: RelayState, given: TaskAdaptor | null, action: string, opts: TaskSubmitOptions): Promise<void> {
  let task = given as TaskAdaptor;
  let status = 200;
  try {
    await authenticate(s);
    const contentType = String(s.req.headers['content-type'] ?? '');
    let raw: TaskSubmitRaw = { bytes: s.raw, contentType };
    let parsed = /^multipart\//i.test(contentType) ? undefined : parseBody(s.raw);
    if (opts.platformOf) {
      // routed by the model first: the channel's platform then checks the request
      s.model = opts.modelOf ? opts.modelOf(parsed, raw) : modelOfGeneric(parsed);
      await admit(s);
      route(s);
      const found = await opts.platformOf(s.channel.type);
      if (!found)
        throw new RelayError(400, `渠道 #${s.channel.id} 不支持视频任务`, 'new_api_error', 'channel_mismatch');
      task = found;
      const converted = opts.convert?.(task, parsed, raw);
      if (converted) ({ parsed, raw } = converted);
    }
    const checked = task.validate(action, parsed, raw);
    if (!checked.ok) throw new RelayError(400, checked.message, 'new_api_error', checked.code);
    s.body = checked.body;
    if (!opts.platformOf) {
      s.model = opts.origin ? opts.origin.model : checked.model;
      await admit(s);
      if (opts.origin) pinToOrigin(s, opts.origin);
      else route(s);
    }
    // a pinned channel (sk-<key>-<id>) of another platform is no place for this task
    if (taskPlatformOf(s.channel.type) !== task.platform && !task.alsoOnTypes?.includes(s.channel.type))
      throw new RelayError(
        400,
        `渠道 #${s.channel.id} 不是 ${task.platform} 渠道`,
        'new_api_error',
        'channel_mismatch',
      );
    s.used = [s.channel.id];
    // TASK_PRICE_PATCH's models are charged per call, whatever units the platform counts
    const patched = s.ctx.config.taskPricePatch.includes(s.model);
    const units = patched ? undefined : opts.origin ? opts.origin.units : task.priceUnits?.(checked.body);
    const q = chargeOf(s, task, units);
    s.price = {
      usePrice: true,
      modelPrice: q.modelPrice,
      modelRatio: 0,
      completionRatio: 0,
      cacheRatio: 0,
      cacheCreationRatio: 0,
      groupRatio: q.groupRatio,
    };
    s.fixed = q.quota;
    quote(s);
    const limited = limit(s);
    if (limited) await limited;
    const held = holdChannel(s);
    if (held) await held;
    await reserve(s);
    // the reservation stands before anything is sent: a refused one never reaches the upstream
    const reservation = s.reservation ?? (await s.reserving!);
    const answer = await sendSubmit(s, task, checked.action, raw, opts.origin?.upstreamId);
    const upstreamId = answer.id;
    const publicId = newPublicTaskId();
    const now = nowSec();
    const tokenId = s.caller.token?.id ?? 0;
    const billing = {
      upstream_task_id: upstreamId,
      token_id: tokenId,
      token_name: s.caller.token?.name ?? '',
      model_name: s.model,
      group: s.group,
      model_price: s.price.modelPrice,
      group_ratio: s.price.groupRatio,
      ...(units ? { price_units: units } : {}),
      // a task paid by a plan is refunded to it (services/subscriptions/refund.ts)
      ...(reservation.plan ? taskPlanKeys(reservation.plan) : {}),
    };
    const properties = {
      input: typeof s.body.prompt === 'string' ? s.body.prompt : '',
      ...opts.properties?.(checked.body, s.model),
    };
    // With consume logs on, the charge's log row names this task: a refund looks for it (services/tasks/refund.ts).
    // With them off there is no such row: the task row says its charge is pending until the flush has committed it.
    const logsOn = s.ctx.options.bool('LogConsumeEnabled');
    await s.ctx.db
      .insertInto('tasks')
      .values({
        created_at: now,
        updated_at: now,
        task_id: publicId,
        platform: task.platform,
        user_id: s.caller.user.id,
        group: s.group,
        channel_id: s.channel.id,
        quota: s.fixed,
        action: checked.action,
        status: TASK_STATUS.notStart,
        submit_time: now,
        progress: '0%',
        properties: JSON.stringify(properties),
        ...(opts.accepted ? { data: JSON.stringify(answer.body ?? null) } : {}),
        private_data: JSON.stringify({
          ...billing,
          charge_logged: logsOn,
          ...(logsOn ? {} : { charge_pending: true }),
        }),
      })
      .execute();
    const row = taskLogRow(s, { task_id: publicId, ...(units ? { other_ratios: units.ratios } : {}) });
    if (reservation.state === 'open') s.svc.metrics.reservationsHeld--;
    s.svc.billing.settle(reservation, { quota: s.fixed, channelId: s.channel.id, countRequest: true }, row);
    // The charge is written before the client learns the task's id. A crash before it commits leaves a task row
    // whose charge never happened; its refund finds no consume log row for it (or a pending charge) and gives nothing.
    await s.svc.billing.flush();
    if (!logsOn || !row) await markChargeCommitted(s, publicId, { ...billing, charge_logged: !!row });
    s.charged = {
      prompt: 0,
      completion: 0,
      quota: s.fixed,
      frt: Date.now() - s.start,
      stream: false,
      clientLeft: false,
    };
    void releaseLimits(s);
    if (opts.accepted) opts.accepted(s.res, { publicId, model: s.model, createdAt: now, properties }, s.req.id);
    else sendEnvelope(s.res, 200, 'success', '', publicId, s.req.id);
  } catch (err) {
    if (!s.reservation && s.reserving) await s.reserving.catch(() => null);
    if (s.reservation) await refund(s, s.reservation);
    await releaseLimits(s);
    if (!(err instanceof RelayError)) s.ctx.log.error({ err, reqId: s.req.id }, 'task submit failed');
    status = err instanceof RelayError ? err.status : 500;
    if (opts.refused) opts.refused(s.res, err, s.req.id);
    else sendEnvelopeError(s.res, err, s.req.id);
  } finally {
    observe(s, status);
  }
}

/**
 * Tells the task row its charge has committed, when no consume log row will prove it (consume logs off, or the row
 * could not be built): the refund then trusts the row's quota. A crash after the flush and before this write leaves
 * the charge pending, and the task is never refunded: the error falls on the side of no refund, never of a refund
 * of a charge that did not happen. A failure here is logged; the client still gets its task (it was charged).
 */
async function markChargeCommitted(
  s: RelayState,
  publicId: string,
  privateData: Record<string, unknown>,
): Promise<void> {
  try {
    await s.ctx.db
      .updateTable('tasks')
      .set({ private_data: JSON.stringify(privateData) })
      .where('task_id', '=', publicId)
      .execute();
  } catch (err) {
    s.ctx.log.error({ err, reqId: s.req.id, taskId: publicId }, 'task charge mark failed: no refund if it fails');
  }
}

/** Sends the submit; the upstream's id and answer when it accepted it, else a RelayError with what it answered. */
async function sendSubmit(
  s: RelayState,
  task: TaskAdaptor,
  action: string,
  raw: TaskSubmitRaw,
  origin: string | undefined,
): Promise<{ id: string; body: unknown }> {
  const mapped = s.channel.modelMapping?.[s.model];
  const upstreamModel = typeof mapped === 'string' && mapped ? mapped : s.model;
  let answer;
  let request: TaskRequest;
  try {
    // building it may ask for a token (Vertex's service account): a refused exchange is the upstream's failure too
    request = await task.buildSubmit(s.channel, action, s.body, {
      raw,
      origin,
      upstreamModel,
      settings: s.svc.providers,
    });
    answer = await callTaskUpstream(request, undefined, proxyOf(s.channel));
  } catch (e) {
    throw new RelayError(502, `上游请求失败: ${(e as Error).message}`, 'new_api_error', 'do_request_failed', false);
  }
  const id = task.readSubmit(answer.status, answer.body, request);
  if (id) return { id, body: answer.body };
  const own = task.submitError?.(answer.status, answer.body);
  const env = (answer.body ?? {}) as {
    code?: unknown;
    message?: unknown;
    error?: { message?: unknown; code?: unknown };
  };
  // Suno's envelope {code, message}, or OpenAI's error object {error: {message, code}}
  const said = own ?? (env.error && typeof env.error === 'object' ? env.error : env);
  const message = typeof said.message === 'string' && said.message ? said.message : `上游拒绝了任务 (${answer.status})`;
  const code = typeof said.code === 'string' && said.code ? said.code : 'fail_to_submit';
  // the upstream's refusal of the request stays a 4xx; its auth, limits or failures are the gateway's 502 (a 401 would
  // tell the client its own key is wrong)
  const passed = answer.status >= 400 && answer.status < 500 && ![401, 403, 429].includes(answer.status);
  throw new RelayError(passed ? answer.status : 502, message, 'upstream_error', code, false);
}

/** The consume log row of a task's charge; `task` (its id) goes into `other`, with new-api's is_task. */
export function taskLogRow(s: RelayState, task: Record<string, unknown>) {
  try {
    const row = consumeLogRow(s.svc, s.ctx, {
      caller: s.caller,
      group: s.group,
      model: s.model,
      channel: s.channel,
      price: s.price,
      usage: { prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0 },
      quota: s.fixed,
      start: s.start,
      frt: Date.now() - s.start,
      isStream: false,
      upstreamModel: s.model,
      used: s.used,
    });
    // new-api's task log fields, and the task's id (the refund's evidence that this charge was made)
    if (row) row.other = JSON.stringify({ ...JSON.parse(row.other || '{}'), is_task: true, ...task });
    return row;
  } catch (e) {
    s.ctx.log.error({ err: e, reqId: s.req.id }, 'consume log failed');
    return undefined;
  }
}
