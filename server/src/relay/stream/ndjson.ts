// The `ndjson` framing (stream/framing.ts): newline-delimited JSON, one JSON object a line, as Cohere's v1 chat streams
// it. Bytes arrive split anywhere (inside a UTF-8 character, a line or a CRLF); whole lines come out as events. A line
// that is not a JSON object (an SSE `data:` frame) is not this framing: it throws, and the stream fails as a bad
// response rather than being read as something else.
import { StringDecoder } from 'node:string_decoder';
import type { EventFraming, FramedEvent } from './framing.js';

export function ndjsonFraming(): EventFraming {
  const decoder = new StringDecoder('utf8');
  let buf = '';
  const line = (text: string): FramedEvent[] => {
    const data = text.trim();
    if (!data) return [];
    if (data[0] !== '{') throw new Error('upstream stream line is not a JSON object');
    return [{ data }];
  };
  return {
    push(bytes) {
      buf += decoder.write(bytes);
      const out: FramedEvent[] = [];
      let at = buf.indexOf('\n');
      while (at >= 0) {
        out.push(...line(buf.slice(0, at)));
        buf = buf.slice(at + 1);
        at = buf.indexOf('\n');
      }
      return out;
    },
    end() {
      const rest = buf + decoder.end();
      buf = '';
      return line(rest);
    },
  };
}
