// Vidu (channel type 52): its video API as an asynchronous task platform (relay/tasks/). No chat endpoint.
//   submit  POST {base}/ent/v2/{text2video|img2video|start-end2video|reference2video}   Vidu's payload (adaptor.ts)
//   fetch   GET  {base}/ent/v2/tasks/{id}/creations                                      one task per call
// with `Authorization: Token <key>` (not Bearer).
import { defineProvider } from '../manifest.js';
import { openaiAdaptor } from '../openai/index.js';
import type { ProviderChannel, TaskAdaptor } from '../types.js';
import { checkViduSubmit, readViduFetch, readViduSubmit, viduPath, viduPriceUnits, viduResultUrl } from './adaptor.js';

function base(channel: ProviderChannel): string {
  return `${channel.baseUrl.replace(/\/+$/, '')}/ent/v2`;
}

const auth = (channel: ProviderChannel) => ({ authorization: `Token ${channel.key}`, accept: 'application/json' });

export const viduTask: TaskAdaptor = {
  platform: 'vidu',
  fetchBatch: 1,
  validate(_action, body) {
    const c = checkViduSubmit(body);
    if (!c.ok) return { ok: false, code: 'invalid_request', message: c.message };
    return { ok: true, action: c.action, model: c.model, body: c.body };
  },
  priceName: (model) => model,
  priceUnits: viduPriceUnits,
  buildSubmit(channel, action, body, { upstreamModel } = {}) {
    let model = String(upstreamModel ?? body.model);
    // reference images take the plain viduq2 only, without a pro or turbo suffix (Vidu's documentation, new-api's)
    if (action === 'referenceGenerate' && model.includes('viduq2')) model = 'viduq2';
    return {
      method: 'POST',
      url: `${base(channel)}${viduPath(action)}`,
      headers: { ...auth(channel), 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, model }),
    };
  },
  readSubmit: readViduSubmit,
  buildFetch(channel, ids) {
    return {
      method: 'GET',
      url: `${base(channel)}/tasks/${encodeURIComponent(ids[0])}/creations`,
      headers: auth(channel),
    };
  },
  readFetch: (status, body, ids) => readViduFetch(status, body, ids?.[0]),
  resultUrl: (_publicId, data) => viduResultUrl(data),
};

export const viduAdaptor = defineProvider({
  id: 'vidu',
  types: [52],
  endpoints: {},
  target: (info) => ({ origin: info.channel.baseUrl.replace(/\/+$/, ''), path: '/ent/v2' }),
  headers: () => ({}),
  supportsStreamOptions: () => false,
  parseError: (status, body, h) => openaiAdaptor.parseError(status, body, h),
  task: viduTask,
});
