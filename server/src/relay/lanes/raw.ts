// The raw lane: a non-JSON answer (audio speech) piped to the client as it comes (relay/passthrough.ts), billed from
// the request alone.
import { badResponse, GONE, type AttemptResult } from '../attempt-result.js';
import { baseHeaders, sendJson } from '../errors.js';
import { pipeRaw } from '../passthrough.js';
import type { AnsweredAttempt, Lane } from './lane.js';
import { nativeBody } from './native-body.js';
import { inBandFailure } from './json-answer.js';

export const rawLane: Lane = {
  native: true,
  body: nativeBody,
  answer: rawAnswer,
};

async function rawAnswer(l: AnsweredAttempt): Promise<AttemptResult> {
  const { a, call, res, info } = l;
  const usage = { prompt_tokens: a.prompt(), completion_tokens: 0, cached_tokens: 0 };
  const base = { kind: 'done', usage, frt: l.frt, isStream: false, upstreamModel: info.upstreamModel } as const;
  // the answer of a client that left is read to its end and dropped
  if (l.clientGone) {
    await call.drain();
    return { ...base, clientLeft: true };
  }
  // a vendor whose audio comes inside JSON (MiniMax's hex in t2a_v2) or whose errors come in a 200: read whole
  if (l.adaptor.answerError || l.adaptor.convertsAnswer?.(info)) {
    await call.finished();
    if (call.error) return badResponse(call.error, 'upstream read failed', l.redact);
    const failed = inBandFailure(l, call.body());
    if (failed) return failed;
    const converted = l.adaptor.convertResponse?.(info, call.body());
    const body = converted ? converted.body : call.body();
    if (!l.clientGone)
      sendJson(res, 200, body, baseHeaders(a.reqId, a.origin), converted?.contentType ?? call.contentType);
    return { ...base, clientLeft: l.clientGone };
  }
  const r = await pipeRaw(call, res, baseHeaders(a.reqId, a.origin), call.rawHeaders);
  if (!r.started) {
    if (r.clientGone) return GONE;
    if (r.error) return badResponse(r.error, 'upstream read failed', l.redact);
  }
  return { ...base, clientLeft: r.clientGone };
}
