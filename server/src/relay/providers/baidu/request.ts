// The bodies ERNIE v1 takes, made from OpenAI's (a Claude or Gemini client's request reaches here through the hub as
// an OpenAI body). Chat: the system prompt is its own field, the messages alternate user (or a function's result) and
// assistant and carry text, function tools are its `functions`; temperature lies in (0, 1]. Embeddings: `input` is always a list.
import { FormatError } from '../../formats/codec.js';
import { toolConversation, type ToolTurn } from '../text-chat.js';

const VENDOR = '百度文心 V1';

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/**
 * ERNIE's function calling: OpenAI's function tools are its `functions`, an assistant's call its `function_call`
 * ({name, arguments}: one call a turn), a tool's result a `function` message named after the call it answers (ERNIE
 * has no call ids). tool_choice none sends no functions; a named function is ERNIE's own tool_choice; required has no
 * ERNIE equivalent.
 */
function ernieMessages(turns: ToolTurn[]): Record<string, unknown>[] {
  const names = new Map<string, string>();
  return turns.map((t) => {
    if (t.role === 'tool') {
      const name = names.get(t.callId ?? '');
      if (!name) throw new FormatError(`tool result ${t.callId ?? ''} answers no call of the conversation`, 400);
      return { role: 'function', name, content: t.content };
    }
    if (!t.calls) return { role: t.role, content: t.content };
    if (t.calls.length > 1) throw new FormatError(`${VENDOR} 每轮只能调用一个函数`, 400, 'messages');
    const [call] = t.calls;
    names.set(call.id, call.name);
    return { role: 'assistant', content: t.content, function_call: { name: call.name, arguments: call.arguments } };
  });
}

function ernieFunctions(
  out: Record<string, unknown>,
  tools: ReturnType<typeof toolConversation>['tools'],
  choice: unknown,
) {
  if (!tools.length || choice === 'none') return;
  if (choice === 'required') throw new FormatError(`${VENDOR} 不支持 tool_choice required`, 400, 'tool_choice');
  out.functions = tools.map((t) => ({
    name: t.name,
    description: t.description ?? '',
    parameters: t.parameters ?? { type: 'object', properties: {} },
  }));
  const named = (choice as { function?: { name?: string } } | undefined)?.function?.name;
  if (named) out.tool_choice = { type: 'function', function: { name: named } };
}

export function baiduChatBody(body: Record<string, any>): Record<string, unknown> {
  const { system, turns, tools } = toolConversation(body, VENDOR);
  const out: Record<string, unknown> = { messages: ernieMessages(turns) };
  ernieFunctions(out, tools, body.tool_choice);
  if (system) out.system = system;
  if (body.stream) out.stream = true;
  // ERNIE refuses 0 and anything over 1: OpenAI's 0..2 is brought into its range
  if (typeof body.temperature === 'number') out.temperature = clamp(body.temperature, 0.01, 1);
  if (typeof body.top_p === 'number') out.top_p = clamp(body.top_p, 0, 1);
  const max = body.max_completion_tokens ?? body.max_tokens;
  if (typeof max === 'number') out.max_output_tokens = max;
  if (body.stop !== undefined) out.stop = Array.isArray(body.stop) ? body.stop : [body.stop];
  if (typeof body.user === 'string' && body.user) out.user_id = body.user;
  return out;
}

export function baiduEmbeddingBody(body: Record<string, any>): Record<string, unknown> {
  const input = Array.isArray(body.input) ? body.input : [body.input];
  if (!input.every((s: unknown) => typeof s === 'string'))
    throw new FormatError('百度文心 V1 的 embeddings 只接受文本输入', 400, 'input');
  const out: Record<string, unknown> = { input };
  if (typeof body.user === 'string' && body.user) out.user_id = body.user;
  return out;
}
