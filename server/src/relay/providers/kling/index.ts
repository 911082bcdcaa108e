// Kling (channel type 50): its video API as an asynchronous task platform (relay/tasks/). No chat endpoint.
//   submit  POST {base}/v1/videos/{text2video|image2video}        Kling's payload (adaptor.ts)
//   fetch   GET  {base}/v1/videos/{text2video|image2video}/{id}    one task per call, the path of its action
// with `Authorization: Bearer <JWT>`: HS256 over {iss: AccessKey, exp: now+1800, nbf: now-5}, signed with the
// SecretKey of the channel's `AccessKey|SecretKey`, made per call. A key without `|` is another new-api's token: it is
// sent as it is, and the paths get new-api's `/kling` prefix.
import { SignJWT } from 'jose';
import { defineProvider } from '../manifest.js';
import { openaiAdaptor } from '../openai/index.js';
import type { ProviderChannel, TaskAdaptor } from '../types.js';
import {
  checkKlingSubmit,
  klingPath,
  klingPriceUnits,
  klingResultUrl,
  readKlingFetch,
  readKlingSubmit,
} from './adaptor.js';

/** how long a signed token is valid, and how far back it starts (new-api's, for clocks slightly apart) */
const TOKEN_TTL_SEC = 1800;
const TOKEN_SKEW_SEC = 5;

/** The bearer of a call: a fresh JWT from `AccessKey|SecretKey`, or the plain key of a new-api upstream. */
export async function klingBearer(key: string, nowSec = Math.floor(Date.now() / 1000)): Promise<string> {
  const at = key.indexOf('|');
  if (at < 0) return key.trim();
  const accessKey = key.slice(0, at).trim();
  const secretKey = key.slice(at + 1).trim();
  return new SignJWT({ iss: accessKey, exp: nowSec + TOKEN_TTL_SEC, nbf: nowSec - TOKEN_SKEW_SEC })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .sign(new TextEncoder().encode(secretKey));
}

/** the channel's address, with new-api's `/kling` prefix when the upstream is another new-api */
function base(channel: ProviderChannel): string {
  const root = channel.baseUrl.replace(/\/+$/, '');
  return channel.key.includes('|') ? root : `${root}/kling`;
}

async function headers(channel: ProviderChannel): Promise<Record<string, string>> {
  return {
    authorization: `Bearer ${await klingBearer(channel.key)}`,
    accept: 'application/json',
    'user-agent': 'kling-sdk/1.0',
  };
}

export const klingTask: TaskAdaptor = {
  platform: 'kling',
  fetchBatch: 1,
  validate(_action, body) {
    const c = checkKlingSubmit(body);
    if (!c.ok) return { ok: false, code: 'invalid_request', message: c.message };
    return { ok: true, action: c.action, model: c.model, body: c.body };
  },
  priceName: (model) => model,
  priceUnits: klingPriceUnits,
  async buildSubmit(channel, action, body, { upstreamModel } = {}) {
    const model = upstreamModel ?? body.model;
    return {
      method: 'POST',
      url: `${base(channel)}${klingPath(action)}`,
      headers: { ...(await headers(channel)), 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, model_name: model, model }),
    };
  },
  readSubmit: readKlingSubmit,
  async buildFetch(channel, ids, actions) {
    return {
      method: 'GET',
      url: `${base(channel)}${klingPath(actions?.[0] ?? '')}/${encodeURIComponent(ids[0])}`,
      headers: await headers(channel),
    };
  },
  readFetch: (status, body) => readKlingFetch(status, body),
  resultUrl: (_publicId, data) => klingResultUrl(data),
};

export const klingAdaptor = defineProvider({
  id: 'kling',
  types: [50],
  endpoints: {},
  target: (info) => ({ origin: info.channel.baseUrl.replace(/\/+$/, ''), path: '/v1' }),
  headers: () => ({}),
  supportsStreamOptions: () => false,
  parseError: (status, body, h) => openaiAdaptor.parseError(status, body, h),
  task: klingTask,
});
