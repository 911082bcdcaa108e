// Coze (channel type 49): a personal access token as a Bearer token, the bot in the channel's `other`; every
// client's request goes through the hub to `{base}/v3/chat` (wire.ts), always streamed from Coze. Errors Coze reports
// in a 200 answer's {code, msg} fail the attempt with nothing charged (errors.ts).
import { splitBase } from '../openai/index.js';
import { defineProvider } from '../manifest.js';
import { cozeCodec, cozeRequestFromHub } from './wire.js';
import { cozeAnswerError, parseCozeError } from './errors.js';

export const cozeAdaptor = defineProvider({
  id: 'coze',
  types: [49],
  codec: cozeCodec,
  endpoints: {
    chat: {
      target(info) {
        const { origin, prefix } = splitBase(info.channel.baseUrl);
        return { origin, path: `${prefix}/v3/chat` };
      },
      fromHub: (info, hub) => cozeRequestFromHub(hub, info.channel.other.trim()),
    },
  },
  supportsStreamOptions: () => false,
  headers: (info) => ({ authorization: `Bearer ${info.channel.key}` }),
  answerError: (_info, body) => cozeAnswerError(body),
  parseError: parseCozeError,
});
