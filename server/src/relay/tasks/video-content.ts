// GET /v1/videos/{id}/content (and the console's /api/task/{,self/}{id}/content): the caller's finished video, from
// wherever its platform keeps it (the adaptor's `content`, providers/types.ts TaskContentSource): the channel's own
// endpoint with its key (Sora's content, Veo's URI on the channel's host), an address the upstream answered (Kling,
// Vidu, Wan, Doubao, Jimeng, Hailuo's download address after its retrieve call), read under the SSRF rules and
// never with the key (media-fetch.ts), or bytes (Vertex Veo's inline video, asked again of its operation; a data:
// URI). All through the channel's proxy when it has one; only the channel's endpoint is followed, once, to where it
// redirects (as an address the upstream answered). A Range request goes on as the client sent it and its 206 comes
// back (served from the buffer for bytes); the answer is size-limited (announced or counted), carries only the media
// headers with a content type that cannot run as a page, and is cut when the client leaves.
import type { AppContext } from '../../context.js';
import { drained, type HttpResponse } from '../../lib/http-response.js';
import { ForbiddenAddressError } from '../../lib/safe-fetch.js';
import { upstreamTaskId } from '../../services/tasks/apply.js';
import { channelBaseUrl } from '../../services/channel-types.js';
import { RelayError, baseHeaders } from '../errors.js';
import { proxyOfSetting } from '../channel-setting.js';
import { taskAdaptorOf, type TaskAdaptor, type TaskContentSource } from '../providers/index.js';
import { openChannelMedia, openUpstreamUrl, type MediaTimeouts, type OpenedMedia } from './media-fetch.js';
import { keyOf, settingsOf } from './poll.js';
import { callTaskUpstream } from './upstream.js';

/** a 12 s 1080p video is tens of MB; anything beyond this is not relayed */
export const VIDEO_CONTENT_MAX_BYTES = 1 << 30;
/** a lookup's answer that carries the video inline (base64, a third larger) is read up to this */
const INLINE_ANSWER_MAX_BYTES = 160 << 20;
const LOOKUP_TIMEOUT_MS = 60_000;
const CHAINED_LOOKUP = 'a content lookup led to another';
/** headers within a minute, then no silence of a minute; a whole video within the hour */
const TIMEOUTS: MediaTimeouts = { idleMs: 60_000, totalMs: 3_600_000 };
/** the upstream's headers a client gets (its others, cookies and all, stay behind) */
const PASSED = ['content-type', 'content-length', 'content-range', 'accept-ranges', 'etag', 'last-modified'];
const REDIRECTS = [301, 302, 303, 307, 308];
const MEDIA_TYPE = /^(video|image)\/[\w.+-]+$|^application\/octet-stream$/i;

/** The task row's part the content is found from. */
export interface VideoContentTask {
  task_id: string;
  platform: string;
  channel_id: number | string;
  private_data: string;
  data: string;
}

export interface VideoContentRequest {
  /** `?variant=` (video, thumbnail, spritesheet), as OpenAI's endpoint takes it; checked */
  variant: string | null;
  range: string | undefined;
}

const failed = (message: string, code = 'video_content_failed') =>
  new RelayError(502, message, 'upstream_error', code, false);

function parsed(text: string): unknown {
  try {
    return JSON.parse(text || 'null');
  } catch {
    return null;
  }
}

/** A `data:` URI's bytes, or null when it is none (or not base64 media). */
function dataUri(url: string): TaskContentSource | null {
  const m = /^data:([\w.+-]+\/[\w.+-]+)?(?:;[\w=.-]+)*;base64,/i.exec(url);
  if (!m) return null;
  return { kind: 'bytes', bytes: Buffer.from(url.slice(m[0].length), 'base64'), contentType: m[1] ?? '' };
}

/** A platform without a content source of its own: its result URL, when that is an address the upstream gave. */
function fromResultUrl(task: TaskAdaptor, row: VideoContentTask, data: unknown): TaskContentSource {
  const url = task.resultUrl?.(row.task_id, data) ?? '';
  if (/^https?:\/\//i.test(url)) return { kind: 'url', url };
  return dataUri(url) ?? { kind: 'refused', status: 404, message: '上游没有该视频的内容', code: 'video_not_found' };
}

/** The task's content source, its lookups made (a retrieve, an operation asked again). */
async function sourceOf(
  ctx: AppContext,
  row: VideoContentTask,
  req: VideoContentRequest,
): Promise<{ source: Exclude<TaskContentSource, { kind: 'lookup' }>; proxy: string | null }> {
  const channel = await ctx.db
    .selectFrom('channels')
    .select(['type', 'key', 'base_url', 'other', 'open_ai_organization', 'setting'])
    .where('id', '=', Number(row.channel_id))
    .executeTakeFirst();
  if (!channel) throw failed('视频所在的渠道已不存在', 'channel_not_found');
  const proxy = proxyOfSetting(channel.setting);
  const task = await taskAdaptorOf(row.platform);
  const data = parsed(row.data);
  const provider = {
    type: Number(channel.type),
    key: keyOf(channel.key ?? ''),
    baseUrl: channelBaseUrl(Number(channel.type), channel.base_url),
    other: channel.other ?? '',
    organization: channel.open_ai_organization ?? '',
  };
  let source: TaskContentSource;
  try {
    source = task.content
      ? await task.content(provider, upstreamTaskId(row.private_data), data, {
          settings: settingsOf(ctx),
          variant: req.variant,
        })
      : fromResultUrl(task, row, data);
    // one lookup leads to the media (Hailuo's retrieve, Vertex's operation); never a chain of them
    if (source.kind === 'lookup') {
      const answer = await callTaskUpstream(source.request, LOOKUP_TIMEOUT_MS, proxy, INLINE_ANSWER_MAX_BYTES);
      source = source.read(answer.status, answer.body);
    }
  } catch (e) {
    throw failed(`上游请求失败: ${(e as Error).message}`);
  }
  const served = source.kind === 'url' ? (dataUri(source.url) ?? source) : source;
  if (served.kind === 'lookup') throw failed(`上游请求失败: ${CHAINED_LOOKUP}`);
  return { source: served, proxy };
}

/** Streams the video; a RelayError (OpenAI's error shape, sent by the caller) before any byte is written. */
export async function streamVideoContent(
  ctx: AppContext,
  row: VideoContentTask,
  req: VideoContentRequest,
  res: HttpResponse,
  reqId: string,
): Promise<void> {
  const { source, proxy } = await sourceOf(ctx, row, req);
  const head = { ...baseHeaders(reqId, undefined), 'X-Content-Type-Options': 'nosniff' };
  if (source.kind === 'refused')
    throw new RelayError(
      source.status,
      source.message,
      source.status >= 500 ? 'upstream_error' : 'invalid_request_error',
      source.code,
      source.status < 500,
    );
  if (source.kind === 'bytes') return serveBytes(res, source.bytes, source.contentType, req.range, head);
  const range: Record<string, string> = req.range ? { range: req.range } : {};
  let up: OpenedMedia;
  try {
    up =
      source.kind === 'channel'
        ? await openChannelMedia(source.url, { ...source.headers, ...range }, proxy, TIMEOUTS)
        : await openUpstreamUrl(ctx, source.url, range, proxy, TIMEOUTS);
    // the channel's endpoint may send the client on to a signed address (Google's file download does): followed
    // once, as an address the upstream answered, without the key
    const location = up.headers.location;
    if (source.kind === 'channel' && REDIRECTS.includes(up.status) && location) {
      up.cancel();
      up = await openUpstreamUrl(ctx, new URL(location, source.url).href, range, proxy, TIMEOUTS);
    }
  } catch (e) {
    if (e instanceof ForbiddenAddressError)
      throw new RelayError(
        403,
        '视频地址指向本机、内网或保留地址，已拒绝',
        'invalid_request_error',
        'forbidden_video_address',
      );
    throw failed(`上游请求失败: ${(e as Error).message}`, 'do_request_failed');
  }
  await pipe(up, res, head);
}

/** The upstream's answer to the client: checked before the first byte, counted while it flows. */
async function pipe(up: OpenedMedia, res: HttpResponse, head: Record<string, string>): Promise<void> {
  const length = Number(up.headers['content-length'] ?? -1);
  if (![200, 206, 416].includes(up.status) || length > VIDEO_CONTENT_MAX_BYTES) {
    up.cancel();
    if (up.status === 404)
      throw new RelayError(404, '上游没有该视频的内容', 'invalid_request_error', 'video_not_found');
    if (length > VIDEO_CONTENT_MAX_BYTES) throw failed('视频超出大小限制');
    throw failed(`上游返回 ${up.status}`);
  }
  const out: Record<string, string> = { ...head };
  for (const name of PASSED) if (up.headers[name]) out[name] = up.headers[name];
  // an upstream's HTML must not run under the gateway's origin
  if (out['content-type'] && !MEDIA_TYPE.test(out['content-type'])) out['content-type'] = 'application/octet-stream';
  res.writeHead(up.status, out);
  let size = 0;
  try {
    for await (const chunk of up.body) {
      size += chunk.byteLength;
      // a body longer than announced, or unannounced and too large: the answer is cut (the client sees it short)
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

/** One `bytes=` range of a body of `size` bytes: its ends, 'unsatisfiable', or null (none, several, or malformed). */
export function byteRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | null {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (!m[1] && !m[2])) return null;
  if (!m[1]) {
    const suffix = Number(m[2]);
    return suffix && size ? { start: Math.max(0, size - suffix), end: size - 1 } : 'unsatisfiable';
  }
  const start = Number(m[1]);
  const end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
  if (start >= size) return 'unsatisfiable';
  return end < start ? null : { start, end };
}

/** Bytes the gateway holds (an inline video): served whole, or the one range asked for. */
function serveBytes(
  res: HttpResponse,
  bytes: Buffer,
  type: string,
  rangeHeader: string | undefined,
  head: Record<string, string>,
): void {
  if (bytes.length > VIDEO_CONTENT_MAX_BYTES) throw failed('视频超出大小限制');
  const out: Record<string, string> = {
    ...head,
    'content-type': MEDIA_TYPE.test(type) ? type : 'application/octet-stream',
    'accept-ranges': 'bytes',
  };
  const range = byteRange(rangeHeader, bytes.length);
  if (range === 'unsatisfiable') {
    res.writeHead(416, { ...out, 'content-range': `bytes */${bytes.length}`, 'content-length': '0' });
    res.end();
    return;
  }
  const part = range ? bytes.subarray(range.start, range.end + 1) : bytes;
  if (range) out['content-range'] = `bytes ${range.start}-${range.end}/${bytes.length}`;
  res.writeHead(range ? 206 : 200, { ...out, 'content-length': String(part.length) });
  res.end(part);
}
