// MiniMax Hailuo on MiniMax channels (type 35, whose chat requests are the minimax provider's): video tasks through
// the task engine (relay/tasks/), no relay endpoint of its own, no channel type of its own.
//   submit  POST {base}/v1/video_generation                      {model, prompt, duration, resolution, …}
//   fetch   GET  {base}/v1/query/video_generation?task_id={id}   one task per call
// both with `Authorization: Bearer <key>`. The finished video is a file id: its download address is MiniMax's
//   retrieve GET {base}/v1/files/retrieve?file_id={id}             {file: {download_url}}
// asked with the channel's key when the client reads the content (GET /v1/videos/{id}/content), which the generic
// read names as its result URL.
import { defineProvider } from '../manifest.js';
import { openaiAdaptor } from '../openai/index.js';
import type { ProviderChannel, TaskAdaptor, TaskContentSource } from '../types.js';
import { checkHailuoSubmit, hailuoPriceUnits, readHailuoFetch, readHailuoSubmit } from './adaptor.js';

const root = (channel: ProviderChannel) => channel.baseUrl.replace(/\/+$/, '');
const auth = (channel: ProviderChannel) => ({ authorization: `Bearer ${channel.key}`, accept: 'application/json' });

export const hailuoTask: TaskAdaptor = {
  platform: 'hailuo',
  fetchBatch: 1,
  alsoOnTypes: [35],
  validate(_action, body) {
    const c = checkHailuoSubmit(body);
    if (!c.ok) return { ok: false, code: 'invalid_request', message: c.message };
    return { ok: true, action: 'generate', model: c.model, body: c.body };
  },
  priceName: (model) => model,
  priceUnits: hailuoPriceUnits,
  buildSubmit(channel, _action, body, { upstreamModel } = {}) {
    return {
      method: 'POST',
      url: `${root(channel)}/v1/video_generation`,
      headers: { ...auth(channel), 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, model: upstreamModel ?? body.model }),
    };
  },
  readSubmit: readHailuoSubmit,
  buildFetch(channel, ids) {
    return {
      method: 'GET',
      url: `${root(channel)}/v1/query/video_generation?task_id=${encodeURIComponent(ids[0])}`,
      headers: auth(channel),
    };
  },
  readFetch: (status, body, ids) => readHailuoFetch(status, body, ids?.[0]),
  content(channel, _id, data) {
    const fileId = (data as { file_id?: unknown } | null)?.file_id;
    if ((typeof fileId !== 'string' || !fileId) && typeof fileId !== 'number')
      return { kind: 'refused', status: 404, message: '上游没有保存该视频', code: 'video_not_found' };
    return {
      kind: 'lookup',
      request: {
        method: 'GET',
        url: `${root(channel)}/v1/files/retrieve?file_id=${encodeURIComponent(String(fileId))}`,
        headers: auth(channel),
      },
      read: readDownloadUrl,
    };
  },
};

/** `/v1/files/retrieve`'s answer: the file's download address (a URL the upstream answered). */
function readDownloadUrl(status: number, body: unknown): TaskContentSource {
  const b = body as { file?: { download_url?: unknown }; base_resp?: { status_code?: number } } | null;
  const url = b?.file?.download_url;
  if (status === 200 && typeof url === 'string' && url && !b?.base_resp?.status_code) return { kind: 'url', url };
  return { kind: 'refused', status: 502, message: `上游返回 ${status}`, code: 'video_content_failed' };
}

export const hailuoAdaptor = defineProvider({
  id: 'hailuo',
  types: [],
  endpoints: {},
  target: (info) => ({ origin: root(info.channel), path: '/v1' }),
  headers: (info) => ({ authorization: `Bearer ${info.channel.key}` }),
  supportsStreamOptions: () => false,
  parseError: (status, body, h) => openaiAdaptor.parseError(status, body, h),
  task: hailuoTask,
});
