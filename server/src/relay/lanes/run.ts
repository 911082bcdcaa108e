// What every lane does the same way (lanes/lane.ts): the body from the lane, the provider's headers and signing, the
// call through the channel's transport (overlapping the reservation's commit), the client going away, the upstream's
// errors; then the lane's answer. One async function per attempt: the dispatcher (relay/attempt.ts) returns its
// promise, so a lane adds no await of its own.
import { badResponse, GONE, leftUnanswered, type AttemptResult } from '../attempt-result.js';
import { transportFor } from '../channel-setting.js';
import { RelayError } from '../errors.js';
import { lazyChannelRedactor, redactProviderError } from '../redact.js';
import type { OutgoingRequest } from '../transport/index.js';
import { UpstreamCall } from '../upstream-call.js';
import type { AnsweredAttempt, Lane, LaneAttempt } from './lane.js';
import { authorizeUpstream, upstreamHeaders } from './upstream-request.js';

/**
 * STREAMING_TIMEOUT in ms for an upstream model: twice as long for o1/o3, which think in silence first
 * (new-api-compat.md §1.3).
 */
export function streamIdleMs(timeoutSec: number, upstreamModel: string): number {
  return timeoutSec * (/^o[13]/.test(upstreamModel) ? 2000 : 1000);
}

export async function runLane(lane: Lane, l: LaneAttempt): Promise<AttemptResult> {
  const { svc, ctx, res, a, info, adaptor } = l;
  const { channel, mode } = a;
  let built = lane.body(l);
  if (built instanceof Promise) built = await built;
  if (!Buffer.isBuffer(built)) return built;
  const out = built;

  // built by the functions the channel probe uses too (lanes/upstream-request.ts)
  const target = adaptor.target(info);
  const headers = upstreamHeaders(l, lane);
  // upstream error texts lose the channel's secrets, those the adaptor derives below included (built only on error)
  const redact = lazyChannelRedactor(channel.key, { headers, path: target.path });
  if (adaptor.authorize) {
    try {
      await authorizeUpstream(l, target, headers, out);
    } catch (err) {
      // the error's own fields (a token endpoint's request and answer) may hold the grant: only its text is logged
      const reason = redact((err as Error).message ?? String(err));
      ctx.log.warn({ reason, reqId: a.reqId, channel: channel.id }, 'upstream authorisation failed');
      return {
        kind: 'failed',
        error: new RelayError(500, `上游鉴权失败: ${reason}`, 'new_api_error', 'upstream_auth_failed', false),
      };
    }
    // the signing waited: a client gone meanwhile is not sent upstream
    if (res.destroyed) return GONE;
  }

  // raw responses (audio) are read as a stream whatever the request asked, and piped on as they come
  const call = new UpstreamCall(a.isStream || !!mode.rawResponse);
  // A client that goes away once the request is out: a whole answer, which the provider charges for, is read to its
  // end and billed as if the client had stayed (nothing is written to it); so is a stream the upstream has started
  // answering but whose client had received nothing yet (the stream pump aborts one it had begun to receive, billed
  // for what it delivered). A stream not answered yet is aborted and billed nothing. A stop aborts a call read on for
  // a client that left rather than wait for it (svc.leftBehind).
  let left: { destroy(): void } | null = null;
  const onClose = () => {
    if (res.writableFinished) return;
    l.clientGone = true;
    if (a.isStream && !call.headersAt) call.destroy();
    else svc.leftBehind.add((left = call));
  };
  res.once('close', onClose);
  const relayTimeoutMs = ctx.config.relayTimeoutSec * 1000;
  let refused: unknown = null;
  try {
    const opts: OutgoingRequest = {
      origin: target.origin,
      path: target.path,
      method: 'POST',
      headers,
      body: out,
      headersTimeout: relayTimeoutMs,
      bodyTimeout: a.isStream ? streamIdleMs(ctx.config.streamingTimeoutSec, info.upstreamModel) : relayTimeoutMs,
    };
    const sent = call.send(transportFor(channel, svc.upstream), opts);
    if (a.gate) {
      // the call can fail (client gone, upstream refused) while the reservation is awaited: that rejection is
      // read below, after the gate; without a handler now it would be an unhandled rejection and end the process
      sent.catch(() => {});
      try {
        await a.gate;
      } catch (e) {
        refused = e;
        call.destroy();
      }
    }
    if (!refused) await sent;
  } catch (err) {
    res.off('close', onClose);
    if (left) svc.leftBehind.delete(left);
    // a stream whose client left before the upstream answered: aborted, logged, billed nothing
    if (l.clientGone) return a.isStream ? leftUnanswered(info.upstreamModel) : GONE;
    ctx.log.warn({ err, reqId: a.reqId, channel: channel.id }, 'upstream request failed');
    return {
      kind: 'failed',
      error: new RelayError(500, '请求上游地址失败', 'new_api_error', 'do_request_failed', false),
    };
  }
  if (refused) {
    res.off('close', onClose);
    if (left) svc.leftBehind.delete(left);
    throw refused;
  }
  l.call = call;
  l.frt = call.headersAt - a.start;
  l.redact = redact;

  try {
    const statusCode = call.statusCode;
    if (statusCode !== 200) {
      const buf = await call.rest();
      if (l.clientGone) return GONE;
      const pe = redactProviderError(adaptor.parseError(statusCode, buf, call.headerRecord()), redact);
      if (statusCode === 401) adaptor.unauthorized?.(info);
      const mappedStatus = channel.statusCodeMapping?.[String(statusCode)];
      const status = mappedStatus && Number(mappedStatus) ? Number(mappedStatus) : statusCode;
      return { kind: 'failed', error: new RelayError(status, pe.message, pe.type, pe.code, false, pe.param) };
    }
    const answered = lane.answer(l as AnsweredAttempt);
    return answered instanceof Promise ? await answered : answered;
  } catch (err) {
    if (l.clientGone) return GONE;
    return badResponse(err as Error, 'upstream read failed', redact);
  } finally {
    res.off('close', onClose);
    if (left) svc.leftBehind.delete(left);
  }
}
