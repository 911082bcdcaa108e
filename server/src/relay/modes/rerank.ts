// POST /v1/rerank {model, query, documents, top_n, return_documents} (new-api-compat.md §4.8). Cohere, Jina,
// SiliconFlow and Xinference all serve it at {base}/v1/rerank, so the OpenAI provider's rerank entry is right for
// them. Billed per input token: the upstream's count when it reports one (usage.prompt_tokens / usage.total_tokens
// for Jina / SiliconFlow, meta.billed_units.input_tokens for Cohere), else query + documents counted locally.
import { countTextTokens } from '../../services/tokenizer.js';
import type { RelayMode } from './mode.js';
import type { UpstreamUsage } from '../hub/usage.js';

const NONE = { text: '', toolCalls: 0 };

function documentText(d: unknown): string {
  if (typeof d === 'string') return d;
  if (d && typeof d === 'object' && typeof (d as { text?: unknown }).text === 'string')
    return (d as { text: string }).text;
  return d === undefined || d === null ? '' : JSON.stringify(d);
}

function positive(v: unknown): number {
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}

export const rerankMode: RelayMode = {
  name: 'rerank',
  endpoint: 'rerank',
  canStream: false,
  inputOnly: true,
  validate(body) {
    if (!body.model) return 'model is required';
    if (typeof body.query !== 'string' || body.query === '') return 'query is empty';
    if (!Array.isArray(body.documents) || body.documents.length === 0) return 'documents is empty';
    return null;
  },
  promptTokens(body, model) {
    let n = countTextTokens(String(body.query ?? ''), model);
    for (const d of body.documents ?? []) n += countTextTokens(documentText(d), model);
    return n;
  },
  responseUsage(buf): UpstreamUsage | null {
    let j: any;
    try {
      j = JSON.parse(buf.toString('utf8'));
    } catch {
      return null;
    }
    const tokens =
      positive(j?.usage?.prompt_tokens) ||
      positive(j?.usage?.total_tokens) ||
      positive(j?.meta?.billed_units?.input_tokens);
    return tokens ? { prompt_tokens: tokens, completion_tokens: 0, cached_tokens: 0 } : null;
  },
  responseText: () => NONE,
  chunkText: () => NONE,
};
