// The translated lane: the provider speaks another format; the client's request goes through the hub to the
// provider's format, and the answer (whole or streamed) back through the hub to the client's.
import { GONE, refusedRequest, type AttemptResult } from '../attempt-result.js';
import { FormatError } from '../formats/codec.js';
import { codecFor } from '../formats/index.js';
import { upstreamBodyFromHub } from '../providers/index.js';
import { decodedJson, decodedStream } from './decoded.js';
import type { Lane, LaneAttempt } from './lane.js';

export const translatedLane: Lane = {
  native: false,
  body: translatedBody,
  answer: (l) => (l.a.isStream ? decodedStream(l, false) : decodedJson(l)),
};

/** The client's request → hub → the provider's format; a request the provider's format cannot express is a 400. */
async function translatedBody(l: LaneAttempt): Promise<Buffer | AttemptResult> {
  const { a, info } = l;
  let body: Record<string, unknown>;
  try {
    const hub = { ...(a.mode.hubOf?.(a.body) ?? codecFor(info.clientFormat).requestToHub(a.body)) };
    hub.model = info.upstreamModel;
    body = await upstreamBodyFromHub(l.adaptor, info, hub);
  } catch (e) {
    if (!(e instanceof FormatError)) throw e;
    return refusedRequest(e);
  }
  // building the body may have waited (remote images): a client gone meanwhile is not sent upstream
  if (l.res.destroyed) return GONE;
  if (a.channel.paramOverride) Object.assign(body, a.channel.paramOverride);
  return Buffer.from(JSON.stringify(body));
}
