// Channel facts of Jina AI: a plain API key. Jina's API lists no models; the console offers its embedding and rerank
// models.
import { plainFacts, type ChannelFacts } from '../channel-facts-contract.js';

export const JINA_MODELS: readonly string[] = [
  'jina-embeddings-v3',
  'jina-embeddings-v2-base-en',
  'jina-embeddings-v2-base-zh',
  'jina-clip-v1',
  'jina-clip-v2',
  'jina-reranker-v2-base-multilingual',
  'jina-reranker-m0',
  'jina-colbert-v2',
];

export const jinaChannelFacts = (): ChannelFacts => plainFacts({ models: { fixed: JINA_MODELS } });
