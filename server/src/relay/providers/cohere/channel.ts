// Channel facts of Cohere: a plain API key. Cohere's model list (/v1/models) is not OpenAI's shape, so the console
// offers new-api's list.
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const COHERE_MODELS: readonly string[] = [
  'command',
  'command-r',
  'command-r-plus',
  'command-r-08-2024',
  'command-r-plus-08-2024',
  'command-r7b-12-2024',
  'command-a-03-2025',
  'command-light',
  'embed-english-v3.0',
  'embed-multilingual-v3.0',
  'rerank-english-v3.0',
  'rerank-multilingual-v3.0',
  'rerank-v3.5',
];

export const cohereChannelFacts = (): ChannelFacts => plainFacts({ models: { fixed: COHERE_MODELS } });
