// Channel facts of Zhipu GLM v4: a plain API key (sent raw, no JWT). Zhipu's v4 API lists no models, so the console
// offers new-api's list.
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const ZHIPU_MODELS: readonly string[] = [
  'glm-4-plus',
  'glm-4-air',
  'glm-4-airx',
  'glm-4-flash',
  'glm-4-long',
  'glm-4v',
  'glm-4v-plus',
  'glm-4.5',
  'glm-4.5-air',
  'glm-4.6',
  'embedding-2',
  'embedding-3',
  'cogview-3',
  'cogview-3-plus',
];

export const zhipuChannelFacts = (): ChannelFacts => plainFacts({ models: { fixed: ZHIPU_MODELS } });
