// Local token counts (facts §5.4), used when the upstream reports no usage and for prompt-size reservations.
// CONTRACT: names and signatures are stable; the bodies are owned by the pricing/tokenizer module.
import { encode as encodeO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { encode as encodeCl100k } from 'gpt-tokenizer/encoding/cl100k_base';

function usesO200k(model: string): boolean {
  return /^(gpt-4o|chatgpt-4o|o1|o3|o4|gpt-4\.1|gpt-5)/.test(model);
}

export function countTextTokens(text: string, model: string): number {
  if (!text) return 0;
  return (usesO200k(model) ? encodeO200k : encodeCl100k)(text).length;
}

export interface ChatMessageLike {
  role?: string;
  name?: string;
  content?: unknown;
  tool_calls?: unknown;
}

/** Prompt tokens of a chat request: +3 per message, role and name tokens, text parts, image parts, +3 priming. */
export function countChatPromptTokens(messages: ChatMessageLike[], model: string, tools?: unknown[]): number {
  let n = 0;
  for (const m of messages ?? []) {
    n += 3;
    if (m.role) n += countTextTokens(m.role, model);
    if (m.name) n += countTextTokens(m.name, model) + 1;
    if (typeof m.content === 'string') n += countTextTokens(m.content, model);
    else if (Array.isArray(m.content)) {
      for (const part of m.content as Array<Record<string, any>>) {
        if (part?.type === 'text' && typeof part.text === 'string') n += countTextTokens(part.text, model);
        else if (part?.type === 'image_url') n += 85 * 3;
      }
    }
  }
  if (tools?.length) n += countTextTokens(JSON.stringify(tools), model) + 8;
  return n + 3;
}

/** Tokens of a completions prompt / embeddings or moderation input (arrays are concatenated). */
export function countInputTokens(input: unknown, model: string): number {
  if (typeof input === 'string') return countTextTokens(input, model);
  if (Array.isArray(input)) return input.reduce<number>((s, x) => s + (typeof x === 'string' ? countTextTokens(x, model) : Array.isArray(x) ? x.length : 0), 0);
  return 0;
}
