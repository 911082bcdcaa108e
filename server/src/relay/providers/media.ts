// Remote images for providers that take images only inline: Gemini (and Vertex AI) cannot fetch an arbitrary http(s)
// image, and Bedrock's Claude refuses URL image sources. Before such a provider's codec builds the upstream body, the
// request's http(s) image URLs are fetched and replaced by `data:` URLs, which every codec sends inline.
// The URLs are the client's choice, so they are fetched like any user-chosen URL (lib/safe-fetch.ts): only public
// addresses, not this host's, checked at connect time, no redirects, through root's worker when WorkerUrl is set; with
// a size limit, a timeout, and an image content type. A URL that cannot be fetched is the client's error: a 400
// (FormatError) in the client's shape.
import { FormatError } from '../formats/codec.js';
import type { HubContentPart, HubRequest } from '../hub/types.js';
import type { SafeFetch } from '../../lib/safe-fetch.js';

/** Gemini's limit for a whole request with inline data is 20 MB; a larger single image can never be sent. */
export const REMOTE_IMAGE_MAX_BYTES = 20 * 1024 * 1024;
/** The whole fetch, body included: a slow image host must not hold the relay request (and its reservation) long. */
export const REMOTE_IMAGE_TIMEOUT_MS = 15_000;

export interface InlineImage {
  /** the image's media type, from the answer's content-type (`image/png`) */
  mimeType: string;
  /** the bytes, base64 */
  data: string;
}

/** Fetches one remote image; throws FormatError with a message for the client when it cannot. */
export type ImageFetcher = (url: string) => Promise<InlineImage>;

export interface RemoteImageLimits {
  maxBytes?: number;
  timeoutMs?: number;
}

const isRemote = (url: string) => /^https?:\/\//i.test(url);

class ImageRefused extends Error {}

/** An ImageFetcher over the SSRF-safe client. */
export function remoteImageFetcher(client: SafeFetch, limits: RemoteImageLimits = {}): ImageFetcher {
  const maxBytes = limits.maxBytes ?? REMOTE_IMAGE_MAX_BYTES;
  const timeoutMs = limits.timeoutMs ?? REMOTE_IMAGE_TIMEOUT_MS;
  return async (url) => {
    try {
      return await fetchImage(client, url, maxBytes, timeoutMs);
    } catch (err) {
      const reason =
        err instanceof ImageRefused
          ? err.message
          : (err as Error).name === 'TimeoutError' || (err as { code?: string }).code?.includes('TIMEOUT')
            ? `no answer within ${timeoutMs / 1000} s`
            : (err as Error).message || 'the request failed';
      throw new FormatError(`image_url ${url} could not be fetched: ${reason}`, 400, 'image_url');
    }
  };
}

async function fetchImage(client: SafeFetch, url: string, maxBytes: number, timeoutMs: number): Promise<InlineImage> {
  const res = await client.get(url, { accept: 'image/*' }, timeoutMs);
  // the body is abandoned: destroying it aborts the request, and that abort must not surface as an unhandled error
  const drop = () => {
    res.body.on('error', () => {});
    res.body.destroy();
  };
  if (res.statusCode >= 300 && res.statusCode < 400) {
    drop();
    throw new ImageRefused(`it answered a redirect (HTTP ${res.statusCode}), which is not followed`);
  }
  if (res.statusCode !== 200) {
    drop();
    throw new ImageRefused(`it answered HTTP ${res.statusCode}`);
  }
  const contentType = String(res.headers['content-type'] ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (!contentType.startsWith('image/')) {
    drop();
    throw new ImageRefused(`it is not an image (content-type ${contentType || 'missing'})`);
  }
  const tooLarge = () => new ImageRefused(`it is larger than ${Math.floor(maxBytes / (1024 * 1024))} MB`);
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    drop();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += (chunk as Buffer).length;
    // a host that sends more than it declared, or declared nothing, is cut off at the limit
    if (size > maxBytes) {
      drop();
      throw tooLarge();
    }
    chunks.push(chunk as Buffer);
  }
  return { mimeType: contentType, data: Buffer.concat(chunks).toString('base64') };
}

/**
 * The request with every http(s) image URL replaced by the image inline (a `data:` URL); each distinct URL is fetched
 * once. The hub request itself is left unchanged. Without a fetcher the request is returned as it is.
 */
export async function inlineRemoteImages(hub: HubRequest, fetchImage: ImageFetcher | undefined): Promise<HubRequest> {
  if (!fetchImage) return hub;
  const urls = new Set<string>();
  for (const m of hub.messages)
    if (Array.isArray(m.content))
      for (const p of m.content) if (p.type === 'image_url' && isRemote(p.image_url.url)) urls.add(p.image_url.url);
  if (urls.size === 0) return hub;
  const fetched = new Map<string, string>();
  await Promise.all(
    [...urls].map(async (url) => {
      const image = await fetchImage(url);
      fetched.set(url, `data:${image.mimeType};base64,${image.data}`);
    }),
  );
  const inline = (p: HubContentPart): HubContentPart =>
    p.type === 'image_url' && fetched.has(p.image_url.url)
      ? { ...p, image_url: { ...p.image_url, url: fetched.get(p.image_url.url)! } }
      : p;
  return {
    ...hub,
    messages: hub.messages.map((m) => (Array.isArray(m.content) ? { ...m, content: m.content.map(inline) } : m)),
  };
}

/**
 * A Claude body (native lane) with every `{type:'image', source:{type:'url'}}` block, in messages and tool results,
 * replaced by the image inline as a base64 source: for providers that carry Claude's body but fetch no URLs (Bedrock).
 * Returns whether anything changed; the body is changed in place.
 */
export async function inlineClaudeImageUrls(
  body: Record<string, any>,
  fetchImage: ImageFetcher | undefined,
): Promise<boolean> {
  if (!fetchImage || !Array.isArray(body.messages)) return false;
  const blocks: Record<string, any>[] = [];
  const visit = (content: unknown) => {
    if (!Array.isArray(content)) return;
    for (const b of content as Record<string, any>[]) {
      if (b?.type === 'image' && b.source?.type === 'url' && isRemote(String(b.source.url))) blocks.push(b);
      else if (b?.type === 'tool_result') visit(b.content);
    }
  };
  for (const m of body.messages) visit(m?.content);
  if (blocks.length === 0) return false;
  const fetched = new Map<string, Promise<InlineImage>>();
  for (const b of blocks) if (!fetched.has(b.source.url)) fetched.set(b.source.url, fetchImage(b.source.url));
  for (const b of blocks) {
    const image = await fetched.get(b.source.url)!;
    b.source = { type: 'base64', media_type: image.mimeType, data: image.data };
  }
  return true;
}
