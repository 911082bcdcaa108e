// MokaAI (channel type 44): its m3e embedding models at `{base}/embeddings` (no /v1), Bearer key. Embeddings only:
// new-api sends any other model to `{base}/chat/`, an endpoint Moka does not document.
import { openaiCompatible } from '../openai/compatible.js';

export const mokaAdaptor = openaiCompatible({
  id: 'moka',
  types: [44],
  apiPath: '',
  serves: ['embeddings'],
});
