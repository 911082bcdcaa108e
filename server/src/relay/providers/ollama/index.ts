// Ollama (type 4, new-api-compat.md §7): chat and completions go to its OpenAI-compatible /v1 endpoints (the OpenAI
// adaptor); embeddings go to the native POST /api/embed, as new-api does, converted both ways:
//   request  {model, input, dimensions}                      → {model, input, dimensions, truncate: true}
//   response {model, embeddings: [[…]], prompt_eval_count}   → OpenAI list of embeddings with usage
// `encoding_format: "base64"` (what the official SDKs ask for by default) is honoured: each vector is returned as the
// base64 of its little-endian float32 bytes, as OpenAI does.
import { OPENAI_ENDPOINTS, openaiAdaptor, splitBase } from '../openai/index.js';
import { defineProvider } from '../manifest.js';
import type { EndpointEntry, RelayInfo, UpstreamUsage } from '../types.js';

function base64Float32(v: number[]): string {
  const f = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) f[i] = Number(v[i]);
  return Buffer.from(f.buffer).toString('base64');
}

/** What the client asked for that the response conversion needs (set by convertRequest, per request). */
const wantsBase64 = new WeakMap<RelayInfo, boolean>();

/**
 * An OpenAI client's embeddings: the native POST /api/embed, converted both ways. A Gemini client's embedContent is
 * translated to an OpenAI embeddings body by its mode, which goes to Ollama's OpenAI-compatible /v1/embeddings.
 */
const embeddings: EndpointEntry = {
  target(info) {
    if (info.clientFormat !== 'openai') return OPENAI_ENDPOINTS.embeddings.target(info);
    const { origin, prefix } = splitBase(info.channel.baseUrl);
    return { origin, path: `${prefix}/api/embed` };
  },

  convertRequest(info, body) {
    wantsBase64.set(info, body.encoding_format === 'base64');
    const native: Record<string, unknown> = { model: info.upstreamModel, input: body.input, truncate: true };
    if (body.dimensions !== undefined) native.dimensions = body.dimensions;
    for (const k of Object.keys(body)) delete body[k];
    Object.assign(body, native);
    return true;
  },

  convertResponse(info, buf) {
    let j: { model?: string; embeddings?: unknown; prompt_eval_count?: number };
    try {
      j = JSON.parse(buf.toString('utf8'));
    } catch {
      throw new Error('invalid Ollama embedding response');
    }
    if (!Array.isArray(j.embeddings)) throw new Error('invalid Ollama embedding response: no embeddings');
    const base64 = wantsBase64.get(info) === true;
    const data = (j.embeddings as number[][]).map((e, index) => ({
      object: 'embedding',
      index,
      embedding: base64 ? base64Float32(e) : e,
    }));
    const prompt = Number(j.prompt_eval_count) > 0 ? Number(j.prompt_eval_count) : 0;
    const usage: UpstreamUsage | null = prompt
      ? { prompt_tokens: prompt, completion_tokens: 0, cached_tokens: 0 }
      : null;
    const out = {
      object: 'list',
      data,
      model: j.model ?? info.upstreamModel,
      usage: { prompt_tokens: prompt, total_tokens: prompt },
    };
    return { body: Buffer.from(JSON.stringify(out)), usage };
  },
};

// Ollama speaks no Responses API: a Responses client comes through the hub to chat (no `responses` entry)
const { responses: _responses, ...openaiEndpoints } = OPENAI_ENDPOINTS;

export const ollamaAdaptor = defineProvider({
  id: 'ollama',
  types: [4],
  endpoints: { ...openaiEndpoints, embeddings },
  supportsStreamOptions: (info) => openaiAdaptor.supportsStreamOptions(info),
  headers: (info) => openaiAdaptor.headers(info),
  parseError: (status, body) => openaiAdaptor.parseError(status, body),
});
