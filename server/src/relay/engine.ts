// The relay engine: one function, relayJson(), runs any JSON relay mode end to end:
//   auth (token or playground session) → parse body once → rate limit → access checks → channel pick →
//   price + reservation (atomic, in the DB) → attempt loop (adaptor builds the upstream request; relay/transport/;
//   stream or JSON response) with retries that skip failed channels → settle exactly once → consume log + dashboard.
// See index.ts for how other modes plug in.
import { isUtf8 } from 'node:buffer';
import type { AppContext } from '../context.js';
import type { HttpResponse } from '../lib/http-response.js';
import { MODEL_NAME_MAX } from '../lib/input.js';
import type { NewLog } from '../db/schema.js';
import type { RelayServices } from './services.js';
import type { CachedChannel } from '../services/cache/channel-cache.js';
import { QuotaError, type Reservation } from '../services/billing/index.js';
import {
  audioQuota,
  audioUsageOf,
  claudeQuota,
  getPriceData,
  isAudioChatModel,
  preConsumeQuota,
  PricingError,
  textQuota,
  type PriceData,
} from '../services/pricing/index.js';
import { checkAccess, type RelayCaller } from './auth.js';
import { asRelayError, RelayError, sendRelayError, sendStreamError, sseHeaders } from './errors.js';
import { StreamKeepAlive } from './keepalive.js';
import type { RelayMode } from './modes/mode.js';
import type { RelayRequest } from './request.js';
import { hasAdaptor, unsupportedTypeMessage } from './providers/index.js';
import { modelRateLimit } from './rate-limit.js';
import { boundaryOf, formFields } from './multipart.js';
import { attempt, type AttemptResult } from './attempt.js';
import type { UpstreamUsage } from './providers/index.js';
import { consumeLogRow } from './consume-log.js';
import { findSensitiveWord } from '../services/sensitive-words.js';
import { isUsableGroup } from '../services/groups.js';

export interface JsonRelayOptions {
  mode: RelayMode;
  /** POST /pg/chat/completions: console session auth, user quota only */
  playground?: boolean;
  /** model taken from the path (e.g. /v1/engines/:model/embeddings) when the body has none */
  pathModel?: string;
}

const SATURATED = '当前分组上游负载已饱和，请稍后再试';

function num(v: unknown): number {
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) ? n : 0;
}

/** new-api's shouldRetry (new-api-compat.md §4.5), applied to the (mapped) status. */
export function shouldRetry(err: RelayError, channelType: number): boolean {
  if (err.local) return false;
  const s = err.status;
  if (s === 429 || s === 307) return true;
  if (s >= 500 && s <= 599) return s !== 504 && s !== 524;
  if (s === 400) return channelType === 14;
  if (s === 408) return false;
  if (s >= 200 && s < 300) return false;
  return true;
}

function reasoningEffortOf(body: Record<string, any>, model: string): string | undefined {
  if (typeof body.reasoning_effort === 'string' && body.reasoning_effort) return body.reasoning_effort;
  const m = /^o\d.*-(high|low|medium)$/.exec(model);
  return m ? m[1] : undefined;
}

/** One relay request, tracked in svc.inFlight until it has settled and logged (a stop waits for it: shutdown.ts). */
export function relayJson(
  svc: RelayServices,
  ctx: AppContext,
  req: RelayRequest,
  res: HttpResponse,
  opts: JsonRelayOptions,
): Promise<void> {
  const p = relay(svc, ctx, req, res, opts);
  const inFlight = svc.inFlight;
  inFlight.add(p);
  return p.finally(() => inFlight.delete(p));
}

async function relay(
  svc: RelayServices,
  ctx: AppContext,
  req: RelayRequest,
  res: HttpResponse,
  opts: JsonRelayOptions,
): Promise<void> {
  const start = Date.now();
  const reqId = req.id;
  const origin = req.headers.origin;
  const mode = opts.mode;

  // every way in authenticates before reading the body (admit.ts) and hands the caller over
  let caller: RelayCaller;
  if (req.caller) caller = req.caller;
  else {
    const user = await svc.users.get(req.sessionUserId);
    if (!user) return sendRelayError(res, new RelayError(500, 'record not found'), reqId, origin, mode.format);
    caller = { user, token: null, channelId: null };
  }
  // new-api's low-quota check compares the balance before the request minus its charge with the threshold.
  const quotaBefore = caller.user.quota;

  let reservation: Reservation | null = null;
  let reserving: Promise<Reservation> | null = null;
  let rateKey = 0;
  let keepAlive: StreamKeepAlive | null = null;
  const format = mode.format ?? 'openai';
  const fail = (err: RelayError) =>
    keepAlive?.committed
      ? sendStreamError(res, err, reqId, !!mode.eventStream, format)
      : sendRelayError(res, err, reqId, origin, format);
  try {
    // ---- parse once
    let raw = req.body;
    let body: Record<string, any>;
    if (mode.multipart) body = multipartBody(raw, req.headers['content-type']);
    else {
      try {
        body = JSON.parse(raw.toString('utf8'));
      } catch (e) {
        throw new RelayError(400, `无效的请求, ${(e as Error).message}`, 'new_api_error', 'invalid_request');
      }
      if (!body || typeof body !== 'object' || Array.isArray(body))
        throw new RelayError(400, '无效的请求, body must be a JSON object', 'new_api_error', 'invalid_request');
    }
    const model: string =
      typeof body.model === 'string' && body.model ? body.model : opts.pathModel || mode.defaultModel || '';
    // the model name is written to the consume log: PostgreSQL refuses a NUL in text, no database a name longer than
    // the column, and the row (with the rows inserted along with it) would be lost after the charge
    if (model.length > MODEL_NAME_MAX || model.includes('\0'))
      throw new RelayError(
        400,
        '无效的请求, model 名称含有非法字符或过长',
        'invalid_request_error',
        'invalid_request',
        true,
        'model',
      );

    // ---- ModelRequestRateLimit (new-api-compat.md §10)
    if (!opts.playground && ctx.options.bool('ModelRequestRateLimitEnabled')) {
      const limited = modelRateLimit(ctx).check(caller.user.id);
      if (limited) await limited;
      rateKey = caller.user.id;
    }

    // ---- Distribute
    let group = checkAccess(ctx, caller, req.ip, model);
    if (opts.playground && typeof body.group === 'string' && body.group && body.group !== group) {
      if (!isUsableGroup(ctx, group, body.group))
        throw new RelayError(403, '无权访问该分组', 'new_api_error', 'group_not_allowed');
      group = body.group;
    }
    if (opts.playground && 'group' in body) {
      // the playground's group choice is ours, not an upstream parameter (OpenAI refuses unknown ones)
      delete body.group;
      raw = Buffer.from(JSON.stringify(body));
    }
    let channel: CachedChannel | null;
    if (caller.channelId !== null) {
      channel = svc.channels.get(caller.channelId) ?? null;
      if (!channel) throw new RelayError(400, '无效的渠道 Id');
      if (channel.status !== 1) throw new RelayError(403, '该渠道已被禁用');
      if (!hasAdaptor(channel.type))
        throw new RelayError(400, unsupportedTypeMessage(channel.type), 'new_api_error', 'channel_type_not_supported');
    } else {
      const invalid = !model ? mode.validate(body) : null;
      if (invalid) throw new RelayError(400, invalid, 'new_api_error', 'invalid_text_request');
      channel = svc.channels.pick(group, model, 0);
      // the playground answers as new-api's Playground handler: 500 get_playground_channel_failed
      if (!channel) {
        const message = `当前分组 ${group} 下对于模型 ${model} 无可用渠道`;
        throw opts.playground
          ? new RelayError(500, message, 'new_api_error', 'get_playground_channel_failed')
          : new RelayError(503, message);
      }
    }

    // ---- validate, price, reserve
    const invalid = mode.validate(model && !body.model ? { ...body, model } : body);
    if (invalid) throw new RelayError(400, invalid, 'new_api_error', 'invalid_text_request');
    // new-api's JSON binding refuses a non-boolean stream; here `"yes"` would have meant a JSON answer
    if (typeof body.stream !== 'boolean' && body.stream != null)
      throw new RelayError(
        400,
        '无效的请求, stream 必须是布尔值',
        'invalid_request_error',
        'invalid_request',
        true,
        'stream',
      );
    if (
      mode.promptTexts &&
      ctx.options.bool('CheckSensitiveEnabled') &&
      ctx.options.bool('CheckSensitiveOnPromptEnabled')
    ) {
      const word = findSensitiveWord(ctx.options.get('SensitiveWords'), mode.promptTexts(body));
      if (word !== null) {
        ctx.log.warn({ reqId, word }, 'user sensitive words detected');
        throw new RelayError(400, 'sensitive words detected', 'new_api_error', 'sensitive_words_detected');
      }
    }
    let price: PriceData;
    try {
      price = getPriceData(ctx.options, model, group, {
        acceptUnsetRatio: caller.user.setting.accept_unset_model_ratio_model === true,
        userId: caller.user.id,
      });
    } catch (e) {
      if (e instanceof PricingError) throw new RelayError(500, e.message, 'new_api_error', 'model_price_error');
      throw e;
    }
    let promptTokens = -1;
    const prompt = () => (promptTokens >= 0 ? promptTokens : (promptTokens = mode.promptTokens(body, model)));
    const maxTokens = mode.maxTokens
      ? mode.maxTokens(body)
      : Math.max(num(body.max_tokens), num(body.max_completion_tokens), num(body.max_output_tokens));
    const fixed = mode.fixedQuota ? mode.fixedQuota(price, body, model, ctx.options.num('QuotaPerUnit', 500000)) : -1;
    const { amount: pre, exact } =
      fixed >= 0
        ? { amount: fixed, exact: null }
        : reservationFor(caller, mode, body, raw, price, prompt, maxTokens, ctx);
    const forgetCaller = () => {
      // the cached balance that let the request go ahead, or be reserved a bound, was wrong: read it again next time
      svc.users.forget(caller.user.id);
      if (caller.token) void svc.tokens.invalidate({ key: caller.token.key }).catch(() => undefined);
    };
    // A well-funded caller's request goes upstream while its reservation commits (see overlapsReservation); the
    // response is read only once the reservation stands. Everyone else waits for the reservation first.
    const overlapped = !mode.rawResponse && overlapsReservation(caller, pre);
    const reserve = (amount: number) =>
      svc.billing.reserve({
        userId: caller.user.id,
        tokenId: caller.token?.id ?? 0,
        tokenKey: caller.token?.key ?? '',
        tokenUnlimited: caller.token?.unlimited ?? true,
        cachedUserQuota: caller.user.quota,
        amount,
        overlapped,
      });
    reserving = reserve(pre)
      .catch((e) => {
        // refused a bound of the prompt: new-api's threshold is the exact count, which may still fit
        if (!exact || !(e instanceof QuotaError)) throw e;
        forgetCaller();
        return reserve(exact());
      })
      .then(
        (r) => (reservation = r),
        (e) => {
          throw e instanceof QuotaError ? new RelayError(403, e.message, 'new_api_error', e.code) : e;
        },
      );
    const gate = overlapped ? reserving : null;
    if (!gate) await reserving;
    else gate.catch(forgetCaller);

    // ---- attempts
    const isStream = !!mode.alwaysStream || (mode.canStream && body.stream === true);
    // pings are SSE comments: a JSON-array stream (Gemini without alt=sse) has no room for them
    if (isStream && !mode.rawResponse && mode.framing !== 'json-array')
      keepAlive = StreamKeepAlive.start(ctx, res, () => sseHeaders(reqId, origin));
    const clientWantsUsage = isStream && body.stream_options?.include_usage === true;
    const passThrough = ctx.options.bool('global.pass_through_request_enabled');
    const retryTimes = caller.channelId !== null ? 0 : Math.max(0, ctx.options.num('RetryTimes', 0));
    const used: number[] = [];
    const failed = new Set<number>();
    let result: AttemptResult;
    for (let i = 0; ; i++) {
      used.push(channel.id);
      result = await attempt(svc, ctx, req, res, {
        channel,
        mode,
        body,
        raw,
        model,
        isStream,
        clientWantsUsage,
        passThrough,
        reqId,
        origin,
        start,
        prompt,
        gate: i === 0 ? gate : null,
        keepAlive,
      });
      if (result.kind !== 'failed') break;
      const err = result.error;
      const ch = channel;
      // the status after status_code_mapping, as new-api's processChannelError sees it
      if (
        svc.channelStatus.shouldDisable(ch, {
          status: err.status,
          message: err.message,
          type: err.type,
          code: err.code,
          local: err.local,
        })
      ) {
        void svc.channelStatus
          .disable(ch.id, err.message)
          .catch((e) => ctx.log.warn({ err: e }, 'auto-disable failed'));
      }
      if (i >= retryTimes || !shouldRetry(err, ch.type)) break;
      failed.add(ch.id);
      const next = svc.channels.pick(group, model, i + 1, failed);
      if (!next) break;
      channel = next;
    }

    // the first attempt waited for an overlapped reservation (or threw its refusal): it stands by now
    const held = reservation ?? (await reserving);
    if (result.kind === 'failed') {
      let err = result.error;
      if (err.status === 429) err = err.withMessage(SATURATED);
      await svc.billing.refund(held).catch((e) => ctx.log.error({ err: e }, 'refund failed'));
      fail(err);
      return;
    }
    if (result.kind === 'gone') {
      await svc.billing.refund(held).catch((e) => ctx.log.error({ err: e }, 'refund failed'));
      return;
    }
    if (rateKey) modelRateLimit(ctx).success(rateKey);

    // ---- settle + log (the client already has its response)
    const usage = result.usage;
    const total = usage.prompt_tokens + usage.completion_tokens;
    const quotaPerUnit = ctx.options.num('QuotaPerUnit', 500000);
    const audio = fixed < 0 && isAudioChatModel(model) ? audioUsageOf(usage) : undefined;
    const quota =
      fixed >= 0
        ? fixed
        : total === 0
          ? 0
          : audio
            ? audioQuota(price, audio, model, quotaPerUnit)
            : usage.claude
              ? claudeQuota(price, claudeUsageOf(usage), quotaPerUnit)
              : textQuota(price, usage, quotaPerUnit);
    let row: NewLog | undefined;
    try {
      row = consumeLogRow(svc, ctx, {
        caller,
        group,
        model,
        channel: channel!,
        price,
        usage,
        quota,
        start,
        frt: result.kind === 'done' ? result.frt : -1000,
        isStream: result.kind === 'done' && result.isStream,
        upstreamModel: result.kind === 'done' ? result.upstreamModel : model,
        reasoningEffort: reasoningEffortOf(body, model),
        used,
        content: mode.logContent?.(body, price),
        audio,
        clientLeft: result.clientLeft,
      });
    } catch (e) {
      ctx.log.error({ err: e, reqId }, 'consume log failed');
    }
    // the charge and its log row are written together (services/billing/)
    svc.billing.settle(held, { quota, channelId: channel.id, countRequest: total > 0 || fixed > 0 }, row);
    if (quota > 0 && svc.notifier.below(caller.user, quotaBefore - quota))
      void svc.notifier.check(caller.user, quotaBefore - quota);
  } catch (err) {
    // an overlapped reservation may still be committing: whatever it took goes back
    if (!reservation && reserving) await reserving.catch(() => null);
    if (reservation) await svc.billing.refund(reservation).catch((e) => ctx.log.error({ err: e }, 'refund failed'));
    const e = asRelayError(err);
    if (!(err instanceof RelayError)) ctx.log.error({ err, reqId }, 'relay failed');
    fail(e);
  } finally {
    keepAlive?.stop();
  }
}

/** Fields of a multipart request (model, prompt, size…); the raw bytes stay what is forwarded. */
function multipartBody(raw: Buffer, contentType: string | undefined): Record<string, any> {
  const boundary = boundaryOf(contentType);
  if (!boundary)
    throw new RelayError(
      400,
      '无效的请求, Content-Type must be multipart/form-data',
      'new_api_error',
      'invalid_request',
    );
  return formFields(raw, boundary);
}

/**
 * new-api's "trusted" threshold (new-api-compat.md §5.2): a cached balance above 100 × the reservation on the user and
 * on a limited token. new-api reserves nothing then and can overdraw; here the reservation is still taken atomically,
 * only no longer waited for before the upstream call. If the database refuses it after all (the cached balance was
 * stale: another node spent it, an admin lowered it), the upstream request is aborted and the caller gets the 403 as if
 * it had been refused first: nothing is charged and nothing of the answer is sent.
 */
function overlapsReservation(caller: RelayCaller, pre: number): boolean {
  if (pre <= 0 || caller.user.quota <= 100 * pre) return false;
  const t = caller.token;
  return !t || t.unlimited || t.remainQuota > 100 * pre;
}

/**
 * The reservation of a token-priced request (new-api-compat.md §5.2): (prompt + max_tokens) × ratios, or
 * PreConsumedQuota without max_tokens. The prompt's exact count means tokenizing it on the event loop, with tables of
 * tens of MB loaded for good. A caller whose cached balance covers 100 × the reservation computed with a bound of the
 * prompt (RelayMode.promptBound) is reserved that instead: the amount held for the duration of the request is larger,
 * the charge (from usage, settled as final − reserved) is the same. Near the limit, where the reservation can be
 * refused, the exact count keeps new-api's threshold. If the database refuses the larger amount (the cached balance was
 * stale), `exact` is reserved instead, so a request is refused only when the exact amount does not fit, and names that.
 */
function reservationFor(
  caller: RelayCaller,
  mode: RelayMode,
  body: Record<string, any>,
  raw: Buffer,
  price: PriceData,
  prompt: () => number,
  maxTokens: number,
  ctx: AppContext,
): { amount: number; exact: (() => number) | null } {
  if (price.usePrice || maxTokens <= 0)
    return { amount: preConsumeQuota(price, 0, maxTokens > 0 ? maxTokens : undefined, ctx.options), exact: null };
  const exact = () => preConsumeQuota(price, prompt(), maxTokens, ctx.options);
  const bound = mode.promptBound && isUtf8(raw) ? mode.promptBound(body, raw.length) : -1;
  if (bound >= 0) {
    const loose = preConsumeQuota(price, bound, maxTokens, ctx.options);
    if (overlapsReservation(caller, loose)) return { amount: loose, exact };
  }
  return { amount: exact(), exact: null };
}

/** The relay's usage of a Claude answer back in Claude's terms: input_tokens exclude the cache reads. */
function claudeUsageOf(u: UpstreamUsage) {
  return {
    input_tokens: Math.max(0, u.prompt_tokens - u.cached_tokens),
    output_tokens: u.completion_tokens,
    cache_read_input_tokens: u.cached_tokens,
    cache_creation_input_tokens: u.cache_creation_tokens ?? 0,
  };
}
