// The OpenAI Responses API as a wire format (`POST /v1/responses`). As a client format it lets a Responses client
// use a channel that only speaks Chat Completions (DeepSeek, Moonshot, Claude and Gemini through the hub); as a
// provider format it lets a Responses-speaking upstream serve the other formats' clients.
import { parseOpenAIStyleError } from '../openai/errors.js';
import type { FormatCodec } from '../codec.js';
import { openaiUsageToHub } from '../openai/index.js';
import { errorBody } from './errors.js';
import { requestFromHub } from './request-from-hub.js';
import { requestToHub } from './request-to-hub.js';
import { responseFromHub, responseToHub } from './response.js';
import { ResponsesStreamDecoder } from './stream-decoder.js';
import { ResponsesStreamEncoder } from './stream-encoder.js';

export const responsesCodec: FormatCodec = {
  name: 'responses',
  requestToHub,
  requestFromHub,
  responseToHub,
  responseFromHub,
  streamToHub: (opts) => new ResponsesStreamDecoder(opts),
  streamFromHub: (opts) => new ResponsesStreamEncoder(opts),
  usageToHub: openaiUsageToHub,
  parseError: parseOpenAIStyleError,
  errorBody,
};

export type { ResponsesEncoderOptions } from './shape.js';
