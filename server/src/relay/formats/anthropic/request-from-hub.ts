// Hub request → the Messages request body an Anthropic upstream expects (Anthropic, or Bedrock / Vertex Claude,
// which carry the same body).
import { FormatError, type RequestOptions } from '../codec.js';
import type { HubContentPart, HubMessage, HubRequest, HubResponseFormat, HubToolChoice } from '../../hub/types.js';
import type {
  ClaudeContentBlock,
  ClaudeImageBlock,
  ClaudeMessage,
  ClaudeTextBlock,
  ClaudeToolResultBlock,
} from './wire.js';
import { parseToolInput } from './tool-input.js';
import { thinkingWouldBeRefused } from './thinking-continuity.js';

/** Used only when neither the request nor the channel setting says how long the answer may be. */
export const FALLBACK_MAX_TOKENS = 8192;

/** Thinking budgets for OpenAI's reasoning_effort when the request gives no explicit budget. */
const EFFORT_BUDGETS: Record<string, number> = { low: 1024, medium: 4096, high: 16384 };

/** Claude's smallest thinking budget. */
const MIN_THINKING_BUDGET = 1024;

export function requestFromHub(hub: HubRequest, opts: RequestOptions): Record<string, unknown> {
  if (typeof hub.n === 'number' && hub.n > 1)
    throw new FormatError('n: Claude returns one answer per request; n > 1 is not supported', 400, 'n');

  const maxTokens = hub.max_completion_tokens ?? hub.max_tokens ?? opts.defaultMaxTokens ?? FALLBACK_MAX_TOKENS;
  const body: Record<string, unknown> = { model: opts.model, max_tokens: maxTokens };

  const system = systemFromHub(hub.messages, hub.response_format);
  if (system !== undefined) body.system = system;
  body.messages = messagesFromHub(hub.messages);

  // a tool loop whose thinking block the client could not bring back goes without thinking rather than be refused
  const budget = thinkingWouldBeRefused(body.messages) ? 0 : thinkingBudget(hub, maxTokens);
  if (budget > 0) {
    body.thinking = { type: 'enabled', budget_tokens: budget };
    // Claude refuses temperature and top_k with thinking on, and top_p below 0.95
    if (typeof hub.top_p === 'number' && hub.top_p >= 0.95) body.top_p = hub.top_p;
  } else {
    if (typeof hub.temperature === 'number') body.temperature = hub.temperature;
    if (typeof hub.top_p === 'number') body.top_p = hub.top_p;
    if (typeof hub.top_k === 'number') body.top_k = hub.top_k;
  }

  const stops = hub.stop === undefined ? [] : Array.isArray(hub.stop) ? hub.stop : [hub.stop];
  if (stops.length) body.stop_sequences = stops;

  if (hub.tools?.length)
    body.tools = hub.tools.map((t) => ({
      name: t.function.name,
      ...(t.function.description !== undefined && { description: t.function.description }),
      // Claude requires an object schema even for a tool without parameters
      input_schema: t.function.parameters ?? { type: 'object', properties: {} },
    }));
  const choice = toolChoiceFromHub(hub.tool_choice, hub.parallel_tool_calls);
  if (choice) body.tool_choice = choice;

  const userId = hub.metadata?.user_id ?? hub.user;
  if (userId) body.metadata = { user_id: userId };
  body.stream = opts.stream;
  return body;
}

function thinkingBudget(hub: HubRequest, maxTokens: number): number {
  if (typeof hub.thinking_budget === 'number') return hub.thinking_budget > 0 ? hub.thinking_budget : 0;
  const effort = hub.reasoning_effort ? EFFORT_BUDGETS[hub.reasoning_effort] : undefined;
  if (!effort) return 0;
  // the budget must stay below max_tokens; too small an answer leaves no room to think at all
  const clipped = Math.min(effort, maxTokens - 1);
  return clipped >= MIN_THINKING_BUDGET ? clipped : 0;
}

/**
 * System and developer messages, wherever they stand, → `system`: a string when none carries a cache marker,
 * else text blocks with their cache_control kept.
 */
function systemFromHub(
  messages: HubMessage[],
  format: HubResponseFormat | undefined,
): string | ClaudeTextBlock[] | undefined {
  const blocks: ClaudeTextBlock[] = [];
  for (const m of messages) {
    if (m.role !== 'system' && m.role !== 'developer') continue;
    for (const b of contentBlocks(m.content)) if (b.type === 'text') blocks.push(b);
  }
  // Claude has no structured-output switch here, so JSON output can only be asked for in words
  const instruction = jsonInstruction(format);
  if (instruction) blocks.push({ type: 'text', text: instruction });
  if (!blocks.length) return undefined;
  if (blocks.some((b) => b.cache_control)) return blocks;
  return blocks.map((b) => b.text).join('\n');
}

function jsonInstruction(format: HubResponseFormat | undefined): string | null {
  if (format?.type === 'json_object') return 'Respond only with a valid JSON object, without any other text.';
  if (format?.type === 'json_schema') {
    const schema = format.json_schema.schema
      ? ` matching this JSON schema: ${JSON.stringify(format.json_schema.schema)}`
      : '';
    return `Respond only with a valid JSON object${schema}, without any other text.`;
  }
  return null;
}

/**
 * The conversation turns. Claude wants user and assistant turns alternating, tool answers as tool_result blocks in
 * a user turn, and tool_result blocks before any other content of that turn: consecutive same-role turns are merged
 * and each merged user turn puts its tool results first.
 */
function messagesFromHub(messages: HubMessage[]): ClaudeMessage[] {
  const turns: ClaudeMessage[] = [];
  for (const m of messages) {
    const turn = turnFromHub(m);
    if (!turn || !turn.content.length) continue;
    const last = turns[turns.length - 1];
    if (last && last.role === turn.role) last.content.push(...turn.content);
    else turns.push(turn);
  }
  for (const t of turns)
    if (t.role === 'user')
      t.content = [...t.content.filter(isToolResult), ...t.content.filter((b) => !isToolResult(b))];
  return turns;
}

function isToolResult(b: ClaudeContentBlock): boolean {
  return b.type === 'tool_result';
}

function turnFromHub(m: HubMessage): ClaudeMessage | null {
  switch (m.role) {
    case 'user':
      return { role: 'user', content: contentBlocks(m.content) };
    case 'tool': {
      const result: ClaudeToolResultBlock = { type: 'tool_result', tool_use_id: m.tool_call_id ?? '' };
      // a result without content (null, or only empty text) says nothing; Claude takes the block without it
      if (typeof m.content === 'string') result.content = m.content;
      else {
        const blocks = contentBlocks(m.content);
        if (blocks.length) result.content = blocks;
      }
      return { role: 'user', content: [result] };
    }
    case 'assistant':
      return { role: 'assistant', content: assistantBlocks(m) };
    default:
      return null;
  }
}

/** Thinking first (Claude checks the signed blocks come back where it put them), then text, then tool calls. */
function assistantBlocks(m: HubMessage): ClaudeContentBlock[] {
  const blocks: ClaudeContentBlock[] = [];
  // reasoning_content alone has no signature, and Claude rejects unsigned thinking: it is dropped
  for (const t of m.thinking_blocks ?? []) {
    if (t.redacted) blocks.push({ type: 'redacted_thinking', data: t.redacted });
    else if (t.signature) blocks.push({ type: 'thinking', thinking: t.thinking, signature: t.signature });
  }
  blocks.push(...contentBlocks(m.content));
  for (const call of m.tool_calls ?? [])
    blocks.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: parseToolInput(call.function.arguments),
    });
  return blocks;
}

/** Hub content → Claude text and image blocks; empty text is left out (Claude rejects empty text blocks). */
function contentBlocks(content: string | HubContentPart[] | null): (ClaudeTextBlock | ClaudeImageBlock)[] {
  if (content === null) return [];
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  const out: (ClaudeTextBlock | ClaudeImageBlock)[] = [];
  for (const p of content) {
    if (p.type === 'text') {
      if (!p.text) continue;
      const block: ClaudeTextBlock = { type: 'text', text: p.text };
      if (p.cache_control) block.cache_control = p.cache_control;
      out.push(block);
    } else if (p.type === 'image_url') out.push(imageBlock(p.image_url.url));
  }
  return out;
}

function imageBlock(url: string): ClaudeImageBlock {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  if (data) return { type: 'image', source: { type: 'base64', media_type: data[1], data: data[2] } };
  if (/^https?:\/\//i.test(url)) return { type: 'image', source: { type: 'url', url } };
  throw new FormatError('image_url: only data: (base64) and http(s) image URLs can be sent to Claude');
}

function toolChoiceFromHub(
  choice: HubToolChoice | undefined,
  parallel: boolean | undefined,
): Record<string, unknown> | undefined {
  let out: Record<string, unknown> | undefined;
  if (choice === 'auto') out = { type: 'auto' };
  else if (choice === 'required') out = { type: 'any' };
  else if (choice === 'none') return { type: 'none' };
  else if (choice && typeof choice === 'object') out = { type: 'tool', name: choice.function.name };
  if (parallel === false) out = { ...(out ?? { type: 'auto' }), disable_parallel_tool_use: true };
  return out;
}
