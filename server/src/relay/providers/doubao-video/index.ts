// Doubao video (channel type 54, and VolcEngine's type 45, whose chat requests are another line's): Seedance video
// tasks on VolcEngine Ark through the task engine (relay/tasks/). No chat endpoint of its own.
//   submit  POST {base}/api/v3/contents/generations/tasks        {model, content, …} (adaptor.ts)
//   fetch   GET  {base}/api/v3/contents/generations/tasks/{id}   one task per call
// both with `Authorization: Bearer <key>`.
import { defineProvider } from '../manifest.js';
import { openaiAdaptor } from '../openai/index.js';
import type { ProviderChannel, TaskAdaptor } from '../types.js';
import { checkDoubaoSubmit, doubaoPriceUnits, doubaoVideoUrl, readDoubaoFetch, readDoubaoSubmit } from './adaptor.js';

function tasksUrl(channel: ProviderChannel): string {
  return `${channel.baseUrl.replace(/\/+$/, '')}/api/v3/contents/generations/tasks`;
}

const auth = (channel: ProviderChannel) => ({ authorization: `Bearer ${channel.key}`, accept: 'application/json' });

export const doubaoVideoTask: TaskAdaptor = {
  platform: 'doubao-video',
  fetchBatch: 1,
  alsoOnTypes: [45],
  validate(_action, body) {
    const c = checkDoubaoSubmit(body);
    if (!c.ok) return { ok: false, code: 'invalid_request', message: c.message };
    return { ok: true, action: 'generate', model: c.model, body: c.body };
  },
  priceName: (model) => model,
  priceUnits: doubaoPriceUnits,
  buildSubmit(channel, _action, body, { upstreamModel } = {}) {
    return {
      method: 'POST',
      url: tasksUrl(channel),
      headers: { ...auth(channel), 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, model: upstreamModel ?? body.model }),
    };
  },
  readSubmit: readDoubaoSubmit,
  buildFetch(channel, ids) {
    return { method: 'GET', url: `${tasksUrl(channel)}/${encodeURIComponent(ids[0])}`, headers: auth(channel) };
  },
  readFetch: (status, body, ids) => readDoubaoFetch(status, body, ids?.[0]),
  resultUrl: (_publicId, data) => doubaoVideoUrl(data),
};

export const doubaoVideoAdaptor = defineProvider({
  id: 'doubao-video',
  types: [54],
  endpoints: {},
  target: (info) => ({ origin: info.channel.baseUrl.replace(/\/+$/, ''), path: '/api/v3' }),
  headers: () => ({}),
  supportsStreamOptions: () => false,
  parseError: (status, body, h) => openaiAdaptor.parseError(status, body, h),
  task: doubaoVideoTask,
});
