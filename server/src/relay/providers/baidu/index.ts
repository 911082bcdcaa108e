// Baidu ERNIE v1 (Wenxin Workshop, channel type 15): chat at `{base}/rpc/2.0/ai_custom/v1/wenxinworkshop/chat/<endpoint>`
// and embeddings at `…/embeddings/<endpoint>`, the endpoint named per model (Baidu's own names, not the model's), with
// an access token in the query. The token comes from the key `API Key|Secret Key` (token.ts), kept by the relay's
// credential cache. Baidu answers in its own JSON and stream (answers.ts), read as OpenAI's, its errors inside
// HTTP 200 made real ones; an expired token is exchanged again and the request resent once (lanes/run.ts).
import type { EndpointEntry, RelayInfo } from '../types.js';
import { defineProvider } from '../manifest.js';
import { splitBase } from '../openai/index.js';
import { openaiCodec } from '../../formats/openai/index.js';
import { baiduAnswers, parseBaiduError } from './answers.js';
import { baiduChatBody, baiduEmbeddingBody } from './request.js';
import { baiduCredential } from './token.js';

const API = '/rpc/2.0/ai_custom/v1/wenxinworkshop';

/** Baidu's endpoint names of the models whose name is not their endpoint (new-api's table). */
const ENDPOINTS: Record<string, string> = {
  'ERNIE-4.0': 'completions_pro',
  'ERNIE-Bot-4': 'completions_pro',
  'ERNIE-4.0-8K': 'completions_pro',
  'ERNIE-Bot': 'completions',
  'ERNIE-3.5-8K': 'completions',
  'ERNIE-Bot-turbo': 'eb-instant',
  'ERNIE-Lite-8K-0922': 'eb-instant',
  'ERNIE-Bot-8K': 'ernie_bot_8k',
  'ERNIE-Speed': 'ernie_speed',
  'ERNIE-Speed-8K': 'ernie_speed',
  'ERNIE-Lite-8K': 'ernie-lite-8k',
  'ERNIE-Lite-8K-0308': 'ernie-lite-8k',
  'ERNIE-Character-8K': 'ernie-char-8k',
  'ERNIE-Functions-8K': 'ernie-func-8k',
  'BLOOMZ-7B': 'bloomz_7b1',
  'Embedding-V1': 'embedding-v1',
  'bge-large-zh': 'bge_large_zh',
  'bge-large-en': 'bge_large_en',
  'tao-8k': 'tao_8k',
};

/** The endpoint of a model: the table's, else the model's name in lower case (ERNIE-Speed-128K → ernie-speed-128k). */
export function baiduEndpoint(model: string): string {
  return ENDPOINTS[model] ?? model.toLowerCase();
}

const targetOf =
  (kind: 'chat' | 'embeddings') =>
  (info: RelayInfo): { origin: string; path: string } => {
    const { origin, prefix } = splitBase(info.channel.baseUrl);
    return { origin, path: `${prefix}${API}/${kind}/${encodeURIComponent(baiduEndpoint(info.upstreamModel))}` };
  };

/** Replaces a body's fields with `out`'s (the engine serialises the object it handed over). */
function replaceBody(body: Record<string, unknown>, out: Record<string, unknown>): true {
  for (const k of Object.keys(body)) delete body[k];
  Object.assign(body, out);
  return true;
}

const chat: EndpointEntry = {
  target: targetOf('chat'),
  convertRequest: (_info, body) => replaceBody(body, baiduChatBody(body)),
  fromHub: (info, hub) =>
    baiduChatBody(openaiCodec.requestFromHub(hub, { model: info.upstreamModel, stream: info.isStream })),
};

const embeddings: EndpointEntry = {
  target: targetOf('embeddings'),
  convertRequest: (_info, body) => replaceBody(body, baiduEmbeddingBody(body)),
};

export const baiduAdaptor = defineProvider({
  id: 'baidu',
  types: [15],
  endpoints: { chat, embeddings },
  // Baidu's stream always ends with its usage; it knows no stream_options
  supportsStreamOptions: () => false,
  headers: () => ({}),
  credential: baiduCredential,
  async authorize(info, req) {
    if (!info.settings.credentials) throw new Error('Baidu access tokens are not available');
    const token = await info.settings.credentials.get(baiduCredential, info.channel.key, info.channel);
    req.path += `${req.path.includes('?') ? '&' : '?'}access_token=${encodeURIComponent(token)}`;
  },
  answers: baiduAnswers,
  // Baidu answers its errors inside HTTP 200 (answers.ts); a non-200 is its API gateway's or a proxy's
  parseError: parseBaiduError,
});
