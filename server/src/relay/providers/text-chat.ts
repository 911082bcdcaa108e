// The conversation of an OpenAI chat body as the text-only vendors take it (Baidu ERNIE v1, Zhipu v3, Spark): the
// system prompt apart, then turns that alternate user and assistant, each one text. A request they could not honour
// (images, tools) is refused before anything is sent rather than sent without its parts.
import { FormatError } from '../formats/codec.js';

export interface TextTurn {
  role: 'user' | 'assistant';
  content: string;
}

/** The text of an OpenAI message content; an image or other part is refused. */
function textOf(content: unknown, vendor: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content == null ? '' : String(content);
  return content
    .map((part: { type?: string; text?: string }) => {
      if (part?.type === 'text') return part.text ?? '';
      throw new FormatError(`${vendor} 只接受文本消息`, 400, 'messages');
    })
    .join('');
}

type Message = { role: string; content: unknown; tool_calls?: unknown[] };

const isSystem = (m: Message) => m.role === 'system' || m.role === 'developer';

/** The system prompt (system and developer messages joined) and the alternating turns, neighbours of a role merged. */
export function textConversation(body: Record<string, any>, vendor: string): { system: string; turns: TextTurn[] } {
  const messages: Message[] = Array.isArray(body.messages) ? body.messages : [];
  const withTools = (Array.isArray(body.tools) && body.tools.length > 0) || body.functions !== undefined;
  if (withTools || messages.some((m) => m.role === 'tool' || m.role === 'function' || m.tool_calls?.length))
    throw new FormatError(`${vendor} 不支持工具调用`, 400, 'tools');
  const system = messages
    .filter(isSystem)
    .map((m) => textOf(m.content, vendor))
    .join('\n');
  const turns: TextTurn[] = [];
  for (const m of messages) {
    if (isSystem(m)) continue;
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const content = textOf(m.content, vendor);
    const last = turns[turns.length - 1];
    if (last?.role === role) last.content += `\n${content}`;
    else turns.push({ role, content });
  }
  return { system, turns };
}

/** A turn of a vendor that takes tools: text, an assistant's calls, or a tool's result naming its call. */
export interface ToolTurn {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  calls?: { id: string; name: string; arguments: string }[];
  callId?: string;
}

export interface ToolFunction {
  name: string;
  description?: string;
  parameters?: Record<string, unknown>;
}

/**
 * The conversation of an OpenAI chat body for a vendor that takes function calling (Hunyuan): as textConversation,
 * with the assistant's tool calls, the tool messages (never merged) and the request's function tools.
 */
export function toolConversation(
  body: Record<string, any>,
  vendor: string,
): { system: string; turns: ToolTurn[]; tools: ToolFunction[] } {
  const messages: (Message & { tool_call_id?: string })[] = Array.isArray(body.messages) ? body.messages : [];
  if (body.functions !== undefined || messages.some((m) => m.role === 'function'))
    throw new FormatError(`${vendor} 不支持工具调用`, 400, 'functions');
  const tools: ToolFunction[] = (Array.isArray(body.tools) ? body.tools : []).map((t: any) => {
    if (t?.type !== 'function') throw new FormatError(`${vendor} 不支持工具调用`, 400, 'tools');
    return t.function as ToolFunction;
  });
  const system = messages
    .filter(isSystem)
    .map((m) => textOf(m.content, vendor))
    .join('\n');
  const turns: ToolTurn[] = [];
  for (const m of messages) {
    if (isSystem(m)) continue;
    const content = textOf(m.content, vendor);
    if (m.role === 'tool') {
      turns.push({ role: 'tool', content, callId: String(m.tool_call_id ?? '') });
      continue;
    }
    const role = m.role === 'assistant' ? 'assistant' : 'user';
    const calls = (m.tool_calls ?? []).map((c: any) => ({
      id: String(c?.id ?? ''),
      name: String(c?.function?.name ?? ''),
      arguments: String(c?.function?.arguments ?? '{}'),
    }));
    const last = turns[turns.length - 1];
    if (last?.role === role && !last.calls && !calls.length) last.content += `\n${content}`;
    else turns.push(calls.length ? { role, content, calls } : { role, content });
  }
  return { system, turns, tools };
}
