// GET /v1/videos/{id}/content: the caller's finished video streamed from the upstream's content endpoint
// ({base}/v1/videos/{upstream id}/content) with the channel's key, through the channel's proxy when it has one. The
// address is the channel's own (the operator's, as every relay call), and no redirect is followed. A Range request
// goes on as the client sent it and its 206 comes back; the answer is size-limited (announced or counted), carries
// only the media headers, and is cut when the client leaves.
import type { AppContext } from '../../context.js';
import type { HttpResponse } from '../../lib/http-response.js';
import { channelBaseUrl } from '../../services/channel-types.js';
import { RelayError, baseHeaders } from '../errors.js';
import { proxyTransport, proxyOfSetting } from '../channel-setting.js';

/** a 12 s 1080p video is tens of MB; anything beyond this is not relayed */
export const VIDEO_CONTENT_MAX_BYTES = 1 << 30;
const HEADERS_TIMEOUT_MS = 30_000;
/** a stalled body is given up after this long without a byte */
const BODY_IDLE_MS = 60_000;
/** the upstream's headers a client gets (its others, cookies and all, stay behind) */
const PASSED = ['content-type', 'content-length', 'content-range', 'accept-ranges', 'etag', 'last-modified'];

export interface ContentSource {
  channelId: number;
  upstreamId: string;
  /** `?variant=` (video, thumbnail, spritesheet), as OpenAI's endpoint takes it */
  variant: string | null;
  range: string | undefined;
}

interface Opened {
  status: number;
  headers: Record<string, string>;
  body: AsyncIterable<Uint8Array>;
  cancel(): void;
}

async function open(url: string, headers: Record<string, string>, proxy: string | null): Promise<Opened> {
  if (proxy) {
    const u = new URL(url);
    const dispatcher = await proxyTransport(proxy).ready();
    const res = await dispatcher.request({
      origin: u.origin,
      path: `${u.pathname}${u.search}`,
      method: 'GET',
      headers,
      headersTimeout: HEADERS_TIMEOUT_MS,
      bodyTimeout: BODY_IDLE_MS,
    });
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') out[k.toLowerCase()] = v;
    return { status: res.statusCode, headers: out, body: res.body, cancel: () => res.body.destroy() };
  }
  const aborter = new AbortController();
  const timer = setTimeout(() => aborter.abort(new Error('upstream headers timeout')), HEADERS_TIMEOUT_MS);
  const res = await fetch(url, { headers, redirect: 'manual', signal: aborter.signal }).finally(() =>
    clearTimeout(timer),
  );
  const out: Record<string, string> = {};
  res.headers.forEach((v, k) => (out[k] = v));
  const reader = res.body?.getReader();
  const body = (async function* () {
    if (!reader) return;
    for (;;) {
      const idle = setTimeout(() => aborter.abort(new Error('upstream body stalled')), BODY_IDLE_MS);
      const { done, value } = await reader.read().finally(() => clearTimeout(idle));
      if (done) return;
      yield value;
    }
  })();
  return { status: res.status, headers: out, body, cancel: () => aborter.abort() };
}

function drained(res: HttpResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
  });
}

/** Streams the video; a RelayError (OpenAI's error shape, sent by the caller) before any byte is written. */
export async function streamVideoContent(
  ctx: AppContext,
  source: ContentSource,
  res: HttpResponse,
  reqId: string,
): Promise<void> {
  const channel = await ctx.db
    .selectFrom('channels')
    .select(['type', 'key', 'base_url', 'setting'])
    .where('id', '=', source.channelId)
    .executeTakeFirst();
  if (!channel) throw new RelayError(502, '视频所在的渠道已不存在', 'upstream_error', 'channel_not_found', false);
  const base = channelBaseUrl(Number(channel.type), channel.base_url);
  const query = source.variant ? `?variant=${encodeURIComponent(source.variant)}` : '';
  const url = `${base}/v1/videos/${encodeURIComponent(source.upstreamId)}/content${query}`;
  const headers: Record<string, string> = {
    authorization: `Bearer ${(channel.key ?? '').split('\n')[0].trim()}`,
    ...(source.range ? { range: source.range } : {}),
  };
  let up: Opened;
  try {
    up = await open(url, headers, proxyOfSetting(channel.setting));
  } catch (e) {
    throw new RelayError(502, `上游请求失败: ${(e as Error).message}`, 'upstream_error', 'do_request_failed', false);
  }
  const length = Number(up.headers['content-length'] ?? -1);
  if (![200, 206, 416].includes(up.status) || length > VIDEO_CONTENT_MAX_BYTES) {
    up.cancel();
    if (up.status === 404)
      throw new RelayError(404, '上游没有该视频的内容', 'invalid_request_error', 'video_not_found');
    throw new RelayError(502, `上游返回 ${up.status}`, 'upstream_error', 'video_content_failed', false);
  }
  const out: Record<string, string> = { ...baseHeaders(reqId, undefined), 'X-Content-Type-Options': 'nosniff' };
  for (const name of PASSED) if (up.headers[name]) out[name] = up.headers[name];
  // an upstream's HTML must not run under the gateway's origin
  if (out['content-type'] && !/^(video|image|application\/octet-stream)/i.test(out['content-type']))
    out['content-type'] = 'application/octet-stream';
  res.writeHead(up.status, out);
  let size = 0;
  try {
    for await (const chunk of up.body) {
      size += chunk.byteLength;
      if (size > VIDEO_CONTENT_MAX_BYTES) throw new Error('video too large');
      if (!res.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))) await drained(res);
      if (res.destroyed) throw new Error('client left');
    }
    res.end();
  } catch (err) {
    up.cancel();
    res.destroy(err as Error);
  }
}
