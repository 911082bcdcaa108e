// Relay modes: what differs between JSON endpoints (path upstream, validation, local token counting, where the
// completion text lives). The engine (engine.ts) is the same for every mode.
import { inputTexts, messageTexts } from '../services/sensitive-words.js';
import { chatPromptBound, countChatPromptTokens, countInputTokens, countTextTokens, inputBound, type ChatMessageLike } from '../services/tokenizer.js';
import type { PriceData } from '../services/pricing/index.js';
import type { UpstreamUsage } from './providers/types.js';

export interface StreamDelta {
  text: string;
  toolCalls: number;
}

export interface RelayMode {
  name: string;
  /** OpenAI path sent upstream */
  upstreamPath: string;
  /** Azure deployment task (…/deployments/{model}/{task}) */
  azureTask: string;
  canStream: boolean;
  /** billed per input only (embeddings): no completion tokens */
  inputOnly?: boolean;
  /** new-api's validation (facts §4.6 step 2); a message means 400 invalid_text_request */
  validate(body: Record<string, any>): string | null;
  /** local prompt count (facts §5.4) */
  promptTokens(body: Record<string, any>, model: string): number;
  /** the prompt's texts, for the sensitive-word check (facts §4.6 step 3: chat, completions, embeddings, moderations) */
  promptTexts?(body: Record<string, any>): Iterable<string>;
  /** an upper bound of promptTokens that needs no tokenizer, for a body of `bodyBytes` valid UTF-8; -1 when none holds */
  promptBound?(body: Record<string, any>, bodyBytes: number): number;
  /** completion text of a non-stream response (fallback counting when usage is missing) */
  responseText(json: any): StreamDelta;
  /** completion text of one stream chunk */
  chunkText(json: any): StreamDelta;

  // ---- optional hooks for the non-chat modes (relay/modes/*); the chat path never sets them
  /** model used when the request names none (facts §4.3 step 2) */
  defaultModel?: string;
  /** multipart/form-data request: `body` holds its fields (formFields), the raw bytes are forwarded unchanged */
  multipart?: boolean;
  /** success body is not JSON (audio): piped to the client as received, with the upstream content-type */
  rawResponse?: boolean;
  /** charge known before the call (images): reserved up front and charged on success instead of the token formula */
  fixedQuota?(price: PriceData, body: Record<string, any>, model: string, quotaPerUnit: number): number;
  /** consume-log content replacing the ratio line */
  logContent?(body: Record<string, any>, price: PriceData): string;
  /** usage of a whole non-stream response (replaces extractUsage); null falls back to local counting */
  responseUsage?(buf: Buffer, body: Record<string, any>, model: string): UpstreamUsage | null;
  /** usage carried by one stream event; when set, no event is dropped for carrying usage */
  streamUsage?(json: any): UpstreamUsage | null;
  /** typed-event SSE protocol (Responses API): no stream_options upstream, no `data: [DONE]` added */
  eventStream?: boolean;
}

const MAX_TOKENS_LIMIT = 2 ** 31 / 2;

function maxTokensError(body: Record<string, any>): string | null {
  const m = Number(body.max_tokens ?? 0);
  if (m < 0 || m > MAX_TOKENS_LIMIT) return `max_tokens is invalid`;
  return null;
}

function toolCallsText(calls: any): StreamDelta {
  let text = '';
  let n = 0;
  if (Array.isArray(calls)) {
    for (const c of calls) {
      if (c?.id) n++;
      const f = c?.function;
      if (f) text += (f.name ?? '') + (f.arguments ?? '');
    }
  }
  return { text, toolCalls: n };
}

export const chatMode: RelayMode = {
  name: 'chat',
  upstreamPath: '/v1/chat/completions',
  azureTask: 'chat/completions',
  canStream: true,
  validate(body) {
    if (!body.model) return 'model is required';
    if (!Array.isArray(body.messages) || body.messages.length === 0) return 'field messages is required';
    return maxTokensError(body);
  },
  promptTexts: (body) => messageTexts(body.messages),
  promptTokens(body, model) {
    return countChatPromptTokens(body.messages as ChatMessageLike[], model, Array.isArray(body.tools) ? body.tools : undefined);
  },
  promptBound(body, bodyBytes) {
    return chatPromptBound(body.messages, body.tools, bodyBytes);
  },
  responseText(json) {
    let text = '';
    let toolCalls = 0;
    for (const c of json?.choices ?? []) {
      const m = c?.message;
      if (!m) continue;
      if (typeof m.content === 'string') text += m.content;
      if (typeof m.reasoning_content === 'string') text += m.reasoning_content;
      const t = toolCallsText(m.tool_calls);
      text += t.text;
      toolCalls += t.toolCalls;
    }
    return { text, toolCalls };
  },
  chunkText(json) {
    let text = '';
    let toolCalls = 0;
    for (const c of json?.choices ?? []) {
      const d = c?.delta;
      if (!d) continue;
      if (typeof d.content === 'string') text += d.content;
      if (typeof d.reasoning_content === 'string') text += d.reasoning_content;
      if (d.tool_calls) {
        const t = toolCallsText(d.tool_calls);
        text += t.text;
        toolCalls += t.toolCalls;
      }
    }
    return { text, toolCalls };
  },
};

export const completionsMode: RelayMode = {
  name: 'completions',
  upstreamPath: '/v1/completions',
  azureTask: 'completions',
  canStream: true,
  validate(body) {
    if (!body.model) return 'model is required';
    if (body.prompt === undefined || body.prompt === '') return 'field prompt is required';
    return maxTokensError(body);
  },
  promptTexts: (body) => inputTexts(body.prompt),
  promptTokens(body, model) {
    return countInputTokens(body.prompt, model);
  },
  promptBound(body, bodyBytes) {
    return inputBound(body.prompt, bodyBytes);
  },
  responseText(json) {
    let text = '';
    for (const c of json?.choices ?? []) if (typeof c?.text === 'string') text += c.text;
    return { text, toolCalls: 0 };
  },
  chunkText(json) {
    return completionsMode.responseText(json);
  },
};

export const embeddingsMode: RelayMode = {
  name: 'embeddings',
  upstreamPath: '/v1/embeddings',
  azureTask: 'embeddings',
  canStream: false,
  inputOnly: true,
  validate(body) {
    if (!body.model) return 'model is required';
    if (body.input === undefined || body.input === '') return 'input is empty';
    return null;
  },
  promptTexts: (body) => inputTexts(body.input),
  promptTokens(body, model) {
    return countInputTokens(body.input, model);
  },
  promptBound(body, bodyBytes) {
    return inputBound(body.input, bodyBytes);
  },
  responseText() {
    return { text: '', toolCalls: 0 };
  },
  chunkText() {
    return { text: '', toolCalls: 0 };
  },
};

/** Completion tokens for text produced without upstream usage: tokenizer count + 7 per tool call (facts §4.7). */
export function countCompletion(d: StreamDelta, model: string): number {
  return countTextTokens(d.text, model) + d.toolCalls * 7;
}
