// Zhipu's v3 API (ChatGLM, channel type 16; the v4 API, OpenAI's shape, is type 26 in zhipu/): chat at
// `{base}/api/paas/v3/model-api/{model}/invoke`, or `/sse-invoke` for a stream, each request carrying a JWT signed from
// the key (token.ts) in `Authorization`. The body is `{prompt: [turns], temperature, top_p}`: text turns alternating
// user and assistant, the system prompt as a first user turn Zhipu's assistant acknowledges. Zhipu answers in its own
// envelope and named-event stream (answers.ts), read as OpenAI's.
import type { RelayInfo } from '../types.js';
import { defineProvider } from '../manifest.js';
import { splitBase } from '../openai/index.js';
import { openaiCodec } from '../../formats/openai/index.js';
import { textConversation, type TextTurn } from '../text-chat.js';
import { parseZhipuV3Error, zhipuV3Answers } from './answers.js';
import { zhipuV3Credential } from './token.js';

const VENDOR = '智谱 V3';
/** the assistant's turn after a system prompt sent as the first user turn (v3 knows no system role) */
export const SYSTEM_ACK = '好的。';

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

export function zhipuV3Body(body: Record<string, any>): Record<string, unknown> {
  const { system, turns } = textConversation(body, VENDOR);
  const prompt: TextTurn[] = system
    ? [{ role: 'user', content: system }, { role: 'assistant', content: SYSTEM_ACK }, ...turns]
    : turns;
  const out: Record<string, unknown> = { prompt };
  // v3 takes both in the open interval (0, 1)
  if (typeof body.temperature === 'number') out.temperature = clamp(body.temperature, 0.01, 0.99);
  if (typeof body.top_p === 'number') out.top_p = clamp(body.top_p, 0.01, 0.99);
  return out;
}

function replaceBody(body: Record<string, unknown>, out: Record<string, unknown>): true {
  for (const k of Object.keys(body)) delete body[k];
  Object.assign(body, out);
  return true;
}

export const zhipuV3Adaptor = defineProvider({
  id: 'zhipuv3',
  types: [16],
  endpoints: {
    chat: {
      target(info: RelayInfo) {
        const { origin, prefix } = splitBase(info.channel.baseUrl);
        const action = info.isStream ? 'sse-invoke' : 'invoke';
        return { origin, path: `${prefix}/api/paas/v3/model-api/${encodeURIComponent(info.upstreamModel)}/${action}` };
      },
      convertRequest: (_info, body) => replaceBody(body, zhipuV3Body(body)),
      fromHub: (info, hub) =>
        zhipuV3Body(openaiCodec.requestFromHub(hub, { model: info.upstreamModel, stream: info.isStream })),
    },
  },
  supportsStreamOptions: () => false,
  headers: () => ({}),
  credential: zhipuV3Credential,
  async authorize(info, req) {
    if (!info.settings.credentials) throw new Error('Zhipu tokens are not available');
    req.headers.authorization = await info.settings.credentials.get(zhipuV3Credential, info.channel.key, info.channel);
  },
  answers: zhipuV3Answers,
  parseError: parseZhipuV3Error,
});
