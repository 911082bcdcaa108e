// Veo on Vertex AI (channels of type 41, whose chat requests are the vertex provider's): video tasks through the task
// engine (relay/tasks/), no relay endpoint and no channel type of its own.
//   submit  POST {host}/v1/projects/{p}/locations/{r}/publishers/google/models/{m}:predictLongRunning
//           {instances: [{prompt}], parameters}
//   fetch   POST {host}/v1/projects/{p}/locations/{r}/publishers/google/models/{m}:fetchPredictOperation
//           {operationName}                                               one operation per call
// both with `Authorization: Bearer <token>`, the OAuth token of the channel's service account that Vertex chat uses
// (vertex/token.ts, kept by the relay's credential cache). The host is the region's (`{r}-aiplatform.googleapis.com`)
// unless the channel names a base URL; the project is the key's, the region the channel's `other` (vertex/region.ts).
// The submit's checks and price are Veo's on the Gemini API (../veo/adaptor.ts).
import { defineProvider } from '../manifest.js';
import { geminiCodec } from '../../formats/gemini/index.js';
import type { ProviderChannel, ProviderSettings, TaskAdaptor, TaskContentSource, TaskRequest } from '../types.js';
import { checkVeoSubmit, veoPriceUnits } from '../veo/adaptor.js';
import { parseServiceAccount } from '../vertex/credentials.js';
import { vertexTarget, type GoogleAction } from '../vertex/endpoint.js';
import { vertexRegion } from '../vertex/region.js';
import { vertexCredential } from '../vertex/token.js';
import {
  parseVertexOperation,
  readVertexVeoFetch,
  readVertexVeoSubmit,
  vertexVeoInlineVideo,
  vertexVeoVideoUri,
} from './adaptor.js';

interface Call {
  project: string;
  region: string;
  model: string;
  action: GoogleAction;
  body: unknown;
}

/** One call of a publisher model's action, with the service account's token. */
async function vertexCall(channel: ProviderChannel, settings: ProviderSettings | undefined, call: Call) {
  if (!settings?.credentials) throw new Error('Vertex AI tokens are not available');
  const token = await settings.credentials.get(vertexCredential, channel.key, channel);
  const { origin, path } = vertexTarget({
    project: call.project,
    region: call.region,
    publisher: 'google',
    model: call.model,
    action: call.action,
    stream: false,
    baseUrl: channel.baseUrl,
  });
  const request: TaskRequest = {
    method: 'POST',
    url: `${origin}${path}`,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify(call.body),
  };
  return request;
}

export const vertexVeoTask: TaskAdaptor = {
  platform: 'vertex-veo',
  fetchBatch: 1,
  alsoOnTypes: [41],
  baseUrlOptional: true,
  validate(_action, body) {
    const c = checkVeoSubmit(body, { storageUri: true });
    if (!c.ok) return { ok: false, code: 'invalid_request', message: c.message };
    return { ok: true, action: 'textGenerate', model: c.model, body: c.body };
  },
  priceName: (model) => model,
  priceUnits: veoPriceUnits,
  buildSubmit(channel, _action, body, { upstreamModel, settings } = {}) {
    const model = String(upstreamModel ?? body.model);
    return vertexCall(channel, settings, {
      project: parseServiceAccount(channel.key).project_id,
      region: vertexRegion(channel.other ?? '', [String(body.model), model]),
      model,
      action: 'predictLongRunning',
      body: { instances: [{ prompt: body.prompt }], parameters: body.parameters },
    });
  },
  readSubmit: readVertexVeoSubmit,
  buildFetch(channel, ids, _actions, context) {
    // the operation is asked for where it runs: its name holds its project, region and model
    const op = parseVertexOperation(ids[0]);
    if (!op) throw new Error('invalid operation name');
    return vertexCall(channel, context?.settings, {
      project: op.project,
      region: op.region,
      model: op.model,
      action: 'fetchPredictOperation',
      body: { operationName: op.name },
    });
  },
  readFetch: (status, body, ids) => readVertexVeoFetch(status, body, ids?.[0]),
  resultUrl: (_publicId, data) => vertexVeoVideoUri(data),
  async content(channel, id, data, context) {
    if (vertexVeoVideoUri(data)) return inBucket;
    // the row keeps no bytes (their size only): the operation is asked again, as the poll asks it
    const request = await vertexVeoTask.buildFetch(channel, [id], [], context);
    return { kind: 'lookup', request, read: readInline };
  },
};

const inBucket: TaskContentSource = {
  kind: 'refused',
  status: 400,
  message: '视频已写入渠道的 Cloud Storage 存储桶（见任务的 result_url），请从存储桶读取',
  code: 'video_in_bucket',
};

function readInline(status: number, body: unknown): TaskContentSource {
  if (vertexVeoVideoUri(body)) return inBucket;
  const video = status === 200 ? vertexVeoInlineVideo(body) : null;
  if (!video) return { kind: 'refused', status: 502, message: `上游返回 ${status}`, code: 'video_content_failed' };
  return { kind: 'bytes', bytes: video.bytes, contentType: video.mimeType };
}

export const vertexVeoAdaptor = defineProvider({
  id: 'vertex-veo',
  types: [],
  endpoints: {},
  target: () => ({ origin: 'https://aiplatform.googleapis.com', path: '/v1' }),
  supportsStreamOptions: () => false,
  parseError: (status, body) => geminiCodec.parseError(status, body),
  task: vertexVeoTask,
});
