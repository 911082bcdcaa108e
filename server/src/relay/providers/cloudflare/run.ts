// Cloudflare Workers AI's own model API, `POST {base}/client/v4/accounts/{account}/ai/run/{model}`, for what its
// OpenAI-compatible `/ai/v1` does not serve: image generation and speech to text.
//   images    {model, prompt, size, response_format}  →  {prompt, width, height}
//             answer: `{result: {image: <base64>}, success}` (FLUX) or the PNG/JPEG bytes themselves (Stable
//             Diffusion)  →  {created, data: [{b64_json} | {url: data URL}]}. One image a call: n > 1 is refused.
//   audio     the form's file  →  the audio bytes as the body (Whisper), or `{audio: <base64>}` for
//             whisper-large-v3-turbo; answer `{result: {text, vtt, …}, success}`  →  `{text}` (json, verbose_json),
//             the text (text) or the WebVTT (vtt); srt, which Cloudflare does not write, is refused.
// Charged as the modes charge: images at their per-image price, transcripts by the tokens of the returned text.
import { FormatError } from '../../formats/codec.js';
import { formFields, formFile } from '../../multipart.js';
import { splitBase } from '../openai/index.js';
import type { EndpointEntry, RelayInfo, UpstreamTarget } from '../types.js';

export function accountRoot(info: RelayInfo): string {
  return `/client/v4/accounts/${encodeURIComponent(info.channel.other.trim())}`;
}

/** `@cf/black-forest-labs/flux-1-schnell`: each segment encoded, the `@` and `/` kept as Cloudflare writes them. */
function modelPath(model: string): string {
  return model
    .split('/')
    .map((s) => encodeURIComponent(s).replace(/^%40/, '@'))
    .join('/');
}

function runTarget(info: RelayInfo): UpstreamTarget {
  const { origin, prefix } = splitBase(info.channel.baseUrl);
  return { origin, path: `${prefix}${accountRoot(info)}/ai/run/${modelPath(info.upstreamModel)}` };
}

/** A successful `/ai/run` answer's `result`; an answer without one is no answer. */
function resultOf(buf: Buffer): Record<string, any> {
  const j = JSON.parse(buf.toString('utf8'));
  if (!j || typeof j.result !== 'object' || j.result === null) throw new Error('invalid Cloudflare answer: no result');
  return j.result;
}

function replaceBody(body: Record<string, unknown>, native: Record<string, unknown>): true {
  for (const k of Object.keys(body)) delete body[k];
  Object.assign(body, native);
  return true;
}

/** The picture's type from its first bytes (the answer's bytes are the picture for Stable Diffusion models). */
function pictureType(buf: Buffer): string | null {
  if (buf[0] === 0x89 && buf.toString('latin1', 1, 4) === 'PNG') return 'image/png';
  if (buf[0] === 0xff && buf[1] === 0xd8) return 'image/jpeg';
  return null;
}

/**
 * The answer format the client asked for (response_format), which Cloudflare's request has no field for: kept per
 * attempt, keyed by its RelayInfo (one object per attempt, dropped with it), for the answer's conversion.
 */
const ASKED = new WeakMap<RelayInfo, string>();

export const cloudflareImages: EndpointEntry = {
  target: runTarget,
  convertRequest(info, body) {
    if (body.n !== undefined && body.n !== null && Number(body.n) > 1)
      throw new FormatError('Cloudflare Workers AI 每次只生成一张图片（n 须为 1）', 400, 'n');
    const native: Record<string, unknown> = { prompt: body.prompt };
    const size = /^(\d+)x(\d+)$/.exec(String(body.size ?? ''));
    if (size) Object.assign(native, { width: Number(size[1]), height: Number(size[2]) });
    if (body.response_format === 'url') ASKED.set(info, 'url');
    return replaceBody(body, native);
  },
  convertResponse(info, buf) {
    const type = pictureType(buf);
    const image = type ? buf.toString('base64') : resultOf(buf).image;
    if (typeof image !== 'string' || !image) throw new Error('invalid Cloudflare image answer: no image');
    // Cloudflare keeps no picture to link to: a client that asked for a URL gets a data URL
    const item =
      ASKED.get(info) === 'url' ? { url: `data:${type ?? 'image/jpeg'};base64,${image}` } : { b64_json: image };
    return { body: Buffer.from(JSON.stringify({ created: Math.floor(Date.now() / 1000), data: [item] })), usage: null };
  },
};

/** OpenAI's transcript formats Cloudflare's answer can give. */
const TRANSCRIPT_FORMATS = new Set(['json', 'verbose_json', 'text', 'vtt']);

export const cloudflareTranscription: EndpointEntry = {
  target: runTarget,
  headers: (info) => ({
    authorization: `Bearer ${info.channel.key}`,
    'content-type': takesJson(info) ? 'application/json' : 'application/octet-stream',
  }),
  convertForm(info, raw, boundary) {
    const fields = formFields(raw, boundary);
    const format = typeof fields.response_format === 'string' ? fields.response_format : 'json';
    if (!TRANSCRIPT_FORMATS.has(format))
      throw new FormatError(`Cloudflare Workers AI 不支持 response_format ${format}`, 400, 'response_format');
    const audio = formFile(raw, boundary, 'file');
    if (!audio) throw new FormatError('file is required', 400, 'file');
    ASKED.set(info, format);
    if (!takesJson(info)) return Buffer.from(audio);
    const native: Record<string, unknown> = { audio: audio.toString('base64') };
    if (typeof fields.language === 'string' && fields.language) native.language = fields.language;
    if (typeof fields.prompt === 'string' && fields.prompt) native.initial_prompt = fields.prompt;
    if (info.mode.name === 'audio_translation') native.task = 'translate';
    return Buffer.from(JSON.stringify(native));
  },
  convertResponse(info, buf) {
    const result = resultOf(buf);
    const text = typeof result.text === 'string' ? result.text : '';
    const format = ASKED.get(info) ?? 'json';
    if (format === 'text') return { body: Buffer.from(text), usage: null, contentType: 'text/plain; charset=utf-8' };
    if (format === 'vtt')
      return { body: Buffer.from(String(result.vtt ?? '')), usage: null, contentType: 'text/vtt; charset=utf-8' };
    return { body: Buffer.from(JSON.stringify({ text })), usage: null };
  },
};

/** whisper-large-v3-turbo takes JSON with the audio in base64; the other Whisper models take the bytes. */
const takesJson = (info: RelayInfo) => info.upstreamModel.includes('whisper-large-v3-turbo');
