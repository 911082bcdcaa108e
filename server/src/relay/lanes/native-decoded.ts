// The native decoded lane: the provider speaks the client's format (or one it also accepts), but its answer is read
// through the hub: a stream in a framing the byte scanner cannot read, of a mode whose usage the scanner cannot find,
// or under a sensitive-word check that masks hub chunks; and any answer the channel's output settings change when the
// client does not speak OpenAI chat (whose bytes the pass-through lane transforms itself). Events the client's format
// shares pass as they came, only reframed, unless something must change them.
import { codecFor } from '../formats/index.js';
import { framingOf } from '../stream/framing.js';
import { decodedJson, decodedStream } from './decoded.js';
import type { Lane, LaneAttempt } from './lane.js';
import { nativeBody } from './native-body.js';

export const nativeDecodedLane: Lane = {
  native: true,
  body: nativeBody,
  // the upstream answers in the client's format (its own, or one it also speaks): its events pass, only reframed
  answer: (l) => (l.a.isStream ? decodedStream(l, true) : decodedJson(l)),
};

/** Whether a native answer must be decoded (this lane) rather than passed through. */
export function decodesNative({ a, adaptor, info, output }: LaneAttempt): boolean {
  const { mode } = a;
  // OpenAI chat's pass-through applies the settings to its bytes; every other format's answer is decoded for them
  if (output && mode.name !== 'chat') return true;
  if (!a.isStream) return false;
  return (
    !!codecFor(info.clientFormat).decodedStreams ||
    !framingOf(adaptor.framing).scannable ||
    !!(a.sensitive && codecFor(info.clientFormat).maskedAsHub)
  );
}
