// iFlytek Spark (channel type 18): chat over a websocket at `{base}/{version}/chat` (ws(s) for the base URL's
// http(s)), the URL signed with the key's APISecret (sign.ts), the request one JSON frame with the app id and the
// version's `domain`, the answer frames read as OpenAI's chunks (answers.ts; transport/ws-exchange.ts carries them).
// The version is the model's suffix (SparkDesk-v3.5), else the channel's `other`, else v1.1.
import type { RelayInfo } from '../types.js';
import { defineProvider } from '../manifest.js';
import { splitBase } from '../openai/index.js';
import { openaiCodec } from '../../formats/openai/index.js';
import { textConversation } from '../text-chat.js';
import { parseSparkError, sparkAnswers } from './answers.js';
import { SPARK_DOMAINS, splitSparkKey } from './channel.js';
import { sparkSignedQuery } from './sign.js';

const VENDOR = '讯飞星火';

/** The API version of a request: the model's suffix, else the channel's `other`, else v1.1. */
export function sparkVersion(info: Pick<RelayInfo, 'upstreamModel' | 'channel'>): string {
  const suffix = /-(v\d+\.\d+)$/.exec(info.upstreamModel)?.[1];
  if (suffix && SPARK_DOMAINS[suffix]) return suffix;
  const other = info.channel.other.trim();
  return SPARK_DOMAINS[other] ? other : 'v1.1';
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

export function sparkFrame(info: RelayInfo, body: Record<string, any>): Record<string, unknown> {
  const key = splitSparkKey(info.channel.key);
  const { system, turns } = textConversation(body, VENDOR);
  const text = [...(system ? [{ role: 'system', content: system }] : []), ...turns];
  const chat: Record<string, unknown> = { domain: SPARK_DOMAINS[sparkVersion(info)] };
  if (typeof body.temperature === 'number') chat.temperature = clamp(body.temperature, 0.01, 1);
  const max = body.max_completion_tokens ?? body.max_tokens;
  if (typeof max === 'number') chat.max_tokens = max;
  return {
    header: {
      app_id: key?.appId ?? '',
      ...(typeof body.user === 'string' && body.user ? { uid: body.user.slice(0, 32) } : {}),
    },
    parameter: { chat },
    payload: { message: { text } },
  };
}

function replaceBody(body: Record<string, unknown>, out: Record<string, unknown>): true {
  for (const k of Object.keys(body)) delete body[k];
  Object.assign(body, out);
  return true;
}

export const sparkAdaptor = defineProvider({
  id: 'spark',
  types: [18],
  carrier: 'websocket',
  endpoints: {
    chat: {
      target(info) {
        const { origin, prefix } = splitBase(info.channel.baseUrl);
        return { origin, path: `${prefix}/${sparkVersion(info)}/chat` };
      },
      convertRequest: (info, body) => replaceBody(body, sparkFrame(info, body)),
      fromHub: (info, hub) =>
        sparkFrame(info, openaiCodec.requestFromHub(hub, { model: info.upstreamModel, stream: true })),
    },
  },
  supportsStreamOptions: () => false,
  headers: () => ({}),
  // the URL is signed for each connection with the date of its opening
  credential: { kind: 'signed' },
  async authorize(info, req) {
    const key = splitSparkKey(info.channel.key);
    if (!key) throw new Error('Spark key must be "APPID|APISecret|APIKey"');
    const query = sparkSignedQuery({
      host: new URL(req.origin).host,
      path: req.path,
      date: new Date(),
      apiKey: key.apiKey,
      apiSecret: key.apiSecret,
    });
    req.path += `?${query}`;
  },
  answers: sparkAnswers,
  parseError: parseSparkError,
});
