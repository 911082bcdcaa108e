// The `ws-json` framing for the stream pumps (stream/translate.ts): an upstream websocket (transport/websocket.ts,
// its stream() hands each frame over as one chunk) whose every text frame is one JSON event, as iFlytek Spark and
// the realtime APIs send them. A lane then reads a websocket as it reads an SSE stream: the events carry the frame's
// JSON text, which the provider's decoder parses. Empty frames (keep-alives) are skipped.
import type { EventFraming } from './translate.js';

export function wsJsonFraming(): EventFraming {
  return {
    push(frame) {
      // a whole frame: no character is split across two of them (unlike an HTTP body's chunks)
      const data = frame.toString('utf8');
      const first = /\S/.exec(data)?.[0];
      if (first === undefined) return [];
      if (first !== '{' && first !== '[') throw new Error('upstream websocket frame is not JSON');
      return [{ data }];
    },
    end: () => [],
  };
}
