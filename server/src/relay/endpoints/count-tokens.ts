// Token counting endpoints, answered locally after token auth and never billed: Anthropic's
// POST /v1/messages/count_tokens (Claude Code calls it constantly; new-api has no such route) and Gemini's
// `models/{model}:countTokens`. The count is the relay's own (the same tokenizer that bills a missing usage).
import {
  countTokensRequestToHub as claudeCountRequest,
  countTokensResponse as claudeCountAnswer,
} from '../formats/anthropic/index.js';
import {
  countTokensRequestToHub as geminiCountRequest,
  countTokensResponse as geminiCountAnswer,
} from '../formats/gemini/index.js';
import type { WireFormat } from '../formats/codec.js';
import { FormatError } from '../formats/codec.js';
import { countChatPromptTokens, type ChatMessageLike } from '../../services/tokenizer.js';
import { RelayError } from '../errors.js';

export interface LocalAnswer {
  format: WireFormat;
  /** the answer's JSON for a parsed body; throws RelayError for a bad one */
  answer(body: Record<string, any>, model: string): unknown;
}

function counted(
  toHub: (b: Record<string, any>) => { messages: unknown[]; tools?: unknown[] },
  body: Record<string, any>,
  model: string,
): number {
  try {
    const hub = toHub(body);
    return countChatPromptTokens(hub.messages as ChatMessageLike[], model, hub.tools);
  } catch (e) {
    if (e instanceof FormatError) throw new RelayError(e.status, e.message, 'invalid_request_error', 'invalid_request');
    throw e;
  }
}

export const claudeCountTokens: LocalAnswer = {
  format: 'anthropic',
  answer: (body, model) => claudeCountAnswer(counted(claudeCountRequest, body, model || String(body.model ?? ''))),
};

export const geminiCountTokens: LocalAnswer = {
  format: 'gemini',
  answer: (body, model) => geminiCountAnswer(counted(geminiCountRequest, body, model)),
};
