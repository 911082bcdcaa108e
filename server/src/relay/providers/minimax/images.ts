// OpenAI's image generation on MiniMax's `POST {base}/v1/image_generation`, converted both ways:
//   request  {model, prompt, n, size, response_format}
//         →  {model, prompt, n, aspect_ratio (from size), response_format: url | base64}
//   answer   {id, data: {image_urls | image_base64: [...]}, metadata, base_resp}
//         →  {created, data: [{url} | {b64_json}]}
// The charge is the images mode's fixed price (relay/modes/images.ts); an error in base_resp refunds it (errors.ts).
import { splitBase } from '../openai/index.js';
import type { EndpointEntry } from '../types.js';

/** OpenAI's sizes → MiniMax's aspect ratios (any other size: square) */
const ASPECTS: Record<string, string> = {
  '1024x1024': '1:1',
  '1792x1024': '16:9',
  '1024x1792': '9:16',
  '1536x1024': '3:2',
  '1024x1536': '2:3',
};

export const minimaxImages: EndpointEntry = {
  target(info) {
    const { origin, prefix } = splitBase(info.channel.baseUrl);
    return { origin, path: `${prefix}/v1/image_generation` };
  },
  convertRequest(info, body) {
    const native: Record<string, unknown> = {
      model: info.upstreamModel,
      prompt: body.prompt,
      aspect_ratio: ASPECTS[String(body.size ?? '1024x1024')] ?? '1:1',
      response_format: body.response_format === 'b64_json' ? 'base64' : 'url',
    };
    if (body.n !== undefined) native.n = body.n;
    for (const k of Object.keys(body)) delete body[k];
    Object.assign(body, native);
    return true;
  },
  convertResponse(_info, buf) {
    const j = JSON.parse(buf.toString('utf8'));
    const urls: unknown = j?.data?.image_urls;
    const b64: unknown = j?.data?.image_base64;
    let data: Record<string, string>[];
    if (Array.isArray(urls)) data = urls.map((url) => ({ url: String(url) }));
    else if (Array.isArray(b64)) data = b64.map((b) => ({ b64_json: String(b) }));
    else throw new Error('invalid MiniMax image answer: no images');
    const out = { created: Math.floor(Date.now() / 1000), data };
    return { body: Buffer.from(JSON.stringify(out)), usage: null };
  },
};
