// Veo on the Gemini API (channels of type 24, whose chat requests are the gemini provider's): video tasks through
// the task engine (relay/tasks/), no relay endpoint of its own, no channel type of its own.
//   submit  POST {base}/v1beta/models/{model}:predictLongRunning   {instances: [{prompt}], parameters}
//   fetch   GET  {base}/v1beta/{operation name}                    one operation per call
// both with `x-goog-api-key: <key>`.
import { defineProvider } from '../manifest.js';
import { openaiAdaptor } from '../openai/index.js';
import type { ProviderChannel, TaskAdaptor } from '../types.js';
import { checkVeoSubmit, isOperationName, readVeoFetch, readVeoSubmit, veoPriceUnits, veoVideoUri } from './adaptor.js';

/** the API version Veo's long-running calls live under */
const VERSION = 'v1beta';

function base(channel: ProviderChannel): string {
  return `${channel.baseUrl.replace(/\/+$/, '')}/${VERSION}`;
}

export const veoTask: TaskAdaptor = {
  platform: 'veo',
  fetchBatch: 1,
  alsoOnTypes: [24],
  validate(action, body) {
    const c = checkVeoSubmit(body);
    if (!c.ok) return { ok: false, code: 'invalid_request', message: c.message };
    return { ok: true, action: 'textGenerate', model: c.model, body: c.body };
  },
  priceName: (model) => model,
  priceUnits: veoPriceUnits,
  buildSubmit(channel, _action, body, { upstreamModel } = {}) {
    const model = String(upstreamModel ?? body.model);
    return {
      method: 'POST',
      url: `${base(channel)}/models/${encodeURIComponent(model)}:predictLongRunning`,
      headers: { 'x-goog-api-key': channel.key, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ instances: [{ prompt: body.prompt }], parameters: body.parameters }),
    };
  },
  readSubmit: readVeoSubmit,
  buildFetch(channel, ids) {
    // the name came from the upstream: only a plain path of segments is asked for
    if (!isOperationName(ids[0])) throw new Error('invalid operation name');
    return {
      method: 'GET',
      url: `${base(channel)}/${ids[0]}`,
      headers: { 'x-goog-api-key': channel.key, accept: 'application/json' },
    };
  },
  readFetch: (status, body, ids) => readVeoFetch(status, body, ids?.[0]),
  // Google's URI opens only with the channel's key: the client is given the gateway's content route instead
  resultUrl: (publicId, data) => (veoVideoUri(data) ? `/v1/videos/${publicId}/content` : ''),
  content(channel, _id, data) {
    const uri = veoVideoUri(data);
    if (!uri) return { kind: 'refused', status: 404, message: '上游没有保存该视频', code: 'video_not_found' };
    // the key goes to the channel's own host only; a URI elsewhere is read as any address the upstream answered
    return sameOrigin(uri, channel.baseUrl)
      ? { kind: 'channel', url: uri, headers: { 'x-goog-api-key': channel.key } }
      : { kind: 'url', url: uri };
  },
};

function sameOrigin(a: string, b: string): boolean {
  try {
    return new URL(a).origin === new URL(b).origin;
  } catch {
    return false;
  }
}

export const veoAdaptor = defineProvider({
  id: 'veo',
  types: [],
  endpoints: {},
  target: (info) => ({ origin: info.channel.baseUrl.replace(/\/+$/, ''), path: `/${VERSION}` }),
  headers: (info) => ({ 'x-goog-api-key': info.channel.key }),
  supportsStreamOptions: () => false,
  parseError: (status, body, h) => openaiAdaptor.parseError(status, body, h),
  task: veoTask,
});
