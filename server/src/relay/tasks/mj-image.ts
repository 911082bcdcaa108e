// GET /mj/image/{id} (MjForwardUrlEnabled's target, unauthenticated as new-api's): the task's stored image fetched and
// streamed. The stored URL is the upstream's word, so it is treated as a user-chosen URL: the SSRF rules of
// lib/safe-fetch.ts (no private, reserved or own address; no redirect followed), checked at the socket when the
// gateway dials the host itself, and on the name before the request when the channel's proxy carries it (the proxy
// then dials). The answer is size-limited, served as an image or a video only, and never carries the upstream's
// other headers.
import type { Readable } from 'node:stream';
import type { AppContext } from '../../context.js';
import type { HttpResponse } from '../../lib/http-response.js';
import { ForbiddenAddressError, userUrlFetch } from '../../lib/safe-fetch.js';
import { baseHeaders } from '../errors.js';
import { proxyTransport } from '../channel-setting.js';
import { MjAnswerError, sendMjError } from './mj-answer.js';
import { proxyOfSetting } from '../channel-setting.js';

/** a Midjourney grid is a few MB; anything larger is not relayed */
export const MJ_IMAGE_MAX_BYTES = 32 << 20;
const IMAGE_TIMEOUT_MS = 30_000;

interface Fetched {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Readable & { dump?: () => Promise<void> };
}

async function fetchThrough(ctx: AppContext, url: string, proxy: string | null): Promise<Fetched> {
  const client = userUrlFetch(ctx);
  if (!proxy) return (await client.get(url, {}, IMAGE_TIMEOUT_MS)) as Fetched;
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`unsupported URL scheme ${u.protocol}`);
  await client.addressesOf(u.hostname, Number(u.port) || (u.protocol === 'https:' ? 443 : 80));
  const dispatcher = await proxyTransport(proxy).ready();
  return (await dispatcher.request({
    origin: u.origin,
    path: `${u.pathname}${u.search}`,
    method: 'GET',
    headersTimeout: IMAGE_TIMEOUT_MS,
    bodyTimeout: IMAGE_TIMEOUT_MS,
    signal: AbortSignal.timeout(IMAGE_TIMEOUT_MS),
  })) as Fetched;
}

/** Waits for the client to take more, or to leave. */
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

export async function mjImage(ctx: AppContext, taskId: string, res: HttpResponse, reqId: string): Promise<void> {
  try {
    const row = await ctx.db
      .selectFrom('midjourneys')
      .select(['image_url', 'channel_id'])
      .where('mj_id', '=', taskId)
      .orderBy('id', 'desc')
      .executeTakeFirst();
    if (!row) throw new MjAnswerError({ code: 4, description: 'midjourney_task_not_found' });
    if (!row.image_url) throw new MjAnswerError({ code: 4, description: 'http_get_image_failed', result: 'no image' });
    const channel = await ctx.db
      .selectFrom('channels')
      .select('setting')
      .where('id', '=', Number(row.channel_id))
      .executeTakeFirst();
    let up: Fetched;
    try {
      up = await fetchThrough(ctx, row.image_url, proxyOfSetting(channel?.setting));
    } catch (e) {
      if (e instanceof ForbiddenAddressError)
        throw new MjAnswerError({ code: 4, description: 'forbidden_image_address' });
      throw new MjAnswerError({ code: 5, description: 'http_get_image_failed', result: (e as Error).message });
    }
    const length = Number(up.headers['content-length'] ?? -1);
    const type = String(up.headers['content-type'] ?? '');
    if (up.statusCode !== 200 || length > MJ_IMAGE_MAX_BYTES) {
      up.body.destroy();
      throw new MjAnswerError({ code: 5, description: 'http_get_image_failed', result: `status ${up.statusCode}` });
    }
    res.writeHead(200, {
      ...baseHeaders(reqId, undefined),
      // an upstream's HTML must not run under the gateway's origin
      'Content-Type': /^(image|video)\/[\w.+-]+$/i.test(type) ? type : 'application/octet-stream',
      'X-Content-Type-Options': 'nosniff',
      ...(length >= 0 ? { 'Content-Length': String(length) } : {}),
    });
    let size = 0;
    try {
      for await (const chunk of up.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        // a body longer than announced, or unannounced and too large: the answer is cut (the client sees it short)
        if (size > MJ_IMAGE_MAX_BYTES) throw new Error('image too large');
        if (!res.write(chunk)) await drained(res);
        if (res.destroyed) throw new Error('client left');
      }
      res.end();
    } catch (err) {
      up.body.destroy();
      res.destroy(err as Error);
    }
  } catch (err) {
    sendMjError(res, err, reqId);
  }
}
