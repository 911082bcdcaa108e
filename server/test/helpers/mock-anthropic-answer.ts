// The Anthropic mock's answers: a Messages API `message` object derived deterministically from the request, and the
// token counts (one token per whitespace-separated word) shared by /v1/messages and /v1/messages/count_tokens.
import { argumentsFor, countWords, firstWords } from './mock-http.js';
import { mockSignature } from './mock-anthropic-rules.js';

export type AnthropicBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

export interface AnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  service_tier?: string;
}

export interface AnthropicAnswer {
  content: AnthropicBlock[];
  stop_reason: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

/** Prompt-cache figures a test sets; Anthropic's input_tokens counts only what was neither read nor written. */
export interface CacheSpec {
  read?: number;
  creation?: number;
}

function blockTexts(content: unknown): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const b of content) {
    if (b?.type === 'text') out.push(b.text ?? '');
    else if (b?.type === 'thinking') out.push(b.thinking ?? '');
    else if (b?.type === 'tool_use') out.push(JSON.stringify(b.input ?? {}));
    else if (b?.type === 'tool_result') out.push(...blockTexts(b.content));
  }
  return out;
}

/** Every word the prompt carries: system, messages, tool definitions. */
export function promptTokens(body: any): number {
  const texts = [...blockTexts(body.system)];
  for (const m of body.messages ?? []) texts.push(...blockTexts(m.content));
  for (const t of body.tools ?? []) texts.push(t.name ?? '', t.description ?? '');
  return countWords(...texts);
}

const words = (s: string) => (s.match(/\S+/g) ?? []).length;

export function outputTokens(content: AnthropicBlock[]): number {
  let n = 0;
  for (const b of content) {
    if (b.type === 'text') n += words(b.text);
    else if (b.type === 'thinking') n += words(b.thinking);
    else if (b.type === 'tool_use') n += words(JSON.stringify(b.input).replace(/[{}":,]/g, ' '));
  }
  return Math.max(1, n);
}

export function usageFor(body: any, content: AnthropicBlock[], cache: CacheSpec = {}): AnthropicUsage {
  const read = cache.read ?? 0;
  const creation = cache.creation ?? 0;
  return {
    input_tokens: Math.max(1, promptTokens(body) - read - creation),
    output_tokens: outputTokens(content),
    cache_creation_input_tokens: creation,
    cache_read_input_tokens: read,
    service_tier: 'standard',
  };
}

/** The text of the last user turn, tool results left out. */
function lastUserText(body: any): string {
  const last = [...(body.messages ?? [])].reverse().find((m: any) => m.role === 'user');
  if (!last) return '';
  if (typeof last.content === 'string') return last.content;
  return (last.content ?? [])
    .filter((b: any) => b?.type === 'text')
    .map((b: any) => b.text)
    .join(' ');
}

function lastTurnIsToolResult(body: any): boolean {
  const last = body.messages?.[body.messages.length - 1];
  return Array.isArray(last?.content) && last.content.some((b: any) => b?.type === 'tool_result');
}

/** Which tool the answer calls, or null: a forced tool_choice, else a declared tool when the user asks for weather. */
function toolToCall(body: any): any | null {
  const tools: any[] = (body.tools ?? []).filter((t: any) => t?.input_schema);
  const choice = body.tool_choice;
  if (tools.length === 0 || choice?.type === 'none' || lastTurnIsToolResult(body)) return null;
  if (choice?.type === 'tool') return tools.find((t) => t.name === choice.name) ?? null;
  if (choice?.type === 'any') return tools[0];
  return /weather/i.test(lastUserText(body)) ? tools[0] : null;
}

export function thinkingEnabled(body: any): boolean {
  return body.thinking?.type === 'enabled' || body.thinking?.type === 'adaptive';
}

export interface AnswerIds {
  toolUseId: string;
}

/**
 * The default answer: an optional thinking block, then either a short text and a tool_use (stop_reason tool_use)
 * or "Hello from claude: <first words of the last user text>", cut at max_tokens or at a stop sequence.
 */
export function defaultAnthropicAnswer(body: any, ids: AnswerIds, cache: CacheSpec = {}): AnthropicAnswer {
  const userText = lastUserText(body);
  const content: AnthropicBlock[] = [];
  if (thinkingEnabled(body)) {
    const thinking = `Thinking about: ${firstWords(userText, 6) || 'the request'}`;
    content.push({ type: 'thinking', thinking, signature: mockSignature(thinking) });
  }
  const tool = toolToCall(body);
  if (tool) {
    content.push({ type: 'text', text: `Let me call ${tool.name}.` });
    content.push({ type: 'tool_use', id: ids.toolUseId, name: tool.name, input: argumentsFor(tool.input_schema) });
    return { content, stop_reason: 'tool_use', stop_sequence: null, usage: usageFor(body, content, cache) };
  }
  const reply = lastTurnIsToolResult(body)
    ? `Hello from claude: the tool answered ${firstWords(blockTexts(body.messages.at(-1).content).join(' '), 6)}`
    : `Hello from claude: ${firstWords(userText, 6)}`;
  let text = reply;
  let stop_reason: AnthropicAnswer['stop_reason'] = 'end_turn';
  let stop_sequence: string | null = null;
  for (const seq of body.stop_sequences ?? []) {
    const at = text.indexOf(seq);
    if (seq && at >= 0) {
      text = text.slice(0, at);
      stop_reason = 'stop_sequence';
      stop_sequence = seq;
    }
  }
  const room = Math.max(1, body.max_tokens - (content.length ? outputTokens(content) : 0));
  if (words(text) > room) {
    text = firstWords(text, room);
    stop_reason = 'max_tokens';
    stop_sequence = null;
  }
  content.push({ type: 'text', text });
  return { content, stop_reason, stop_sequence, usage: usageFor(body, content, cache) };
}
