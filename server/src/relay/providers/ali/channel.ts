// Channel facts of Alibaba DashScope: a plain API key; `other` is the DashScope plugin sent as `X-DashScope-Plugin`
// (optional). DashScope's compatible mode lists models at /compatible-mode/v1/models, which the console's listing
// does not reach from the base URL, so it offers new-api's list.
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const ALI_MODELS: readonly string[] = [
  'qwen-turbo',
  'qwen-plus',
  'qwen-max',
  'qwen-max-longcontext',
  'qwen-long',
  'qwen-vl-max',
  'qwen3-235b-a22b',
  'text-embedding-v1',
  'text-embedding-v3',
  'gte-rerank',
  'gte-rerank-v2',
  // image generation (images.ts): asynchronous wanx tasks, synchronous qwen-image
  'wanx-v1',
  'wanx2.1-t2i-turbo',
  'wanx2.1-t2i-plus',
  'qwen-image',
];

export const aliChannelFacts = (): ChannelFacts =>
  plainFacts({ other: { kind: 'plugin', hint: 'WebSearch' }, models: { fixed: ALI_MODELS } });
