// The Anthropic Messages wire format (POST /v1/messages): used when a Claude client calls the gateway and when the
// gateway calls Anthropic, Bedrock Claude or Vertex Claude upstream.
import type { FormatCodec } from '../codec.js';
import { errorBody, parseError } from './errors.js';
import { requestFromHub } from './request-from-hub.js';
import { requestToHub } from './request-to-hub.js';
import { responseFromHub, responseToHub } from './response.js';
import { streamToHub } from './stream-decode.js';
import { streamFromHub } from './stream-encode.js';
import { usageToHub } from './usage.js';

export const anthropicCodec: FormatCodec = {
  name: 'anthropic',
  claudeUsage: true,
  maskedAsHub: true,
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

export {
  anthropicServerTools,
  countTokensRequestToHub,
  countTokensResponse,
  validateClaudeRequest,
} from './request-to-hub.js';
export { ClaudeStreamError } from './stream-decode.js';
export { claudeErrorType } from './errors.js';
