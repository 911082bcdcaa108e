// DashScope's native rerank (`POST {base}/api/v1/services/rerank/text-rerank/text-rerank`), as new-api sends it:
//   request  {model, query, documents, top_n, return_documents}
//         →  {model, input: {query, documents}, parameters: {top_n, return_documents}}
//   answer   {output: {results: [{index, relevance_score, document: {text}}]}, usage: {total_tokens}, request_id}
//         →  {id, results: [{index, relevance_score, document}], usage: {prompt_tokens, total_tokens}}
import { splitBase } from '../openai/index.js';
import type { EndpointEntry, UpstreamUsage } from '../types.js';

export const ALI_RERANK_PATH = '/api/v1/services/rerank/text-rerank/text-rerank';

export const aliRerank: EndpointEntry = {
  target(info) {
    const { origin, prefix } = splitBase(info.channel.baseUrl);
    return { origin, path: prefix + ALI_RERANK_PATH };
  },
  convertRequest(info, body) {
    const parameters: Record<string, unknown> = {};
    if (body.top_n !== undefined) parameters.top_n = body.top_n;
    if (body.return_documents !== undefined) parameters.return_documents = body.return_documents;
    const native = {
      model: info.upstreamModel,
      input: { query: body.query, documents: body.documents },
      parameters,
    };
    for (const k of Object.keys(body)) delete body[k];
    Object.assign(body, native);
    return true;
  },
  convertResponse(_info, buf) {
    const j = JSON.parse(buf.toString('utf8')) as {
      output?: { results?: unknown };
      usage?: { total_tokens?: number };
      request_id?: string;
    };
    if (!Array.isArray(j.output?.results)) throw new Error('invalid DashScope rerank response: no results');
    const tokens = Number(j.usage?.total_tokens) > 0 ? Math.floor(Number(j.usage?.total_tokens)) : 0;
    const usage: UpstreamUsage | null = tokens
      ? { prompt_tokens: tokens, completion_tokens: 0, cached_tokens: 0 }
      : null;
    const out = {
      id: j.request_id ?? '',
      results: j.output.results,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    };
    return { body: Buffer.from(JSON.stringify(out)), usage };
  },
};
