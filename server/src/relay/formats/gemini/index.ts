// The Gemini generateContent wire format: Gemini clients (@google/genai, the Gemini CLI) calling
// /v1beta/models/{model}:generateContent and :streamGenerateContent, and Gemini / Vertex AI Gemini upstreams.
import type { FormatCodec } from '../codec.js';
import { errorBody, parseError } from './errors.js';
import { requestToHub } from './request.js';
import { requestFromHub } from './request-from-hub.js';
import { responseFromHub, responseToHub } from './response.js';
import { streamToHub } from './stream-decode.js';
import { streamFromHub } from './stream-encode.js';
import { usageToHub } from './usage.js';

export const geminiCodec: FormatCodec = {
  name: 'gemini',
  decodedStreams: true,
  // streamGenerateContent answers SSE when asked `alt=sse`, else one JSON array
  clientFraming: (url) => (/[?&]alt=sse(?:&|#|$)/.test(url) ? 'sse' : 'json-array'),
  requestToHub,
  requestFromHub,
  responseToHub,
  responseFromHub,
  streamToHub,
  streamFromHub,
  usageToHub,
  parseError,
  errorBody,
};

export { GeminiStreamError } from './errors.js';
export { countTokensRequestToHub, geminiNativeTools } from './request.js';
export { countTokensResponse, geminiModel, geminiModelList } from './models.js';
export {
  batchEmbedResponseToOpenAI,
  batchEmbedToOpenAI,
  embedContentToOpenAI,
  openAIEmbeddingToBatchEmbed,
  openAIEmbeddingToGemini,
} from './embeddings.js';
