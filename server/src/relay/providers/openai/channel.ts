// Channel facts of the OpenAI-compatible types: a plain bearer key, one channel per line. Custom (8) and Xinference
// (47) have no default address, so their channels need a base URL. Models are listed as OpenAI's; the balance is
// queried where the vendor has an endpoint for it (balance.ts).
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';
import { openaiBalance } from './balance.js';

const CUSTOM = 8;
const XINFERENCE = 47;

export function openaiChannelFacts(type: number): ChannelFacts {
  return plainFacts({
    keyHint: type === 1 ? 'sk-...' : '',
    baseUrlRequired: type === CUSTOM || type === XINFERENCE,
    balance: openaiBalance(type),
  });
}
