// Adaptor lookup by channel type. Types without an adaptor of their own use the OpenAI one, as new-api does.
// To add a provider: create providers/<name>/index.ts implementing Adaptor (types.ts) and map its type codes here.
import { azureAdaptor } from './azure/index.js';
import { ollamaAdaptor } from './ollama/index.js';
import { openaiAdaptor } from './openai/index.js';
import type { Adaptor } from './types.js';

const BY_TYPE = new Map<number, Adaptor>([
  [3, azureAdaptor],
  [4, ollamaAdaptor],
]);

export function adaptorFor(channelType: number): Adaptor {
  return BY_TYPE.get(channelType) ?? openaiAdaptor;
}

export type { Adaptor, RelayInfo, UpstreamTarget, UpstreamUsage, ProviderError } from './types.js';
