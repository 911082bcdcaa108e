// The native decoded lane: the provider speaks the client's format (or one it also accepts), but its stream is read
// event by event: a framing the byte scanner cannot read, a mode whose usage the scanner cannot find, or a
// sensitive-word check that masks hub chunks. Events the client's format shares pass as they came, only reframed.
import type { Lane } from './lane.js';
import { decodedStream } from './decoded.js';
import { nativeBody } from './native-body.js';

export const nativeDecodedLane: Lane = {
  native: true,
  body: nativeBody,
  answer: (l) => decodedStream(l, l.providerFormat === l.info.clientFormat),
};
