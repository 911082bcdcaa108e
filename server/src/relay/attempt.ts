// One attempt of a relay request on one channel (relay/pipeline/attempts.ts runs the attempt loop): the lane is
// chosen here (lanes/: native pass-through, native decoded, translated, endpoint-translated, raw) and lanes/run.ts
// runs it. Not async: the lane's run is the attempt's one promise (but for a vendor's first request, which loads it).
import type { HttpResponse } from '../lib/http-response.js';
import type { AppContext } from '../context.js';
import { GONE, type AttemptResult } from './attempt-result.js';
import { RelayError } from './errors.js';
import { adaptorFor, declares, loadedAdaptor } from './providers/index.js';
import type { RelayRequest } from './request.js';
import type { RelayServices } from './services.js';
import { endpointTranslatedLane } from './lanes/endpoint-translated.js';
import { laneAttempt, type AttemptInput, type Lane, type LaneAttempt } from './lanes/lane.js';
import { decodesNative, nativeDecodedLane } from './lanes/native-decoded.js';
import { nativePassLane } from './lanes/native-pass.js';
import { rawLane } from './lanes/raw.js';
import { runLane } from './lanes/run.js';
import { translatedLane } from './lanes/translated.js';

export type { AttemptResult, Sensitive } from './attempt-result.js';
export type { AttemptInput } from './lanes/lane.js';
export { streamIdleMs } from './lanes/run.js';

export function attempt(
  svc: RelayServices,
  ctx: AppContext,
  req: RelayRequest,
  res: HttpResponse,
  a: AttemptInput,
): Promise<AttemptResult> {
  // The client went away before this attempt (while its reservation, a rate limit or an earlier attempt ran): its
  // 'close' has passed, so only the response's state tells. Nothing is sent upstream, and no other channel is tried.
  // From here to the dispatch below nothing waits, so a client still here now is still here when the request goes out.
  if (res.destroyed) return Promise.resolve(GONE);
  const adaptor = loadedAdaptor(a.channel.type);
  // a vendor's folder is loaded on its first request; the attempt then starts over (the client may have left meanwhile)
  if (!adaptor) return adaptorFor(a.channel.type).then(() => attempt(svc, ctx, req, res, a));
  const l = laneAttempt(svc, ctx, req, res, a, adaptor);
  const lane = laneOf(l);
  if (!lane) return Promise.resolve(cannotServe(l));
  if (!declares(adaptor, l.info)) return Promise.resolve(cannotServe(l));
  return runLane(lane, l);
}

/** The lane of an attempt; null when the provider cannot serve the mode in any format. The channel probe picks its lane here too. */
export function laneOf(l: LaneAttempt): Lane | null {
  const { a } = l;
  if (!l.native) return l.translation ? endpointTranslatedLane : a.mode.hub ? translatedLane : null;
  if (a.mode.rawResponse) return rawLane;
  return decodesNative(l) ? nativeDecodedLane : nativePassLane;
}

function cannotServe({ a }: LaneAttempt): AttemptResult {
  const message = `渠道 #${a.channel.id} 的类型不支持 ${a.mode.name} 请求`;
  return { kind: 'failed', error: new RelayError(400, message, 'new_api_error', 'convert_request_failed') };
}
