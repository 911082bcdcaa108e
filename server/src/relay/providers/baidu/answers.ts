// ERNIE v1's answers read as OpenAI's (providers/dialect.ts). Chat: `result` is the text, `usage` OpenAI-shaped; a
// stream's events carry `result` pieces and `is_end`, the usage in the last. Embeddings are OpenAI's list but for
// `object`. A function call (`function_call`, finish reason `function_call`) is OpenAI's tool call. Errors come as `{"error_code", "error_msg"}` inside HTTP 200, for a stream request too.
import {
  openaiAnswer,
  openaiChunk,
  VendorRefusal,
  type UpstreamUsageLike,
  type VendorAnswerReader,
} from '../dialect.js';
import type { ProviderError } from '../types.js';
import { openaiCodec } from '../../formats/openai/index.js';

/** Baidu's codes for a token that is invalid or has expired: exchanged again, the request resent once. */
const TOKEN_CODES = new Set([110, 111]);
/** Rate and quota limits (QPS, daily calls, TPM/RPM). */
const LIMIT_CODES = new Set([4, 17, 18, 19, 336501, 336502]);
/** The request itself was wrong (parameters, messages, input too long). */
const REQUEST_CODES = new Set([336003, 336006, 336007, 336103, 336104]);

function statusOf(code: number): number {
  if (TOKEN_CODES.has(code)) return 401;
  if (LIMIT_CODES.has(code)) return 429;
  if (REQUEST_CODES.has(code)) return 400;
  if (code === 6) return 403;
  return 500;
}

/** Throws the error an answer carries, if it carries one. */
export function throwIfError(json: any): void {
  if (!json || typeof json !== 'object' || json.error_code === undefined || json.error_code === 0) return;
  const code = Number(json.error_code);
  const message = typeof json.error_msg === 'string' && json.error_msg ? json.error_msg : `error_code ${code}`;
  throw new VendorRefusal(statusOf(code), message, code, TOKEN_CODES.has(code));
}

const FINISH: Record<string, string> = {
  normal: 'stop',
  stop: 'stop',
  length: 'length',
  function_call: 'tool_calls',
  content_filter: 'content_filter',
};

/** ERNIE's function_call ({name, arguments, thoughts}) as OpenAI's one tool call, its id made from the answer's. */
function toolCalls(json: any): Record<string, unknown>[] | null {
  const f = json?.function_call;
  if (!f || typeof f.name !== 'string') return null;
  return [
    {
      index: 0,
      id: `call_${String(json.id ?? 'ernie')}`,
      type: 'function',
      function: {
        name: f.name,
        arguments: typeof f.arguments === 'string' ? f.arguments : JSON.stringify(f.arguments ?? {}),
      },
    },
  ];
}
const finishOf = (json: any) => FINISH[json.finish_reason] ?? (json.is_truncated ? 'length' : 'stop');

function usageOf(json: any): UpstreamUsageLike | null {
  const u = json?.usage;
  if (!u || typeof u.prompt_tokens !== 'number') return null;
  return { prompt_tokens: u.prompt_tokens, completion_tokens: Number(u.completion_tokens) || 0 };
}

export const baiduAnswers: VendorAnswerReader = {
  answer(info, json) {
    throwIfError(json);
    if (info.mode.endpoint === 'embeddings') {
      return { object: 'list', data: json.data ?? [], model: info.upstreamModel, usage: json.usage };
    }
    const answer = openaiAnswer(info, {
      id: String(json.id ?? ''),
      created: json.created,
      text: String(json.result ?? ''),
      finish: finishOf(json),
      usage: usageOf(json),
    });
    const calls = toolCalls(json);
    if (calls)
      Object.assign((answer.choices as any[])[0].message, { tool_calls: calls.map(({ index: _i, ...c }) => c) });
    return answer;
  },
  stream(info) {
    return (event) => {
      if (event.data === undefined) return [];
      const json = JSON.parse(event.data);
      throwIfError(json);
      const base = { id: String(json.id ?? ''), created: json.created };
      const out = [];
      if (json.result) out.push(openaiChunk(info, { ...base, text: String(json.result) }));
      const calls = toolCalls(json);
      if (calls) {
        const chunk = openaiChunk(info, { ...base, text: '' });
        (chunk.choices as any[])[0].delta = { role: 'assistant', tool_calls: calls };
        out.push(chunk);
      }
      if (json.is_end) out.push(openaiChunk(info, { ...base, finish: finishOf(json), usage: usageOf(json) }));
      return out;
    };
  },
};

/** A non-200 answer: Baidu's own error body when it is one (its API gateway's), else read as OpenAI's. */
export function parseBaiduError(status: number, body: Buffer): ProviderError {
  let json: any = null;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    // not JSON: OpenAI's reader keeps the text
  }
  if (json && typeof json === 'object' && json.error_code !== undefined) {
    const message =
      typeof json.error_msg === 'string' && json.error_msg ? json.error_msg : `error_code ${json.error_code}`;
    return { message, type: 'upstream_error', code: json.error_code, param: null };
  }
  return openaiCodec.parseError(status, body);
}
