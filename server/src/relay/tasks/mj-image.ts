// GET /mj/image/{id} (MjForwardUrlEnabled's target, unauthenticated as new-api's): the task's stored image fetched and
// streamed. The stored URL is the upstream's word, so it is treated as a user-chosen URL: the SSRF rules of
// lib/safe-fetch.ts (no private, reserved or own address; no redirect followed), checked at the socket when the
// gateway dials the host itself, and on the name before the request when the channel's proxy carries it (the proxy
// then dials). The answer is size-limited, served as an image or a video only, and never carries the upstream's
// other headers.
import type { AppContext } from '../../context.js';
import { drained, type HttpResponse } from '../../lib/http-response.js';
import { ForbiddenAddressError } from '../../lib/safe-fetch.js';
import { baseHeaders } from '../errors.js';
import { proxyOfSetting } from '../channel-setting.js';
import { MjAnswerError, sendMjError } from './mj-answer.js';
import { openUpstreamUrl, type OpenedMedia } from './media-fetch.js';

/** a Midjourney grid is a few MB; anything larger is not relayed */
export const MJ_IMAGE_MAX_BYTES = 32 << 20;
const IMAGE_TIMEOUT_MS = 30_000;

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
    let up: OpenedMedia;
    try {
      up = await openUpstreamUrl(ctx, row.image_url, {}, proxyOfSetting(channel?.setting), {
        idleMs: IMAGE_TIMEOUT_MS,
        totalMs: IMAGE_TIMEOUT_MS,
      });
    } catch (e) {
      if (e instanceof ForbiddenAddressError)
        throw new MjAnswerError({ code: 4, description: 'forbidden_image_address' });
      throw new MjAnswerError({ code: 5, description: 'http_get_image_failed', result: (e as Error).message });
    }
    const length = Number(up.headers['content-length'] ?? -1);
    const type = String(up.headers['content-type'] ?? '');
    if (up.status !== 200 || length > MJ_IMAGE_MAX_BYTES) {
      up.cancel();
      throw new MjAnswerError({ code: 5, description: 'http_get_image_failed', result: `status ${up.status}` });
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
      for await (const chunk of up.body) {
        size += chunk.byteLength;
        // a body longer than announced, or unannounced and too large: the answer is cut (the client sees it short)
        if (size > MJ_IMAGE_MAX_BYTES) throw new Error('image too large');
        if (!res.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength))) await drained(res);
        if (res.destroyed) throw new Error('client left');
      }
      res.end();
    } catch (err) {
      up.cancel();
      res.destroy(err as Error);
    }
  } catch (err) {
    sendMjError(res, err, reqId);
  }
}
