// The two ways the task engine opens a finished task's media for a client (a video's content, a Midjourney image):
// the channel's own address with its key (the operator's, as every relay call: no address rule), or an address the
// upstream answered (a URL in the task's data), which is the upstream's word and so treated as a user-chosen URL:
// lib/safe-fetch.ts's rules (no private, reserved or own address; no redirect followed), checked at the socket when the
// gateway dials the host itself, and on the name before the request when the channel's proxy carries it (the proxy
// then dials). Either way through the channel's proxy when it has one; the body is handed back unread.
import type { Readable } from 'node:stream';
import type { AppContext } from '../../context.js';
import { userUrlFetch } from '../../lib/safe-fetch.js';
import { proxyTransport } from '../channel-setting.js';

export interface OpenedMedia {
  status: number;
  /** lower-case names, the single-valued ones only */
  headers: Record<string, string>;
  body: AsyncIterable<Uint8Array>;
  cancel(): void;
}

export interface MediaTimeouts {
  /** the wait for the headers, and for each next piece of the body */
  idleMs: number;
  /** the whole exchange, the body included */
  totalMs: number;
}

/** Drops an unread undici body: destroyed before its end it reports an abort, which nobody is left to hear. */
function release(body: Readable): () => void {
  return () => {
    body.on('error', () => undefined);
    body.destroy();
  };
}

function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (typeof v === 'string') out[k.toLowerCase()] = v;
  return out;
}

async function throughProxy(
  url: URL,
  headers: Record<string, string>,
  proxy: string,
  t: MediaTimeouts,
): Promise<OpenedMedia> {
  const dispatcher = await proxyTransport(proxy).ready();
  const res = await dispatcher.request({
    origin: url.origin,
    path: `${url.pathname}${url.search}`,
    method: 'GET',
    headers,
    headersTimeout: t.idleMs,
    bodyTimeout: t.idleMs,
    signal: AbortSignal.timeout(t.totalMs),
  });
  const body = res.body as Readable;
  return { status: res.statusCode, headers: flatHeaders(res.headers), body, cancel: release(body) };
}

function httpUrl(url: string): URL {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`unsupported URL scheme ${u.protocol}`);
  return u;
}

/** The channel's own address (its key in `headers`): no address rule, as the relay's calls to it. */
export async function openChannelMedia(
  url: string,
  headers: Record<string, string>,
  proxy: string | null,
  t: MediaTimeouts,
): Promise<OpenedMedia> {
  const u = httpUrl(url);
  if (proxy) return throughProxy(u, headers, proxy, t);
  const aborter = new AbortController();
  const total = setTimeout(() => aborter.abort(new Error('upstream took too long')), t.totalMs);
  total.unref();
  const first = setTimeout(() => aborter.abort(new Error('upstream headers timeout')), t.idleMs);
  let res: Response;
  try {
    res = await fetch(u, { headers, redirect: 'manual', signal: aborter.signal });
  } catch (err) {
    clearTimeout(total);
    throw err;
  } finally {
    clearTimeout(first);
  }
  const out: Record<string, string> = {};
  res.headers.forEach((v, k) => (out[k] = v));
  const reader = res.body?.getReader();
  const body = (async function* () {
    try {
      if (!reader) return;
      for (;;) {
        const idle = setTimeout(() => aborter.abort(new Error('upstream body stalled')), t.idleMs);
        const { done, value } = await reader.read().finally(() => clearTimeout(idle));
        if (done) return;
        yield value;
      }
    } finally {
      clearTimeout(total);
    }
  })();
  return {
    status: res.status,
    headers: out,
    body,
    cancel: () => {
      clearTimeout(total);
      aborter.abort();
    },
  };
}

/** An address the upstream answered: the SSRF rules hold, no key is sent. Throws ForbiddenAddressError. */
export async function openUpstreamUrl(
  ctx: AppContext,
  url: string,
  headers: Record<string, string>,
  proxy: string | null,
  t: MediaTimeouts,
): Promise<OpenedMedia> {
  const client = userUrlFetch(ctx);
  if (!proxy) {
    const res = await client.get(url, headers, t.totalMs, t.idleMs);
    const body = res.body as Readable;
    return { status: res.statusCode, headers: flatHeaders(res.headers), body, cancel: release(body) };
  }
  const u = httpUrl(url);
  await client.addressesOf(u.hostname, Number(u.port) || (u.protocol === 'https:' ? 443 : 80));
  return throughProxy(u, headers, proxy, t);
}
