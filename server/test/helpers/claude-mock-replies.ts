// Claude Messages answers as the cloud vendors that host Claude return them, shared by the Bedrock and Vertex AI
// mocks: the whole message for a non-streaming call and the stream's events (message_start … message_stop) for a
// streaming one. Each vendor frames the events its own way (Bedrock: event-stream chunks, Vertex: SSE) and marks
// its ids (`msg_bdrk_…`, `msg_vrtx_…`).
import { randomBytes } from 'node:crypto';

export interface ClaudeUsageSpec {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

/** A signed thinking block the answer opens with (extended thinking). */
export interface ClaudeThinkingSpec {
  thinking: string;
  signature: string;
}

/** What a scripted answer says. */
export type ClaudeAnswer = (
  | {
      kind: 'text';
      text: string;
      stopReason?: 'end_turn' | 'max_tokens' | 'stop_sequence';
      /** the stop sequence that ended the text, with stopReason 'stop_sequence' */
      stopSequence?: string;
      usage?: ClaudeUsageSpec;
    }
  | { kind: 'tool_use'; name: string; input: Record<string, unknown>; text?: string; usage?: ClaudeUsageSpec }
) & { thinking?: ClaudeThinkingSpec };

export const DEFAULT_CLAUDE_USAGE: ClaudeUsageSpec = { input_tokens: 12, output_tokens: 6 };

/** An id in Anthropic's style (base62-ish, 24 characters) with the vendor's marker. */
export function claudeId(kind: 'msg' | 'toolu', vendor: 'bdrk' | 'vrtx'): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const raw = randomBytes(24);
  let s = '';
  for (const b of raw) s += alphabet[b % alphabet.length];
  return `${kind}_${vendor}_01${s}`;
}

function usageOf(answer: ClaudeAnswer): Required<ClaudeUsageSpec> {
  const u = answer.usage ?? DEFAULT_CLAUDE_USAGE;
  return {
    input_tokens: u.input_tokens,
    output_tokens: u.output_tokens,
    cache_read_input_tokens: u.cache_read_input_tokens ?? 0,
    cache_creation_input_tokens: u.cache_creation_input_tokens ?? 0,
  };
}

/** The whole message a non-streaming call returns. */
export function claudeMessage(answer: ClaudeAnswer, model: string, vendor: 'bdrk' | 'vrtx'): Record<string, unknown> {
  const content: Record<string, unknown>[] = [];
  if (answer.thinking) content.push({ type: 'thinking', ...answer.thinking });
  let stopReason: string;
  if (answer.kind === 'text') {
    content.push({ type: 'text', text: answer.text });
    stopReason = answer.stopReason ?? 'end_turn';
  } else {
    if (answer.text) content.push({ type: 'text', text: answer.text });
    content.push({ type: 'tool_use', id: claudeId('toolu', vendor), name: answer.name, input: answer.input });
    stopReason = 'tool_use';
  }
  return {
    id: claudeId('msg', vendor),
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: stopSequenceOf(answer),
    usage: usageOf(answer),
  };
}

function stopSequenceOf(answer: ClaudeAnswer): string | null {
  return answer.kind === 'text' && answer.stopReason === 'stop_sequence' ? (answer.stopSequence ?? null) : null;
}

/** Splits text into pieces of a few characters, as a model streams it. */
function pieces(text: string, size = 4): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [''];
}

/** The stream events of a streaming call, in order, without any vendor framing. */
export function claudeStreamEvents(
  answer: ClaudeAnswer,
  model: string,
  vendor: 'bdrk' | 'vrtx',
): Record<string, unknown>[] {
  const usage = usageOf(answer);
  const events: Record<string, unknown>[] = [
    {
      type: 'message_start',
      message: {
        id: claudeId('msg', vendor),
        type: 'message',
        role: 'assistant',
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    },
  ];
  let index = 0;
  if (answer.thinking) {
    events.push({
      type: 'content_block_start',
      index,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    });
    for (const p of pieces(answer.thinking.thinking, 8))
      events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: p } });
    events.push({
      type: 'content_block_delta',
      index,
      delta: { type: 'signature_delta', signature: answer.thinking.signature },
    });
    events.push({ type: 'content_block_stop', index });
    index++;
  }
  const text = answer.text;
  // a tool call may come with or without a text block before it; a text answer always has one
  if (answer.kind === 'text' || text) {
    events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    for (const p of pieces(text ?? ''))
      events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: p } });
    events.push({ type: 'content_block_stop', index });
    index++;
  }
  if (answer.kind === 'tool_use') {
    events.push({
      type: 'content_block_start',
      index,
      content_block: { type: 'tool_use', id: claudeId('toolu', vendor), name: answer.name, input: {} },
    });
    for (const p of pieces(JSON.stringify(answer.input), 8)) {
      events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: p } });
    }
    events.push({ type: 'content_block_stop', index });
  }
  const stopReason = answer.kind === 'text' ? (answer.stopReason ?? 'end_turn') : 'tool_use';
  events.push({
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: stopSequenceOf(answer) },
    usage: { output_tokens: usage.output_tokens },
  });
  events.push({ type: 'message_stop' });
  return events;
}
