// What every lane does the same way (lanes/lane.ts): the body from the lane, the provider's headers and signing, the
// call through the channel's transport (overlapping the reservation's commit), the client going away, the upstream's
// errors; then the lane's answer. One async function per attempt: the dispatcher (relay/attempt.ts) returns its
// promise, so a lane adds no await of its own.
import { badResponse, GONE, leftUnanswered, type AttemptResult } from '../attempt-result.js';
import { RelayError } from '../errors.js';
import { lazyChannelRedactor, redactProviderError } from '../redact.js';
import type { OutgoingRequest } from '../transport/index.js';
import { UpstreamCall } from '../upstream-call.js';
import type { AnsweredAttempt, Lane, LaneAttempt } from './lane.js';
import { authorizeUpstream, upstreamHeaders, upstreamTransport } from './upstream-request.js';
import { VendorRefusal, vendorRewrite } from '../providers/dialect.js';

/**
 * STREAMING_TIMEOUT in ms for an upstream model: twice as long for o1/o3, which think in silence first
 * (new-api-compat.md §1.3).
 */
export function streamIdleMs(timeoutSec: number, upstreamModel: string): number {
  return timeoutSec * (/^o[13]/.test(upstreamModel) ? 2000 : 1000);
}

/** A vendor's refusal inside a 200 answer, as the client's error (nothing was sent to it, nothing is charged). */
function refusalError(e: VendorRefusal, redact: (text: string) => string): RelayError {
  return new RelayError(e.status, redact(e.message), 'upstream_error', e.code, false);
}

/**
 * Runs the lane; once more when the vendor refused an exchanged token inside its answer (Baidu's expired token): the
 * token is dropped, exchanged again, and the request resent a single time.
 */
export async function runLane(lane: Lane, l: LaneAttempt): Promise<AttemptResult> {
  const first = await runLaneOnce(lane, l);
  if (first !== RESEND) return first;
  l.adaptor.unauthorized?.(l.info);
  const second = await runLaneOnce(lane, l);
  return second === RESEND ? credentialRefused(l) : second;
}

const RESEND = Symbol('resend');

function credentialRefused(l: LaneAttempt): AttemptResult {
  l.adaptor.unauthorized?.(l.info);
  return {
    kind: 'failed',
    error: new RelayError(401, '上游拒绝了渠道的访问令牌', 'upstream_error', 'credential_refused', false),
  };
}

async function runLaneOnce(lane: Lane, l: LaneAttempt): Promise<AttemptResult | typeof RESEND> {
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
  const sent = { headers, path: target.path };
  const redact = lazyChannelRedactor(channel.key, sent);
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
    // a token the vendor takes in the query is hidden from error texts too
    sent.path = target.path;
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
    const sent = call.send(upstreamTransport(svc, adaptor, channel), opts);
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
    if (adaptor.answers) {
      // the vendor's own answer shapes become OpenAI's; an error it put inside the 200 is a real one
      call.rewrite(vendorRewrite(adaptor.answers, info, call.contentType));
      if (a.isStream) await call.firstOutput();
      if (call.error instanceof VendorRefusal) {
        if (l.clientGone) return GONE;
        if (call.error.credentialRefused && adaptor.credential?.kind === 'exchanged') return RESEND;
        return { kind: 'failed', error: refusalError(call.error, redact) };
      }
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
