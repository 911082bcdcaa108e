// MiniMax (channel type 35): the key as a Bearer token; chat at `{base}/v1/text/chatcompletion_v2` in OpenAI's shape
// (answers and streams pass through), text to speech at `{base}/v1/t2a_v2` (speech.ts), image generation at
// `{base}/v1/image_generation` (images.ts); a Claude client's messages go as they are to MiniMax's Anthropic-compatible
// endpoint `{base}/anthropic/v1/messages` (claude-path.ts). An error MiniMax reports in
// a 200 answer's base_resp is an upstream error: nothing is sent on or charged (errors.ts).
import { splitBase } from '../openai/index.js';
import { defineProvider } from '../manifest.js';
import type { RelayInfo } from '../types.js';
import { minimaxAnswerError, parseMinimaxError } from './errors.js';
import { minimaxSpeech } from './speech.js';
import { minimaxImages } from './images.js';
import { claudeClient, claudeHeaders, speaksClaude } from '../claude-path.js';

const at = (path: string) => (info: RelayInfo) => {
  const { origin, prefix } = splitBase(info.channel.baseUrl);
  return { origin, path: prefix + path };
};

export const minimaxAdaptor = defineProvider({
  id: 'minimax',
  types: [35],
  endpoints: {
    chat: { target: (info) => at(claudeClient(info) ? '/anthropic/v1/messages' : '/v1/text/chatcompletion_v2')(info) },
    audio_speech: minimaxSpeech,
    images: minimaxImages,
  },
  supportsStreamOptions: () => false,
  alsoSpeaks: speaksClaude,
  headers: (info) => ({ authorization: `Bearer ${info.channel.key}`, ...claudeHeaders(info) }),
  answerError: (_info, body) => minimaxAnswerError(body),
  parseError: parseMinimaxError,
});
