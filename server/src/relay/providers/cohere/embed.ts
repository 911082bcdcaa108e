// OpenAI embeddings on Cohere's v1 embed (`POST {base}/v1/embed`), converted both ways:
//   request  {model, input, encoding_format}  →  {model, texts, input_type: "search_document"}
//   answer   {id, embeddings: [[…]] | {float: [[…]]}, meta: {billed_units: {input_tokens}}}
//         →  OpenAI's list of embeddings with usage
// `encoding_format: "base64"` (the OpenAI SDKs' default) is honoured: each vector as the base64 of its little-endian
// float32 bytes, as OpenAI sends it.
import { splitBase } from '../openai/index.js';
import type { EndpointEntry, RelayInfo, UpstreamUsage } from '../types.js';

/** whether the client asked for base64 vectors (set by convertRequest, read by convertResponse) */
const wantsBase64 = new WeakMap<RelayInfo, boolean>();

function base64Float32(v: number[]): string {
  return Buffer.from(new Float32Array(v.map(Number)).buffer).toString('base64');
}

export const cohereEmbed: EndpointEntry = {
  target(info) {
    const { origin, prefix } = splitBase(info.channel.baseUrl);
    return { origin, path: `${prefix}/v1/embed` };
  },
  convertRequest(info, body) {
    wantsBase64.set(info, body.encoding_format === 'base64');
    const texts = Array.isArray(body.input) ? body.input : [body.input];
    const native = { model: info.upstreamModel, texts, input_type: 'search_document' };
    for (const k of Object.keys(body)) delete body[k];
    Object.assign(body, native);
    return true;
  },
  convertResponse(info, buf) {
    const j = JSON.parse(buf.toString('utf8'));
    const vectors: unknown = Array.isArray(j?.embeddings) ? j.embeddings : j?.embeddings?.float;
    if (!Array.isArray(vectors)) throw new Error('invalid Cohere embed response: no embeddings');
    const base64 = wantsBase64.get(info) === true;
    const data = (vectors as number[][]).map((e, index) => ({
      object: 'embedding',
      index,
      embedding: base64 ? base64Float32(e) : e,
    }));
    const tokens = Number(j?.meta?.billed_units?.input_tokens) > 0 ? Number(j.meta.billed_units.input_tokens) : 0;
    const usage: UpstreamUsage | null = tokens
      ? { prompt_tokens: tokens, completion_tokens: 0, cached_tokens: 0 }
      : null;
    const out = {
      object: 'list',
      data,
      model: info.upstreamModel,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    };
    return { body: Buffer.from(JSON.stringify(out)), usage };
  },
};
