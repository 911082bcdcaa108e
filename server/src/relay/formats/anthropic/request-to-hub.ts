// A Claude client's Messages request (POST /v1/messages, /v1/messages/count_tokens) → hub request.
import { FormatError } from '../codec.js';
import type {
  HubContentPart,
  HubFunctionTool,
  HubMessage,
  HubRequest,
  HubTextPart,
  HubThinkingBlock,
  HubToolCall,
  HubToolChoice,
} from '../../hub/types.js';

/**
 * A tool Anthropic runs itself (web search, code execution, bash, text editor, computer use…): any tool whose
 * `type` is set and is not 'custom'. The hub only carries function tools, so these stay out of it.
 */
function isServerTool(tool: any): boolean {
  return !!tool && typeof tool === 'object' && tool.type !== undefined && tool.type !== 'custom';
}

/** The server tools of a Claude request, for the caller to decide whether the channel can run them. */
export function anthropicServerTools(body: Record<string, any>): Record<string, unknown>[] {
  return Array.isArray(body.tools) ? body.tools.filter(isServerTool) : [];
}

/**
 * A Messages request may leave out max_tokens here, though Anthropic requires it: as new-api, the gateway fills in
 * the channel's claude.default_max_tokens for the model (new-api-compat.md §4.7) once a channel is chosen.
 */
export function requestToHub(body: Record<string, any>): HubRequest {
  return convert(body);
}

/** The body of POST /v1/messages/count_tokens: a messages request without max_tokens. */
export function countTokensRequestToHub(body: Record<string, any>): HubRequest {
  return convert(body);
}

export function countTokensResponse(inputTokens: number): { input_tokens: number } {
  return { input_tokens: inputTokens };
}

function convert(body: Record<string, any>): HubRequest {
  validateClaudeRequest(body);
  const hub: HubRequest = { model: body.model, messages: [] };
  const system = systemMessage(body.system);
  if (system) hub.messages.push(system);
  body.messages.forEach((m: any, i: number) => hub.messages.push(...messageToHub(m, i)));

  if (typeof body.max_tokens === 'number') hub.max_tokens = body.max_tokens;
  if (typeof body.stream === 'boolean') hub.stream = body.stream;
  if (typeof body.temperature === 'number') hub.temperature = body.temperature;
  if (typeof body.top_p === 'number') hub.top_p = body.top_p;
  if (typeof body.top_k === 'number') hub.top_k = body.top_k;
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length) hub.stop = body.stop_sequences;
  if (typeof body.metadata?.user_id === 'string') hub.user = body.metadata.user_id;

  const tools = (Array.isArray(body.tools) ? body.tools : []).filter((t: any) => !isServerTool(t)).map(toolToHub);
  if (tools.length) hub.tools = tools;
  Object.assign(hub, toolChoiceToHub(body.tool_choice));

  if (body.thinking?.type === 'enabled') hub.thinking_budget = Number(body.thinking.budget_tokens) || 0;
  else if (body.thinking?.type === 'disabled') hub.thinking_budget = 0;
  return hub;
}

/** The checks Anthropic makes before anything else, with its messages (a pydantic-style "field: problem"), but for
 * max_tokens, which may be absent (requestToHub). */
export function validateClaudeRequest(body: Record<string, any>): void {
  if (!body || typeof body !== 'object') throw new FormatError('request body must be a JSON object');
  if (typeof body.model !== 'string' || !body.model) throw new FormatError('model: Field required', 400, 'model');
  if (body.messages === undefined) throw new FormatError('messages: Field required', 400, 'messages');
  if (!Array.isArray(body.messages)) throw new FormatError('messages: Input should be a valid list', 400, 'messages');
  if (!body.messages.length) throw new FormatError('messages: at least one message is required', 400, 'messages');
  body.messages.forEach((m: any, i: number) => {
    if (!m || typeof m !== 'object') throw new FormatError(`messages.${i}: Input should be a valid dictionary`);
    if (m.role !== 'user' && m.role !== 'assistant')
      throw new FormatError(`messages.${i}.role: Input should be 'user' or 'assistant'`, 400, `messages.${i}.role`);
    if (typeof m.content !== 'string' && !Array.isArray(m.content))
      throw new FormatError(`messages.${i}.content: Field required`, 400, `messages.${i}.content`);
  });
  if (body.max_tokens !== undefined && (!Number.isInteger(body.max_tokens) || body.max_tokens < 1))
    throw new FormatError('max_tokens: Input should be a positive integer', 400, 'max_tokens');
}

function systemMessage(system: unknown): HubMessage | null {
  if (typeof system === 'string') return system ? { role: 'system', content: system } : null;
  if (!Array.isArray(system) || !system.length) return null;
  const parts = system.filter((b: any) => b?.type === 'text').map(textPart);
  return { role: 'system', content: compactContent(parts) };
}

function textPart(block: any): HubTextPart {
  const part: HubTextPart = { type: 'text', text: String(block.text ?? '') };
  if (block.cache_control) part.cache_control = block.cache_control;
  return part;
}

function imagePart(block: any, where: string): HubContentPart {
  const src = block.source ?? {};
  if (src.type === 'base64')
    return { type: 'image_url', image_url: { url: `data:${src.media_type};base64,${src.data}` } };
  if (src.type === 'url') return { type: 'image_url', image_url: { url: src.url } };
  throw new FormatError(`${where}.source: image source type '${src.type}' cannot be converted for this channel`);
}

/** One text part without a cache marker reads as a plain string (what every provider accepts); else the parts. */
function compactContent(parts: HubContentPart[]): string | HubContentPart[] {
  if (parts.length === 1 && parts[0].type === 'text' && !parts[0].cache_control) return parts[0].text;
  return parts;
}

/**
 * One Claude turn → hub messages. A user turn's tool_result blocks become `tool` messages, in order, ahead of the
 * user's remaining content (Chat Completions wants a tool answer right after the assistant turn that called it).
 */
function messageToHub(m: any, i: number): HubMessage[] {
  if (typeof m.content === 'string') return [{ role: m.role, content: m.content }];
  return m.role === 'assistant' ? [assistantToHub(m.content, i)] : userToHub(m.content, i);
}

function userToHub(blocks: any[], i: number): HubMessage[] {
  const toolMessages: HubMessage[] = [];
  const parts: HubContentPart[] = [];
  blocks.forEach((b, j) => {
    const where = `messages.${i}.content.${j}`;
    if (b?.type === 'text') parts.push(textPart(b));
    else if (b?.type === 'image') parts.push(imagePart(b, where));
    else if (b?.type === 'tool_result') toolMessages.push(toolResultToHub(b, where));
    else throw unsupportedBlock(b, where);
  });
  return parts.length ? [...toolMessages, { role: 'user', content: compactContent(parts) }] : toolMessages;
}

function toolResultToHub(block: any, where: string): HubMessage {
  let content: string | HubContentPart[];
  if (typeof block.content === 'string') content = block.content;
  else if (Array.isArray(block.content)) {
    const parts = block.content.map((c: any, k: number) =>
      c?.type === 'image' ? imagePart(c, `${where}.content.${k}`) : textPart(c),
    );
    // text-only results read as one string: many providers take only strings in a tool message
    content = parts.every((p: HubContentPart) => p.type === 'text')
      ? parts.map((p: HubTextPart) => p.text).join('\n')
      : parts;
  } else content = '';
  return { role: 'tool', tool_call_id: String(block.tool_use_id ?? ''), content };
}

function assistantToHub(blocks: any[], i: number): HubMessage {
  const parts: HubContentPart[] = [];
  const calls: HubToolCall[] = [];
  const thinking: HubThinkingBlock[] = [];
  blocks.forEach((b, j) => {
    const where = `messages.${i}.content.${j}`;
    if (b?.type === 'text') parts.push(textPart(b));
    else if (b?.type === 'tool_use')
      calls.push({
        id: String(b.id ?? ''),
        type: 'function',
        function: { name: String(b.name ?? ''), arguments: JSON.stringify(b.input ?? {}) },
      });
    else if (b?.type === 'thinking') thinking.push({ thinking: String(b.thinking ?? ''), signature: b.signature });
    else if (b?.type === 'redacted_thinking') thinking.push({ thinking: '', redacted: String(b.data ?? '') });
    else throw unsupportedBlock(b, where);
  });
  const msg: HubMessage = {
    role: 'assistant',
    content: parts.length ? compactContent(parts) : calls.length ? null : '',
  };
  if (calls.length) msg.tool_calls = calls;
  if (thinking.length) {
    msg.thinking_blocks = thinking;
    const text = thinking.map((t) => t.thinking).join('');
    if (text) msg.reasoning_content = text;
  }
  return msg;
}

function unsupportedBlock(block: any, where: string): FormatError {
  return new FormatError(`${where}.type: '${block?.type}' content blocks cannot be converted for this channel`);
}

function toolToHub(tool: any): HubFunctionTool {
  const fn: HubFunctionTool['function'] = { name: String(tool.name ?? '') };
  if (typeof tool.description === 'string') fn.description = tool.description;
  if (tool.input_schema && typeof tool.input_schema === 'object') fn.parameters = tool.input_schema;
  return { type: 'function', function: fn };
}

function toolChoiceToHub(choice: any): Pick<HubRequest, 'tool_choice' | 'parallel_tool_calls'> {
  if (!choice || typeof choice !== 'object') return {};
  const out: Pick<HubRequest, 'tool_choice' | 'parallel_tool_calls'> = {};
  let mapped: HubToolChoice | undefined;
  if (choice.type === 'auto') mapped = 'auto';
  else if (choice.type === 'any') mapped = 'required';
  else if (choice.type === 'none') mapped = 'none';
  else if (choice.type === 'tool') mapped = { type: 'function', function: { name: String(choice.name ?? '') } };
  if (mapped) out.tool_choice = mapped;
  if (choice.disable_parallel_tool_use === true) out.parallel_tool_calls = false;
  return out;
}
