// Step 8, attempt: the upstream calls (relay/attempt.ts does one, on one channel), retried on another channel as
// new-api retries (new-api-compat.md §4.5) up to RetryTimes, a failing channel disabled when the error says so
// (§4.9). Pings start here for a stream whose upstream is slow to answer (relay/keepalive.ts).
import { attempt, type AttemptResult } from '../attempt.js';
import { RelayError, sseHeaders } from '../errors.js';
import { clientFraming } from '../formats/index.js';
import { StreamKeepAlive } from '../keepalive.js';
import { rerouteHeld } from './channel-cap.js';
import type { RelayState } from './state.js';
import { upstreamErrorClass } from '../../services/metrics.js';
import { outputCheck } from '../sensitive-output.js';
import { keyedChannel } from '../../services/multi-key-pick.js';
import { rememberAffinity } from './affinity.js';

/** new-api's shouldRetry (new-api-compat.md §4.5), applied to the (mapped) status. */
export function shouldRetry(err: RelayError, channelType: number): boolean {
  if (err.local) return false;
  const st = err.status;
  if (st === 429 || st === 307) return true;
  if (st >= 500 && st <= 599) return st !== 504 && st !== 524;
  if (st === 400) return channelType === 14;
  if (st === 408) return false;
  if (st >= 200 && st < 300) return false;
  return true;
}

/** A multi-key channel whose last key was disabled by another node since this one loaded it: try another channel. */
function noKeyLeft(channelId: number): AttemptResult {
  const message = `渠道 #${channelId} 没有可用的密钥`;
  return { kind: 'failed', error: new RelayError(503, message, 'new_api_error', 'channel_no_available_key', false) };
}

export async function attempts(s: RelayState): Promise<AttemptResult> {
  const { svc, ctx, req, res, mode, body, caller } = s;
  const isStream = !!mode.alwaysStream || (mode.canStream && body.stream === true);
  // pings are SSE comments: a client stream of another framing (Gemini's JSON array) has no room for them
  if (isStream && !mode.rawResponse && clientFraming(mode.format ?? 'openai', req.url) === 'sse')
    s.keepAlive = StreamKeepAlive.start(ctx, res, () => sseHeaders(req.id, req.headers.origin));
  if (isStream) {
    s.streaming = true;
    svc.metrics.streamsOpen++;
  }
  const clientWantsUsage = isStream && body.stream_options?.include_usage === true;
  const passThrough = ctx.options.bool('global.pass_through_request_enabled');
  // the completion's sensitive-word check of the text modes: one flag test when off (the default)
  const sensitive = mode.checksCompletion ? outputCheck(ctx.options) : null;
  const retryTimes = caller.channelId !== null ? 0 : Math.max(0, ctx.options.num('RetryTimes', 0));
  const failed = new Set<number>();
  for (let i = 0; ; i++) {
    // the key is chosen per attempt (a retry on the same multi-key channel takes the next key); a single-key channel
    // is itself, with no wait
    let keyed = keyedChannel(ctx, s.channel);
    if (keyed instanceof Promise) keyed = await keyed;
    const channel = keyed ?? s.channel;
    s.used.push(channel.id);
    const span = s.trace?.child('upstream attempt', { 'gateway.channel_id': channel.id, 'gateway.attempt': i + 1 });
    const result = keyed
      ? await attempt(svc, ctx, req, res, {
          channel,
          mode,
          body,
          raw: s.raw,
          model: s.model,
          isStream,
          clientWantsUsage,
          passThrough,
          reqId: req.id,
          origin: req.headers.origin,
          start: s.start,
          prompt: s.prompt,
          gate: i === 0 ? s.gate : null,
          keepAlive: s.keepAlive,
          sensitive,
        })
      : noKeyLeft(channel.id);
    if (span) {
      span.set({ 'gateway.outcome': result.kind });
      if (result.kind === 'failed') span.fail(result.error.message);
      span.end();
    }
    if (result.kind !== 'failed') {
      if (s.affinity) rememberAffinity(s, s.affinity, channel.id);
      return result;
    }
    const err = result.error;
    svc.metrics.upstreamErrors.inc({
      channel: String(channel.id),
      class: upstreamErrorClass(err.status, err.code, err.local),
    });
    // the status after status_code_mapping, as new-api's processChannelError sees it
    if (
      svc.channelStatus.shouldDisable(channel, {
        status: err.status,
        message: err.message,
        type: err.type,
        code: err.code,
        local: err.local,
      })
    ) {
      // on a multi-key channel the key that failed, only (the channel follows when no key is left)
      const disabled =
        channel.keyIndex === undefined
          ? svc.channelStatus.disable(channel.id, err.message, req.id)
          : svc.channelStatus.disableKey(channel.id, channel.keyIndex, channel.key, err.message, req.id);
      void disabled.catch((e) => ctx.log.warn({ err: e, reqId: req.id }, 'auto-disable failed'));
    }
    if (i >= retryTimes || !shouldRetry(err, channel.type)) return result;
    // new-api: the sticky channel's failure under skip_retry_on_failure is answered as it is, on no other channel
    if (s.affinity?.used && s.affinity.rule.skipRetry) return result;
    failed.add(channel.id);
    const next = await rerouteHeld(s, i + 1, failed);
    if (!next) return result;
    svc.metrics.retries.inc({ route: mode.name });
    s.channel = next;
  }
}
