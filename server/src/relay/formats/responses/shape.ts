// The Responses API's answer object and its pieces, shared by the whole answer (response.ts) and the stream encoder
// (stream-encoder.ts), so both write the same `response` object: the stream's response.completed carries exactly what
// a non-stream client would have received.
import type { HubFinishReason, HubUsage } from '../../hub/types.js';
import type { EncoderOptions } from '../codec.js';

/**
 * The encoder options plus the client's own Responses request. The contract's EncoderOptions has no room for the
 * request, but a Responses answer echoes it (tools, tool_choice, temperature, instructions…); a caller that has the
 * body passes it here, otherwise the documented defaults are written.
 */
export interface ResponsesEncoderOptions extends EncoderOptions {
  request?: Record<string, any>;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

/** The id every item of one answer derives from: `resp_<id>`, `msg_<id>_<n>`, `fc_<id>_<n>`, `rs_<id>_<n>`. */
export function baseId(id: string): string {
  return id.replace(/^(resp_|chatcmpl-)/, '');
}

export function itemId(prefix: 'msg' | 'fc' | 'rs', base: string, outputIndex: number): string {
  return `${prefix}_${base}_${outputIndex}`;
}

/** Hub usage → the Responses API's usage object (input/output names, both detail objects always present). */
export function usageFromHub(u: HubUsage): Record<string, unknown> {
  return {
    input_tokens: u.prompt_tokens,
    input_tokens_details: { cached_tokens: u.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: u.completion_tokens,
    output_tokens_details: { reasoning_tokens: u.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: u.prompt_tokens + u.completion_tokens,
  };
}

/** A hub finish reason → the answer's status; `length` and `content_filter` are the two documented incomplete reasons. */
export function statusFor(finish: HubFinishReason | null): {
  status: ResponseStatus;
  incomplete_details: { reason: string } | null;
} {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

export interface ResponseFields {
  status: ResponseStatus;
  incomplete_details?: { reason: string } | null;
  error?: { code: string; message: string } | null;
  output: unknown[];
  usage: HubUsage | null;
  created: number;
}

/**
 * The whole `response` object as OpenAI documents it. `output_text` is deliberately absent: the SDKs compute it
 * from `output`, the API never sends it.
 */
export function responseObject(o: ResponsesEncoderOptions, f: ResponseFields): Record<string, unknown> {
  const req = o.request ?? {};
  return {
    id: `resp_${baseId(o.id)}`,
    object: 'response',
    created_at: f.created,
    status: f.status,
    background: false,
    error: f.error ?? null,
    incomplete_details: f.incomplete_details ?? null,
    instructions: typeof req.instructions === 'string' ? req.instructions : null,
    max_output_tokens: req.max_output_tokens ?? null,
    model: o.model,
    output: f.output,
    parallel_tool_calls: req.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: req.reasoning?.effort ?? null, summary: req.reasoning?.summary ?? null },
    // nothing is kept on this side: a chat-only upstream answered, so the response cannot be retrieved later
    store: false,
    temperature: req.temperature ?? 1,
    text: req.text ?? { format: { type: 'text' } },
    tool_choice: req.tool_choice ?? 'auto',
    tools: req.tools ?? [],
    top_p: req.top_p ?? 1,
    truncation: req.truncation ?? 'disabled',
    usage: f.usage ? usageFromHub(f.usage) : null,
    user: req.user ?? null,
    metadata: req.metadata ?? {},
  };
}

/** A reasoning item; `encrypted` (reasoning.ts) carries a signed thinking block's signature back to its provider. */
export function reasoningItem(id: string, text: string, encrypted?: string): Record<string, unknown> {
  const item: Record<string, unknown> = {
    id,
    type: 'reasoning',
    summary: text ? [{ type: 'summary_text', text }] : [],
  };
  if (encrypted !== undefined) item.encrypted_content = encrypted;
  return item;
}

export function messageItem(id: string, text: string, status: 'in_progress' | 'completed'): Record<string, unknown> {
  return {
    id,
    type: 'message',
    status,
    role: 'assistant',
    content: status === 'in_progress' ? [] : [outputTextPart(text)],
  };
}

export function outputTextPart(text: string): Record<string, unknown> {
  return { type: 'output_text', text, annotations: [] };
}

export function functionCallItem(
  id: string,
  call: { call_id: string; name: string; arguments: string },
  status: 'in_progress' | 'completed',
): Record<string, unknown> {
  return { id, type: 'function_call', status, arguments: call.arguments, call_id: call.call_id, name: call.name };
}
