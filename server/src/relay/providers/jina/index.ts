// Jina AI (channel type 38): embeddings and rerank only, at OpenAI's `/v1` paths with a Bearer key. Chat and every
// other endpoint are not declared, so they are refused before anything is sent (new-api answers "invalid relay mode").
import { openaiCompatible, withVendorMessage } from '../openai/compatible.js';

export const jinaAdaptor = openaiCompatible({
  id: 'jina',
  types: [38],
  apiPath: '/v1',
  serves: ['embeddings', 'rerank'],
  // Jina's errors are FastAPI's: {detail: "…"}, or a validation error's {detail: [{msg, loc}]}
  parseError: withVendorMessage((j) => (typeof j?.detail === 'string' ? j.detail : j?.detail?.[0]?.msg)),
});
