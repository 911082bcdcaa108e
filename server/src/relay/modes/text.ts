// The plain text modes: chat, completions and embeddings (the fast path's routes).
import { inputTexts, messageTexts } from '../../services/sensitive-words.js';
import {
  chatPromptBound,
  countChatPromptTokens,
  countInputTokens,
  inputBound,
  type ChatMessageLike,
} from '../../services/tokenizer.js';
import type { RelayMode, StreamDelta } from './mode.js';
import { openAIEmbeddingsOnGemini } from './embeddings-translate.js';

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
  // providers of other formats serve it through the hub (relay/formats/)
  hub: true,
  checksCompletion: true,
  endpoint: 'chat',
  canStream: true,
  validate(body) {
    if (!body.model) return 'model is required';
    if (!Array.isArray(body.messages) || body.messages.length === 0) return 'field messages is required';
    return maxTokensError(body);
  },
  promptTexts: (body) => messageTexts(body.messages),
  promptTokens(body, model) {
    return countChatPromptTokens(
      body.messages as ChatMessageLike[],
      model,
      Array.isArray(body.tools) ? body.tools : undefined,
    );
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
  checksCompletion: true,
  endpoint: 'completions',
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
  endpoint: 'embeddings',
  // on a Gemini channel: one batch call embeds every input (modes/embeddings-translate.ts, Gemini's embeddings entry)
  translate: { gemini: openAIEmbeddingsOnGemini },
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
