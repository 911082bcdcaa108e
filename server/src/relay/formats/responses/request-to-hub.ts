// A client's Responses request → the hub (Chat Completions). The Responses API keeps conversation state and runs
// hosted tools on OpenAI's side; a chat-only upstream can do neither, so those are refused with a 400 naming what is
// unsupported instead of being forwarded to fail upstream.
import type {
  HubContentPart,
  HubThinkingBlock,
  HubFunctionTool,
  HubMessage,
  HubRequest,
  HubResponseFormat,
  HubToolChoice,
} from '../../hub/types.js';
import { FormatError } from '../codec.js';
import { blockFromEncrypted } from './reasoning.js';

/** Request fields that need state or machinery only OpenAI has. */
const STATEFUL_FIELDS: [field: string, what: string][] = [
  ['previous_response_id', 'previous_response_id'],
  ['conversation', 'conversation'],
  ['prompt', 'prompt templates (prompt)'],
];

export function requestToHub(body: Record<string, any>): HubRequest {
  for (const [field, what] of STATEFUL_FIELDS)
    if (body[field] != null) throw new FormatError(`${what} is not supported on this channel`, 400, field);
  if (body.background === true) throw new FormatError('background is not supported on this channel', 400, 'background');
  if (typeof body.model !== 'string' || !body.model) throw new FormatError('field model is required', 400, 'model');

  const messages: HubMessage[] = [];
  if (typeof body.instructions === 'string' && body.instructions)
    messages.push({ role: 'system', content: body.instructions });
  messages.push(...inputToMessages(body.input));
  if (messages.length === 0) throw new FormatError('field input is required', 400, 'input');

  const hub: HubRequest = { model: body.model, messages };
  if (body.stream === true) hub.stream = true;
  if (typeof body.max_output_tokens === 'number') hub.max_tokens = body.max_output_tokens;
  if (typeof body.temperature === 'number') hub.temperature = body.temperature;
  if (typeof body.top_p === 'number') hub.top_p = body.top_p;
  if (Array.isArray(body.tools) && body.tools.length) hub.tools = body.tools.map(toolToHub);
  if (body.tool_choice != null) hub.tool_choice = toolChoiceToHub(body.tool_choice);
  if (typeof body.parallel_tool_calls === 'boolean') hub.parallel_tool_calls = body.parallel_tool_calls;
  const format = body.text?.format;
  if (format) hub.response_format = formatToHub(format);
  if (typeof body.reasoning?.effort === 'string') hub.reasoning_effort = body.reasoning.effort;
  if (typeof body.user === 'string') hub.user = body.user;
  return hub;
}

function inputToMessages(input: unknown): HubMessage[] {
  if (input == null) return [];
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input)) throw new FormatError('input must be a string or an array of items', 400, 'input');
  const out: HubMessage[] = [];
  // a reasoning item belongs to the assistant turn that follows it
  let pendingReasoning = '';
  // and its items as thinking blocks, kept when one carries a signature we wrote (reasoning.ts) for the provider
  let pendingBlocks: HubThinkingBlock[] = [];
  const assistantTurn = (): HubMessage => {
    const last = out[out.length - 1];
    if (last?.role === 'assistant') return last;
    const turn: HubMessage = { role: 'assistant', content: null };
    out.push(turn);
    return turn;
  };
  const attachReasoning = (turn: HubMessage): void => {
    if (pendingBlocks.some((b) => b.signature || b.redacted))
      turn.thinking_blocks = [...(turn.thinking_blocks ?? []), ...pendingBlocks];
    pendingBlocks = [];
    if (!pendingReasoning) return;
    turn.reasoning_content = (turn.reasoning_content ?? '') + pendingReasoning;
    pendingReasoning = '';
  };

  input.forEach((item: any, i: number) => {
    const type = item?.type ?? (item?.role ? 'message' : undefined);
    switch (type) {
      case 'message': {
        const m = messageToHub(item, i);
        const last = out[out.length - 1];
        if (m.role === 'assistant' && last?.role === 'assistant') {
          // one model turn can hold several assistant items (text after its calls, say); Chat Completions needs
          // them as one message so the tool results still follow the calls directly
          last.content = `${typeof last.content === 'string' ? last.content : ''}${String(m.content ?? '')}`;
          attachReasoning(last);
        } else {
          out.push(m);
          if (m.role === 'assistant') attachReasoning(m);
        }
        return;
      }
      case 'function_call': {
        // consecutive calls (and the assistant text just before them) are one Chat Completions turn
        const turn = assistantTurn();
        attachReasoning(turn);
        (turn.tool_calls ??= []).push({
          id: String(item.call_id ?? item.id ?? ''),
          type: 'function',
          function: { name: String(item.name ?? ''), arguments: String(item.arguments ?? '') },
        });
        return;
      }
      case 'function_call_output':
        out.push({ role: 'tool', tool_call_id: String(item.call_id ?? ''), content: toolOutputText(item.output) });
        return;
      case 'reasoning': {
        const text = reasoningText(item);
        const block = blockFromEncrypted(text, item.encrypted_content);
        const last = out[out.length - 1];
        // a signature that came after the turn's text (Gemini signs an answer's last text part) belongs to it
        if (block?.signature && !text && last?.role === 'assistant') {
          (last.thinking_blocks ??= []).push(block);
          return;
        }
        pendingReasoning += text;
        pendingBlocks.push(block ?? { thinking: text });
        return;
      }
      case 'item_reference':
        throw new FormatError('item_reference is not supported on this channel', 400, `input[${i}]`);
      default:
        throw new FormatError(`input item type '${String(type)}' is not supported on this channel`, 400, `input[${i}]`);
    }
  });
  return out;
}

const ROLES = new Set(['user', 'assistant', 'system', 'developer']);

function messageToHub(item: any, i: number): HubMessage {
  const role = item.role;
  if (!ROLES.has(role)) throw new FormatError(`input[${i}].role '${String(role)}' is invalid`, 400, `input[${i}].role`);
  const content = item.content;
  if (typeof content === 'string') return { role, content };
  if (!Array.isArray(content)) throw new FormatError(`input[${i}].content is required`, 400, `input[${i}].content`);
  const parts = content.map((p: any, j: number) => partToHub(p, `input[${i}].content[${j}]`));
  // Chat Completions only takes images from the user; an all-text content is sent as one string, which every
  // chat upstream accepts
  if (role !== 'user' || parts.every((p) => p.type === 'text'))
    return { role, content: parts.map((p) => (p.type === 'text' ? p.text : '')).join('') };
  return { role, content: parts };
}

function partToHub(p: any, where: string): HubContentPart {
  switch (p?.type) {
    case 'input_text':
    case 'output_text':
      return { type: 'text', text: String(p.text ?? '') };
    case 'refusal':
      return { type: 'text', text: String(p.refusal ?? '') };
    case 'input_image': {
      if (p.file_id) throw new FormatError('input_image with file_id is not supported on this channel', 400, where);
      if (typeof p.image_url !== 'string' || !p.image_url)
        throw new FormatError(`${where}.image_url is required`, 400, where);
      const detail = p.detail === 'low' || p.detail === 'high' || p.detail === 'auto' ? p.detail : undefined;
      return { type: 'image_url', image_url: detail ? { url: p.image_url, detail } : { url: p.image_url } };
    }
    default:
      throw new FormatError(`content part type '${String(p?.type)}' is not supported on this channel`, 400, where);
  }
}

/** A function_call_output's output: a string, or (newer) a list of input_text/input_image parts. */
function toolOutputText(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output))
    return output
      .map((p: any) => (p?.type === 'input_text' || p?.type === 'output_text' ? String(p.text) : ''))
      .join('');
  return output == null ? '' : JSON.stringify(output);
}

/** A reasoning item's readable text: its summary, else its raw reasoning_text content (encrypted content is opaque). */
function reasoningText(item: any): string {
  const from = (list: unknown, type: string): string =>
    Array.isArray(list)
      ? list
          .filter((s: any) => s?.type === type && typeof s.text === 'string')
          .map((s: any) => s.text)
          .join('\n\n')
      : '';
  return from(item.summary, 'summary_text') || from(item.content, 'reasoning_text');
}

function toolToHub(t: any, i: number): HubFunctionTool {
  if (t?.type !== 'function')
    throw new FormatError(`tool type '${String(t?.type)}' is not supported on this channel`, 400, `tools[${i}]`);
  if (typeof t.name !== 'string' || !t.name) throw new FormatError(`tools[${i}].name is required`, 400, `tools[${i}]`);
  const fn: HubFunctionTool['function'] = { name: t.name };
  if (typeof t.description === 'string') fn.description = t.description;
  if (t.parameters && typeof t.parameters === 'object') fn.parameters = t.parameters;
  if (typeof t.strict === 'boolean') fn.strict = t.strict;
  return { type: 'function', function: fn };
}

function toolChoiceToHub(c: any): HubToolChoice {
  if (c === 'auto' || c === 'none' || c === 'required') return c;
  if (c?.type === 'function' && typeof c.name === 'string') return { type: 'function', function: { name: c.name } };
  const what = typeof c === 'string' ? c : String(c?.type);
  throw new FormatError(`tool_choice '${what}' is not supported on this channel`, 400, 'tool_choice');
}

function formatToHub(f: any): HubResponseFormat {
  switch (f?.type) {
    case 'text':
      return { type: 'text' };
    case 'json_object':
      return { type: 'json_object' };
    case 'json_schema': {
      const js: { name: string; schema?: Record<string, unknown>; strict?: boolean } = {
        name: String(f.name ?? 'response'),
      };
      if (f.schema && typeof f.schema === 'object') js.schema = f.schema;
      if (typeof f.strict === 'boolean') js.strict = f.strict;
      return { type: 'json_schema', json_schema: js };
    }
    default:
      throw new FormatError(`text.format type '${String(f?.type)}' is not supported`, 400, 'text.format');
  }
}
