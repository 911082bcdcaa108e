// Hunyuan's answers read as OpenAI's (providers/dialect.ts). Tencent Cloud wraps every answer in `Response`: a chat
// completion with PascalCase fields (`Choices[].Message.Content`, `Usage.PromptTokens`), or `Response.Error` with a
// dotted code, always in HTTP 200. A stream's events are bare chunks (`Choices[].Delta`, `FinishReason`), the usage
// carried along and final in the last; a stream request Tencent refuses is answered with the JSON envelope. Tool
// calls (`Message.ToolCalls`, `Delta.ToolCalls`) become OpenAI's tool_calls.
import { openaiAnswer, openaiChunk, VendorRefusal, type VendorAnswerReader } from '../dialect.js';
import type { ProviderError } from '../types.js';
import { openaiCodec } from '../../formats/openai/index.js';

/** The status a Tencent error code means to the client (its codes are `Family.Detail`). */
export function hunyuanStatus(code: string): number {
  const family = code.split('.')[0];
  if (family === 'AuthFailure' || family === 'UnauthorizedOperation') return 401;
  if (family === 'RequestLimitExceeded' || family === 'LimitExceeded') return 429;
  if (['InvalidParameter', 'InvalidParameterValue', 'MissingParameter', 'UnknownParameter'].includes(family))
    return 400;
  if (family === 'ResourceInsufficient' || family === 'ResourceUnavailable' || family === 'OperationDenied') return 403;
  return 500;
}

function throwIfError(json: any): void {
  const error = json?.Response?.Error;
  if (!error) return;
  const code = String(error.Code ?? 'InternalError');
  throw new VendorRefusal(hunyuanStatus(code), String(error.Message ?? code), code);
}

const FINISH: Record<string, string> = {
  stop: 'stop',
  length: 'length',
  sensitive: 'content_filter',
  tool_calls: 'tool_calls',
};

/** Hunyuan's ToolCalls ({Id, Type, Function: {Name, Arguments}, Index}) as OpenAI's; a stream's carry their index. */
function openaiCalls(calls: unknown): Record<string, unknown>[] {
  if (!Array.isArray(calls)) return [];
  return calls.map((c: any, i) => ({
    index: typeof c?.Index === 'number' ? c.Index : i,
    id: String(c?.Id ?? ''),
    type: 'function',
    function: { name: String(c?.Function?.Name ?? ''), arguments: String(c?.Function?.Arguments ?? '') },
  }));
}

function usageOf(u: any) {
  return u && typeof u.PromptTokens === 'number'
    ? { prompt_tokens: u.PromptTokens, completion_tokens: Number(u.CompletionTokens) || 0 }
    : null;
}

export const hunyuanAnswers: VendorAnswerReader = {
  answer(info, json) {
    throwIfError(json);
    const r = json?.Response;
    if (!r || !Array.isArray(r.Choices)) throw new Error('Hunyuan answer has no Response.Choices');
    const choice = r.Choices[0] ?? {};
    const answer = openaiAnswer(info, {
      id: String(r.Id ?? r.RequestId ?? ''),
      created: r.Created,
      text: String(choice.Message?.Content ?? ''),
      finish: FINISH[choice.FinishReason] ?? 'stop',
      usage: usageOf(r.Usage),
    });
    const calls = openaiCalls(choice.Message?.ToolCalls);
    if (calls.length)
      Object.assign((answer.choices as any[])[0].message, { tool_calls: calls.map(({ index: _i, ...c }) => c) });
    return answer;
  },
  stream(info) {
    return (event) => {
      if (!event.data) return [];
      const json = JSON.parse(event.data);
      throwIfError(json);
      const choice = json.Choices?.[0] ?? {};
      const base = { id: String(json.Id ?? ''), created: json.Created };
      const out = [];
      if (choice.Delta?.Content) out.push(openaiChunk(info, { ...base, text: String(choice.Delta.Content) }));
      const calls = openaiCalls(choice.Delta?.ToolCalls);
      if (calls.length) {
        const chunk = openaiChunk(info, { ...base, text: '' });
        (chunk.choices as any[])[0].delta = { role: 'assistant', tool_calls: calls };
        out.push(chunk);
      }
      if (choice.FinishReason)
        out.push(
          openaiChunk(info, { ...base, finish: FINISH[choice.FinishReason] ?? 'stop', usage: usageOf(json.Usage) }),
        );
      return out;
    };
  },
};

/** A non-200 answer (a gateway's): Tencent's envelope when it is one, else OpenAI's reader. */
export function parseHunyuanError(status: number, body: Buffer): ProviderError {
  let json: any = null;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    // not JSON
  }
  const error = json?.Response?.Error;
  if (error)
    return {
      message: String(error.Message ?? error.Code),
      type: 'upstream_error',
      code: String(error.Code),
      param: null,
    };
  return openaiCodec.parseError(status, body);
}
