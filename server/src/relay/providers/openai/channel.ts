// Channel facts of the OpenAI-compatible types: a plain bearer key, one channel per line. Custom (8) and Xinference
// (47) have no default address, so their channels need a base URL. Models are listed as OpenAI's; the balance is
// queried where the vendor has an endpoint for it (balance.ts).
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';
import { openaiBalance } from './balance.js';

/**
 * Vendors whose API is OpenAI's own chat / embeddings API under `{base}/v1/...` (or the path the OpenAI adaptor
 * sets for them) with `Authorization: Bearer <key>`: 1 OpenAI, 6/7/9/10/12/13 (the older OpenAI resellers new-api
 * still knows), 8 custom (full URL), 19 360, 20 OpenRouter,
 * 22 FastGPT, 25 Moonshot, 27 Perplexity, 31 Yi, 40 SiliconFlow, 42 Mistral, 43 DeepSeek, 45 VolcEngine Ark,
 * 47 Xinference, 48 xAI. Vendors with their own path scheme, key format or protocol have their own folder and line
 * in the registry (channel-facts.ts).
 */
export const OPENAI_COMPATIBLE_TYPES: readonly number[] = [
  1, 6, 7, 8, 9, 10, 12, 13, 19, 20, 22, 25, 27, 31, 40, 42, 43, 45, 47, 48,
];

const CUSTOM = 8;
const XINFERENCE = 47;

export function openaiChannelFacts(type: number): ChannelFacts {
  return plainFacts({
    keyHint: type === 1 ? 'sk-...' : '',
    baseUrlRequired: type === CUSTOM || type === XINFERENCE,
    balance: openaiBalance(type),
  });
}
