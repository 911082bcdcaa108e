// Baidu Qianfan v2 (channel type 46): OpenAI's API under `{base}/v2`. The channel's key is `token|appid`: the token
// goes as the Bearer token and the app id in Qianfan's own `appid` header (new-api's baidu_v2). The key's format is
// checked on save (channel.ts), so the split here always finds both parts.
import { openaiCompatible } from '../openai/compatible.js';
import { splitQianfanKey } from './channel.js';

export const qianfanAdaptor = openaiCompatible({
  id: 'qianfan',
  types: [46],
  apiPath: '/v2',
  serves: ['chat', 'embeddings', 'images', 'image_edits', 'rerank'],
  headers(info) {
    const { token, appid } = splitQianfanKey(info.channel.key);
    return { authorization: `Bearer ${token}`, appid };
  },
});
