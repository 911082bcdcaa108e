// Suno (channel type 36): an asynchronous task platform, no chat. Its manifest declares no endpoint, so no chat,
// embeddings or image request ever goes to a Suno channel; its `task` slot is what the task engine (relay/tasks/)
// calls: the checks and answers of adaptor.ts, and the requests of Suno's API (sunoapi's, as new-api speaks it):
//   submit  POST {base}/suno/submit/{music|lyrics}   Authorization: Bearer <key>   → {code:"success", data:"<id>"}
//   fetch   POST {base}/suno/fetch {"ids":[…]}       Authorization: Bearer <key>   → {code:"success", data:[…]}
import { defineProvider } from '../manifest.js';
import { openaiAdaptor } from '../openai/index.js';
import type { ProviderChannel, TaskAdaptor, TaskRequest } from '../types.js';
import { readSunoFetchAnswer, readSunoSubmitAnswer, sunoModelName, validateSunoSubmit } from './adaptor.js';

/** new-api's messages for the codes validateSunoSubmit gives */
const MESSAGES: Record<string, string> = {
  invalid_action: '不支持的操作，只能是 MUSIC 或 LYRICS',
  invalid_request: '无效的请求体',
  prompt_empty: 'prompt 不能为空',
};

function base(channel: ProviderChannel): string {
  return channel.baseUrl.replace(/\/+$/, '');
}

function post(channel: ProviderChannel, path: string, body: unknown): TaskRequest {
  return {
    method: 'POST',
    url: `${base(channel)}${path}`,
    headers: { authorization: `Bearer ${channel.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
}

export const sunoTask: TaskAdaptor = {
  platform: 'suno',
  // ids asked for in one fetch: new-api asks for all of a channel's at once; a bound keeps a body small
  fetchBatch: 50,
  validate(action, body) {
    const v = validateSunoSubmit(action, body);
    if (!v.ok) return { ok: false, code: v.code, message: MESSAGES[v.code] ?? v.code };
    return { ok: true, action: v.action, model: sunoModelName(v.action), body: { ...v.request } };
  },
  priceName: (model) => model,
  buildSubmit: (channel, action, body) => post(channel, `/suno/submit/${action.toLowerCase()}`, body),
  readSubmit: (status, body) => (status >= 200 && status < 300 ? readSunoSubmitAnswer(body) : null),
  buildFetch: (channel, ids) => post(channel, '/suno/fetch', { ids }),
  readFetch: (status, body) => (status >= 200 && status < 300 ? readSunoFetchAnswer(body) : null),
};

export const sunoAdaptor = defineProvider({
  id: 'suno',
  types: [36],
  endpoints: {},
  target: (info) => ({ origin: base(info.channel), path: '/suno' }),
  headers: (info) => ({ authorization: `Bearer ${info.channel.key}` }),
  supportsStreamOptions: () => false,
  parseError: (status, body, headers) => openaiAdaptor.parseError(status, body, headers),
  task: sunoTask,
});
