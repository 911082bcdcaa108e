// Channel facts of the OpenAI-compatible types: a plain bearer key, one channel per line. Custom (8) and Xinference
// (47) have no default address, so their channels need a base URL.
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

const CUSTOM = 8;
const XINFERENCE = 47;

export function openaiChannelFacts(type: number): ChannelFacts {
  return plainFacts({
    keyHint: type === 1 ? 'sk-...' : '',
    baseUrlRequired: type === CUSTOM || type === XINFERENCE,
  });
}
