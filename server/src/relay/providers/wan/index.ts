// Alibaba's Wan video models on Ali channels (type 17, whose chat requests are the ali provider's): DashScope's
// asynchronous video synthesis through the task engine (relay/tasks/), no channel type of its own.
//   submit  POST {base}/api/v1/services/aigc/video-generation/video-synthesis   with `X-DashScope-Async: enable`
//   fetch   GET  {base}/api/v1/tasks/{id}                                        one task per call
// both with `Authorization: Bearer <key>`.
import { defineProvider } from '../manifest.js';
import { openaiAdaptor } from '../openai/index.js';
import type { ProviderChannel, TaskAdaptor } from '../types.js';
import { checkWanSubmit, readWanFetch, readWanSubmit, wanPriceUnits, wanVideoUrl } from './adaptor.js';

const root = (channel: ProviderChannel) => channel.baseUrl.replace(/\/+$/, '');
const auth = (channel: ProviderChannel) => ({ authorization: `Bearer ${channel.key}`, accept: 'application/json' });

export const wanTask: TaskAdaptor = {
  platform: 'wan',
  fetchBatch: 1,
  alsoOnTypes: [17],
  validate(_action, body) {
    const c = checkWanSubmit(body);
    if (!c.ok) return { ok: false, code: 'invalid_request', message: c.message };
    return { ok: true, action: 'generate', model: c.model, body: c.body };
  },
  priceName: (model) => model,
  priceUnits: wanPriceUnits,
  buildSubmit(channel, _action, body, { upstreamModel } = {}) {
    return {
      method: 'POST',
      url: `${root(channel)}/api/v1/services/aigc/video-generation/video-synthesis`,
      headers: { ...auth(channel), 'content-type': 'application/json', 'x-dashscope-async': 'enable' },
      body: JSON.stringify({ ...body, model: upstreamModel ?? body.model }),
    };
  },
  readSubmit: readWanSubmit,
  buildFetch(channel, ids) {
    return {
      method: 'GET',
      url: `${root(channel)}/api/v1/tasks/${encodeURIComponent(ids[0])}`,
      headers: auth(channel),
    };
  },
  readFetch: (status, body, ids) => readWanFetch(status, body, ids?.[0]),
  resultUrl: (_publicId, data) => wanVideoUrl(data),
};

export const wanAdaptor = defineProvider({
  id: 'wan',
  types: [],
  endpoints: {},
  target: (info) => ({ origin: root(info.channel), path: '/api/v1' }),
  headers: (info) => ({ authorization: `Bearer ${info.channel.key}` }),
  supportsStreamOptions: () => false,
  parseError: (status, body, h) => openaiAdaptor.parseError(status, body, h),
  task: wanTask,
});
