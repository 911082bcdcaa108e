// A Midjourney submit (every POST /mj/submit/*, /mj/insight-face/swap, under /mj or a /mj-<mode> prefix): the relay
// pipeline's shared steps around one upstream call, as the Suno submit (submit.ts), with midjourney-proxy's codes
// (providers/midjourney/submit-answer.ts). The price is reserved before anything is sent (new-api only compares the
// balance, so concurrent submits overspend); a follow-up (change, action, modal, a video of a task) goes to the origin
// task's channel. What the upstream answered decides: charged (1, 21, 22 with a task id, HTTP 200) → the midjourneys
// row, then the settlement with its consume log row, flushed before the client learns the id; not charged → the
// reservation released, the row stored as FAILURE; code 3 disables the channel when automatic disabling is on.
import type { Insertable } from 'kysely';
import type { AppContext } from '../../context.js';
import type { Database } from '../../db/schema.js';
import type { HttpResponse } from '../../lib/http-response.js';
import { taskQuota } from '../../services/pricing/index.js';
import { proxyOf } from '../channel-setting.js';
import { RelayError } from '../errors.js';
import {
  buildMjSubmitRequest,
  MJ_DISABLE_REASON,
  mjNotifyHookUrl,
  mjOriginCheck,
  readMjSubmitAnswer,
  type MjRoute,
  type MjSubmitPlan,
} from '../providers/midjourney/index.js';
import { MJ_CHANNEL_TYPES } from '../providers/midjourney/provider.js';
import type { RelayRequest } from '../request.js';
import type { RelayServices } from '../services.js';
import { admit } from '../pipeline/admit.js';
import { authenticate } from '../pipeline/authenticate.js';
import { holdChannel } from '../pipeline/channel-cap.js';
import { limit, releaseLimits } from '../pipeline/limit.js';
import { observe } from '../pipeline/observe.js';
import { quote, reserve } from '../pipeline/reserve.js';
import { route } from '../pipeline/route.js';
import { refund } from '../pipeline/settle.js';
import type { MjPrivateData } from '../../services/tasks/mj-apply.js';
import { newState, type RelayState } from '../pipeline/state.js';
import { MjAnswerError, sendMjError, sendMjJson } from './mj-answer.js';
import { taskLogRow, taskMode } from './submit.js';
import { callTaskUpstream } from './upstream.js';

type SubmitRoute = Extract<MjRoute, { kind: 'submit' }>;

export function submitMj(
  svc: RelayServices,
  ctx: AppContext,
  req: RelayRequest,
  res: HttpResponse,
  mjRoute: SubmitRoute,
  plan: MjSubmitPlan,
): Promise<void> {
  const s = newState(svc, ctx, req, res, { mode: taskMode('midjourney') });
  const p = run(s, mjRoute, plan);
  svc.inFlight.add(p);
  return p.finally(() => svc.inFlight.delete(p));
}

/** The channel of a follow-up: its origin task's (the caller's own), checked as mjOriginCheck says. */
async function originChannel(s: RelayState, plan: MjSubmitPlan): Promise<string> {
  const origin = await s.ctx.db
    .selectFrom('midjourneys')
    .select(['status', 'prompt', 'channel_id'])
    .where('mj_id', '=', plan.originTaskId!)
    .where('user_id', '=', s.caller.user.id)
    .orderBy('id', 'desc')
    .executeTakeFirst();
  const channel = origin
    ? await s.ctx.db
        .selectFrom('channels')
        .select('status')
        .where('id', '=', Number(origin.channel_id))
        .executeTakeFirst()
    : undefined;
  const checked = mjOriginCheck(
    plan,
    origin && {
      status: origin.status,
      prompt: origin.prompt,
      channelId: Number(origin.channel_id),
      channelStatus: channel ? Number(channel.status) : null,
    },
    s.ctx.options.bool('MjActionCheckSuccessEnabled'),
  );
  if (!checked.ok) throw new MjAnswerError(checked.error);
  const cached = s.svc.channels.get(checked.channelId);
  if (!cached) throw new MjAnswerError({ code: 4, description: 'get_channel_info_failed' });
  s.channel = cached;
  return checked.prompt;
}

async function run(s: RelayState, mjRoute: SubmitRoute, plan: MjSubmitPlan): Promise<void> {
  let status = 200;
  try {
    await authenticate(s);
    s.body = plan.body;
    s.model = plan.modelName;
    await admit(s);
    let prompt = plan.prompt;
    if (plan.originTaskId) prompt = await originChannel(s, plan);
    else route(s);
    // a pinned channel (sk-<key>-<id>) of another platform is no place for a drawing
    if (!MJ_CHANNEL_TYPES.includes(s.channel.type))
      throw new RelayError(400, `渠道 #${s.channel.id} 不是 Midjourney 渠道`, 'new_api_error', 'channel_mismatch');
    s.used = [s.channel.id];
    const q = taskQuota(s.ctx.options, plan.modelName, s.group);
    s.price = {
      usePrice: true,
      modelPrice: q.modelPrice,
      modelRatio: 0,
      completionRatio: 0,
      cacheRatio: 0,
      cacheCreationRatio: 0,
      groupRatio: q.groupRatio,
    };
    // INPAINT and CUSTOM_ZOOM are never charged: their modal is
    s.fixed = plan.charge ? q.quota : 0;
    quote(s);
    const limited = limit(s);
    if (limited) await limited;
    const held = holdChannel(s);
    if (held) await held;
    // wallet only: Midjourney's refunds know no plan (docs/new-api-compat.md §33)
    await reserve(s, false);
    // the reservation stands before anything is sent: a refused one never reaches the upstream
    const reservation = s.reservation ?? (await s.reserving!);
    const answer = await sendSubmit(s, mjRoute);
    const now = Date.now();
    const decision = readMjSubmitAnswer(answer.status, answer.text, {
      action: plan.action,
      chargeable: plan.charge,
      autoDisable: s.channel.autoBan && s.ctx.options.bool('AutomaticDisableChannelEnabled'),
      now,
    });
    if (decision.disableChannel)
      // the upstream has answered: a failure to disable is logged, the answer still goes out
      await s.svc.channelStatus
        .disable(s.channel.id, MJ_DISABLE_REASON, s.req.id)
        .catch((err: unknown) => s.ctx.log.warn({ err, channelId: s.channel.id }, 'channel disable failed'));
    const charge = decision.charge && s.fixed > 0;
    let rowId = 0;
    if (decision.row) {
      rowId = await insertRow(s.ctx, {
        ...decision.row,
        user_id: s.caller.user.id,
        action: plan.action,
        prompt,
        channel_id: s.channel.id,
        quota: charge ? s.fixed : 0,
      });
    }
    if (charge) {
      const row = taskLogRow(s, { task_id: decision.upstreamTaskId, mj_row: String(rowId) });
      if (reservation.state === 'open') s.svc.metrics.reservationsHeld--;
      s.svc.billing.settle(reservation, { quota: s.fixed, channelId: s.channel.id, countRequest: true }, row);
      // the charge is written before the client learns the task's id (submit.ts says why)
      await s.svc.billing.flush();
      // no consume log row names the row (consume logs off): the row keeps who paid, now that the charge committed
      if (!row && rowId) await markChargeCommitted(s, rowId);
      s.charged = {
        prompt: 0,
        completion: 0,
        quota: s.fixed,
        frt: now - s.start,
        stream: false,
        clientLeft: false,
      };
    } else await refund(s, reservation);
    void releaseLimits(s);
    status = decision.clientStatus;
    sendMjJson(s.res, decision.clientStatus, decision.clientBody, s.req.id);
  } catch (err) {
    if (!s.reservation && s.reserving) await s.reserving.catch(() => null);
    if (s.reservation) await refund(s, s.reservation);
    await releaseLimits(s);
    if (!(err instanceof RelayError) && !(err instanceof MjAnswerError))
      s.ctx.log.error({ err, reqId: s.req.id }, 'midjourney submit failed');
    status = err instanceof MjAnswerError ? err.answer.status : err instanceof RelayError ? err.status : 500;
    sendMjError(s.res, err, s.req.id);
  } finally {
    observe(s, status);
  }
}

async function sendSubmit(s: RelayState, mjRoute: SubmitRoute) {
  const o = s.ctx.options;
  const notify = o.bool('MjNotifyEnabled');
  const serverAddress = o.get('ServerAddress').trim();
  const request = buildMjSubmitRequest(s.channel, mjRoute, s.body, {
    modeClear: o.bool('MjModeClearEnabled'),
    accountFilter: o.bool('MjAccountFilterEnabled'),
    notify,
    // the upstream calls the gateway's signed hook, so the gateway learns of the change (the client's is not kept)
    gatewayNotifyHook:
      notify && serverAddress ? mjNotifyHookUrl(serverAddress, s.channel.id, s.ctx.config.cryptoSecret) : undefined,
  });
  try {
    return await callTaskUpstream(request, request.timeoutMs, proxyOf(s.channel));
  } catch (e) {
    throw new MjAnswerError({ code: 5, description: 'do_request_failed', result: (e as Error).message });
  }
}

/**
 * Writes into the row's private_data who paid for it, once its charge has committed and no consume log row proves it:
 * the refund (services/tasks/mj-apply.ts) trusts this. A crash after the flush and before this write leaves nothing
 * to prove the charge, and the drawing is never refunded: the error falls on the side of no refund, never of a refund
 * of a charge that did not happen. A failure here is logged; the client still gets its task (it was charged).
 */
async function markChargeCommitted(s: RelayState, rowId: number): Promise<void> {
  const paid: MjPrivateData = {
    charge_logged: false,
    token_id: s.caller.token?.id ?? 0,
    token_name: s.caller.token?.name ?? '',
    model_name: s.model,
  };
  try {
    await s.ctx.db
      .updateTable('midjourneys')
      .set({ private_data: JSON.stringify(paid) })
      .where('id', '=', rowId)
      .execute();
  } catch (err) {
    s.ctx.log.error({ err, reqId: s.req.id, rowId }, 'midjourney charge mark failed: no refund if it fails');
  }
}

/** Inserts the midjourneys row; its id (the consume log row names it, the refund's evidence of the charge). */
async function insertRow(ctx: AppContext, values: Insertable<Database['midjourneys']>): Promise<number> {
  const q = ctx.db.insertInto('midjourneys').values(values);
  if (ctx.dbKind === 'postgres') return Number((await q.returning('id').executeTakeFirstOrThrow()).id);
  return Number((await q.executeTakeFirstOrThrow()).insertId);
}
