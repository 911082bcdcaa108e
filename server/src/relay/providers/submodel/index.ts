// Submodel (channel type 53): OpenAI's chat API at `{base}/v1` (default https://llm.submodel.ai) with a Bearer key.
// It serves chat only (new-api relays nothing else to it); a Claude, Gemini or Responses client comes through the hub.
import { openaiCompatible } from '../openai/compatible.js';

export const submodelAdaptor = openaiCompatible({
  id: 'submodel',
  types: [53],
  apiPath: '/v1',
  serves: ['chat'],
});
