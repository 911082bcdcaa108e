// Hub → the request a Responses-speaking upstream expects, so a Claude, Gemini or Chat Completions client could be
// served by such an upstream. Chat Completions fields the Responses API has no place for (stop, n, seed, penalties)
// are dropped.
import type { HubContentPart, HubMessage, HubRequest, HubResponseFormat } from '../../hub/types.js';
import type { RequestOptions } from '../codec.js';

export function requestFromHub(hub: HubRequest, opts: RequestOptions): Record<string, unknown> {
  const out: Record<string, unknown> = {
    model: opts.model,
    input: hub.messages.flatMap(messageToItems),
    // the relay keeps no response ids for its clients, so nothing is left stored upstream
    store: false,
  };
  if (opts.stream) out.stream = true;
  const max = hub.max_completion_tokens ?? hub.max_tokens;
  if (max != null) out.max_output_tokens = max;
  if (hub.temperature != null) out.temperature = hub.temperature;
  if (hub.top_p != null) out.top_p = hub.top_p;
  if (hub.tools?.length)
    out.tools = hub.tools.map((t) => ({
      type: 'function',
      name: t.function.name,
      ...(t.function.description != null ? { description: t.function.description } : {}),
      parameters: t.function.parameters ?? { type: 'object', properties: {} },
      // the Responses API defaults strict to true, Chat Completions to false: say which one the client meant
      strict: t.function.strict ?? false,
    }));
  if (hub.tool_choice != null)
    out.tool_choice =
      typeof hub.tool_choice === 'string' ? hub.tool_choice : { type: 'function', name: hub.tool_choice.function.name };
  if (hub.parallel_tool_calls != null) out.parallel_tool_calls = hub.parallel_tool_calls;
  if (hub.response_format) out.text = { format: formatFromHub(hub.response_format) };
  if (hub.reasoning_effort) out.reasoning = { effort: hub.reasoning_effort };
  const user = hub.user ?? hub.metadata?.user_id;
  if (user) out.user = user;
  return out;
}

function messageToItems(m: HubMessage): Record<string, unknown>[] {
  switch (m.role) {
    case 'tool':
      return [{ type: 'function_call_output', call_id: m.tool_call_id ?? '', output: textOf(m.content) }];
    case 'assistant': {
      const items: Record<string, unknown>[] = [];
      // a reasoning input item needs the upstream's own id (and encrypted content) the hub does not have, so the
      // reasoning text of earlier turns is not sent back, as stateless Responses clients do
      const text = textOf(m.content);
      if (text)
        items.push({
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text, annotations: [] }],
        });
      for (const c of m.tool_calls ?? [])
        items.push({ type: 'function_call', call_id: c.id, name: c.function.name, arguments: c.function.arguments });
      return items;
    }
    default:
      return [
        {
          type: 'message',
          role: m.role,
          content: typeof m.content === 'string' ? m.content : (m.content ?? []).map(partFromHub),
        },
      ];
  }
}

function partFromHub(p: HubContentPart): Record<string, unknown> {
  if (p.type === 'text') return { type: 'input_text', text: p.text };
  return { type: 'input_image', image_url: p.image_url.url, detail: p.image_url.detail ?? 'auto' };
}

function textOf(content: HubMessage['content']): string {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  return content.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

function formatFromHub(f: HubResponseFormat): Record<string, unknown> {
  if (f.type !== 'json_schema') return { type: f.type };
  return {
    type: 'json_schema',
    name: f.json_schema.name,
    ...(f.json_schema.schema ? { schema: f.json_schema.schema } : {}),
    ...(f.json_schema.strict != null ? { strict: f.json_schema.strict } : {}),
  };
}
