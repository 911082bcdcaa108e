// Jimeng (channel type 51): Volcengine's visual API as an asynchronous video task platform (relay/tasks/). No chat.
//   submit  POST {base}/?Action=CVSync2AsyncSubmitTask&Version=2022-08-31   Jimeng's payload (adaptor.ts)
//   fetch   POST {base}/?Action=CVSync2AsyncGetResult&Version=2022-08-31    {req_key, task_id}, one task per call
// signed per call with Volcengine's HMAC-SHA256 (service cv, region cn-north-1, X-Date and X-Content-Sha256 over the
// exact body sent) by the vendor's own Signer, from the channel's `AccessKeyID|SecretAccessKey`. A key without `|` is
// another new-api's token: sent as a Bearer, the paths under its `/jimeng/`, as new-api does.
import { defineProvider } from '../manifest.js';
import { openaiAdaptor } from '../openai/index.js';
import type { ProviderChannel, TaskAdaptor, TaskRequest } from '../types.js';
import {
  checkJimengSubmit,
  jimengPriceUnits,
  jimengRefusal,
  jimengResultUrl,
  jimengTaskIdOf,
  jimengUpstreamId,
  readJimengFetch,
  resolveReqKey,
  splitUpstreamId,
} from './adaptor.js';

export const JIMENG_VERSION = '2022-08-31';
const SERVICE = 'cv';
const REGION = 'cn-north-1';

type SignerClass = typeof import('@volcengine/openapi/lib/base/sign.js').default;
let signer: Promise<SignerClass> | undefined;

/** Volcengine's Signer, imported on the first signed call only (a gateway without Jimeng never loads it). */
function loadSigner(): Promise<SignerClass> {
  // a CommonJS module: its exports (with their `default`) are the ES module's default
  signer ??= import('@volcengine/openapi/lib/base/sign.js').then((m) => {
    const mod = m as unknown as { default: SignerClass | { default: SignerClass } };
    return 'default' in mod.default ? mod.default.default : mod.default;
  });
  return signer;
}

const isSigned = (key: string) => key.includes('|');

/**
 * A POST of `body` for an action: signed with the channel's `AccessKeyID|SecretAccessKey` (the headers the Signer adds:
 * X-Date, X-Content-Sha256 and Authorization), or a Bearer to another new-api.
 */
export async function jimengRequest(
  channel: ProviderChannel,
  action: string,
  body: string,
  now = new Date(),
): Promise<TaskRequest> {
  const root = channel.baseUrl.replace(/\/+$/, '');
  const query = { Action: action, Version: JIMENG_VERSION };
  const search = `Action=${encodeURIComponent(action)}&Version=${JIMENG_VERSION}`;
  const plain = { 'content-type': 'application/json', accept: 'application/json' };
  if (!isSigned(channel.key))
    return {
      method: 'POST',
      url: `${root}/jimeng/?${search}`,
      headers: { ...plain, authorization: `Bearer ${channel.key.trim()}` },
      body,
    };
  const at = channel.key.indexOf('|');
  const credentials = { accessKeyId: channel.key.slice(0, at).trim(), secretKey: channel.key.slice(at + 1).trim() };
  const Signer = await loadSigner();
  // only the headers the Signer adds are signed: the others (content-type, accept) are added after it
  const request = { region: REGION, method: 'POST', pathname: '/', params: query, headers: {}, body };
  new Signer(request, SERVICE).addAuthorization(credentials, now);
  return {
    method: 'POST',
    url: `${root}/?${search}`,
    headers: { ...(request.headers as Record<string, string>), ...plain },
    body,
  };
}

export const jimengTask: TaskAdaptor = {
  platform: 'jimeng',
  fetchBatch: 1,
  validate(_action, body) {
    const c = checkJimengSubmit(body);
    if (!c.ok) return { ok: false, code: 'invalid_request', message: c.message };
    return { ok: true, action: c.action, model: c.model, body: c.body };
  },
  priceName: (model) => model,
  priceUnits: jimengPriceUnits,
  buildSubmit(channel, action, body, { upstreamModel } = {}) {
    const images = action === 'firstTailGenerate' ? 2 : action === 'generate' ? 1 : 0;
    const reqKey = resolveReqKey(String(upstreamModel ?? body.req_key), images);
    return jimengRequest(channel, 'CVSync2AsyncSubmitTask', JSON.stringify({ ...body, req_key: reqKey }));
  },
  // the req_key sent is kept with Jimeng's id: GetResult asks with the same one
  readSubmit(status, body, sent) {
    const id = jimengTaskIdOf(status, body);
    if (!id) return null;
    let reqKey: unknown;
    try {
      reqKey = (JSON.parse(String(sent?.body ?? '{}')) as { req_key?: unknown }).req_key;
    } catch {
      reqKey = undefined;
    }
    return typeof reqKey === 'string' && reqKey ? jimengUpstreamId(reqKey, id) : id;
  },
  submitError: (_status, body) => jimengRefusal(body),
  buildFetch(channel, ids) {
    const { reqKey, taskId } = splitUpstreamId(ids[0]);
    return jimengRequest(channel, 'CVSync2AsyncGetResult', JSON.stringify({ req_key: reqKey, task_id: taskId }));
  },
  readFetch: (status, body, ids) => readJimengFetch(status, body, ids?.[0]),
  resultUrl: (_publicId, data) => jimengResultUrl(data),
};

export const jimengAdaptor = defineProvider({
  id: 'jimeng',
  types: [51],
  endpoints: {},
  target: (info) => ({ origin: info.channel.baseUrl.replace(/\/+$/, ''), path: '/' }),
  headers: () => ({}),
  supportsStreamOptions: () => false,
  parseError: (status, body, h) => openaiAdaptor.parseError(status, body, h),
  task: jimengTask,
});
