// AWS event-stream framing for the translated-lane pump (stream/translate.ts): Bedrock's binary frames → the Claude
// events they carry. A stream that ends inside a frame was cut short: an error, never a silent end.
import { BedrockEventDecoder } from './aws-eventstream.js';
import type { EventFraming } from './framing.js';

export function awsEventFraming(): EventFraming {
  const decoder = new BedrockEventDecoder();
  return {
    push: (bytes) => decoder.push(bytes),
    end() {
      if (decoder.leftover > 0) throw new Error('upstream event stream ended inside a frame');
      return [];
    },
  };
}
