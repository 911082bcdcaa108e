// The `whole-json` framing (stream/framing.ts): an upstream that cannot stream (PaLM's generateMessage) answers a
// stream request with one JSON document, given to the decoder as one event once the body has ended.
import { StringDecoder } from 'node:string_decoder';
import type { EventFraming } from './framing.js';

export function wholeJsonFraming(): EventFraming {
  const decoder = new StringDecoder('utf8');
  let text = '';
  return {
    push(bytes) {
      text += decoder.write(bytes);
      return [];
    },
    end() {
      const data = (text + decoder.end()).trim();
      text = '';
      if (!data) return [];
      if (data[0] !== '{') throw new Error('upstream answer is not a JSON object');
      return [{ data }];
    },
  };
}
