// Sora (channel type 55, and OpenAI channels of type 1 that sell it): OpenAI's video API as an asynchronous task
// platform. No chat endpoint; its `task` slot is what the task engine (relay/tasks/) calls:
//   create  POST {base}/v1/videos                 JSON, or the client's multipart form byte for byte (its boundary)
//   remix   POST {base}/v1/videos/{id}/remix       {"prompt"}
//   fetch   GET  {base}/v1/videos/{id}             one video per call (fetchBatch 1)
//   content GET  {base}/v1/videos/{id}/content     streamed by relay/tasks/video-content.ts
// all with Authorization: Bearer <key>.
import { boundaryOf, replaceFormField } from '../../multipart.js';
import { defineProvider } from '../manifest.js';
import { openaiAdaptor } from '../openai/index.js';
import type { ProviderChannel, TaskAdaptor } from '../types.js';
import { checkSoraSubmit, readSoraFetch, readSoraSubmit, soraPriceUnits } from './adaptor.js';

/** The form with its `model` field set: replaced where it has one, else added as its first field. */
function withFormModel(raw: Buffer, boundary: string, model: string): Buffer {
  const replaced = replaceFormField(raw, boundary, 'model', model);
  if (replaced !== raw) return replaced;
  const part = `--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\n${model}\r\n`;
  return Buffer.concat([Buffer.from(part), raw]);
}

function base(channel: ProviderChannel): string {
  return channel.baseUrl.replace(/\/+$/, '');
}

export const soraTask: TaskAdaptor = {
  platform: 'sora',
  fetchBatch: 1,
  alsoOnTypes: [1],
  validate(action, body, raw) {
    const c = checkSoraSubmit(action, body, raw);
    if (!c.ok) return { ok: false, code: 'invalid_request', message: c.message };
    return { ok: true, action, model: c.model, body: c.body };
  },
  priceName: (model) => model,
  priceUnits: soraPriceUnits,
  buildSubmit(channel, action, body, { raw, origin, upstreamModel } = {}) {
    const authorization = `Bearer ${channel.key}`;
    if (action === 'remix')
      return {
        method: 'POST',
        url: `${base(channel)}/v1/videos/${encodeURIComponent(origin ?? '')}/remix`,
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: body.prompt }),
      };
    const model = upstreamModel ?? body.model;
    // a form goes on as the client sent it, its files and boundary untouched; only a mapped model is written in
    const boundary = raw && boundaryOf(raw.contentType);
    if (raw && boundary)
      return {
        method: 'POST',
        url: `${base(channel)}/v1/videos`,
        headers: { authorization, 'content-type': raw.contentType },
        body: model === body.model ? raw.bytes : withFormModel(raw.bytes, boundary, String(model)),
      };
    const { prompt, seconds, size, input_reference } = body;
    const json: Record<string, unknown> = { model, prompt, seconds: String(seconds), size };
    if (input_reference !== undefined) json.input_reference = input_reference;
    return {
      method: 'POST',
      url: `${base(channel)}/v1/videos`,
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify(json),
    };
  },
  readSubmit: readSoraSubmit,
  buildFetch: (channel, ids) => ({
    method: 'GET',
    url: `${base(channel)}/v1/videos/${encodeURIComponent(ids[0])}`,
    headers: { authorization: `Bearer ${channel.key}` },
  }),
  readFetch: (status, body, ids) => readSoraFetch(status, body, ids?.[0]),
  // the upstream's content is served through the gateway (video-content.ts), as new-api does
  resultUrl: (publicId) => `/v1/videos/${publicId}/content`,
  content: (channel, id, _data, { variant } = {}) => ({
    kind: 'channel',
    url: `${base(channel)}/v1/videos/${encodeURIComponent(id)}/content${variant ? `?variant=${encodeURIComponent(variant)}` : ''}`,
    headers: { authorization: `Bearer ${channel.key}` },
  }),
};

export const soraAdaptor = defineProvider({
  id: 'sora',
  types: [55],
  endpoints: {},
  target: (info) => ({ origin: base(info.channel), path: '/v1' }),
  headers: (info) => ({ authorization: `Bearer ${info.channel.key}` }),
  supportsStreamOptions: () => false,
  parseError: (status, body, headers) => openaiAdaptor.parseError(status, body, headers),
  task: soraTask,
});
