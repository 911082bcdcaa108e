// Upstream behaviours for the Responses API tests (responses.test.ts), on the OpenAI-compatible mock
// (helpers/mock-upstream.ts): OpenAI's own Responses API (the native lane) and DeepSeek's Chat Completions (a
// channel that only speaks chat, reached through the hub). Both answer deterministically from the request, in the
// vendors' wire shapes: OpenAI's `response` object and typed SSE events with sequence numbers; DeepSeek's chat
// completions with reasoning_content, its cache-hit usage fields and the usage on the last stream chunk.
import type { Behaviour, RecordedRequest } from '../helpers/mock-upstream.js';

const CREATED = 1741476542;

/** The usage OpenAI reports for every native answer (cache reads included in input_tokens). */
export const OPENAI_USAGE = {
  input_tokens: 36,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 12,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 48,
};

type Item = Record<string, any>;

function lastUserText(input: unknown): string {
  if (typeof input === 'string') return input;
  const items = Array.isArray(input) ? input : [];
  for (let i = items.length - 1; i >= 0; i--) {
    const it = items[i];
    if (it?.role !== 'user') continue;
    if (typeof it.content === 'string') return it.content;
    return (it.content ?? []).map((p: any) => p?.text ?? '').join('');
  }
  return '';
}

/** What OpenAI would answer: a function call when the request has a function tool and no tool output yet, else text. */
function openaiOutput(body: any): Item[] {
  const items: any[] = Array.isArray(body.input) ? body.input : [];
  const output = items.find((i) => i?.type === 'function_call_output');
  const fn = (body.tools ?? []).find((t: any) => t?.type === 'function');
  if (fn && !output)
    return [
      {
        id: 'fc_67ccd3acc8d48190a77525dc6de64b550d1ae52e54fea6cb',
        type: 'function_call',
        status: 'completed',
        arguments: '{"city":"Paris"}',
        call_id: 'call_12345xyz',
        name: fn.name,
      },
    ];
  const text = output ? `The tool said ${String(output.output)}` : `Hello from OpenAI: ${lastUserText(body.input)}`;
  return [
    {
      id: 'msg_67ccd2bf17f0819081ff3bb2cf6508e60bb6a6b452d3795b',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text, annotations: [] }],
    },
  ];
}

function openaiResponse(body: any, status: 'in_progress' | 'completed', output: Item[]): Item {
  return {
    id: 'resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b',
    object: 'response',
    created_at: CREATED,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: 'gpt-4o-mini-2024-07-18',
    output,
    parallel_tool_calls: true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: body.tools ?? [],
    top_p: 1,
    truncation: 'disabled',
    usage: status === 'completed' ? OPENAI_USAGE : null,
    user: null,
    metadata: {},
  };
}

/** OpenAI's typed event stream for an answer: lifecycle events, then each item opened, streamed and closed. */
function openaiEvents(body: any, output: Item[]): string {
  let seq = 0;
  const ev = (type: string, payload: Item) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...payload })}\n\n`;
  let out = ev('response.created', { response: openaiResponse(body, 'in_progress', []) });
  out += ev('response.in_progress', { response: openaiResponse(body, 'in_progress', []) });
  output.forEach((item, output_index) => {
    const at = { item_id: item.id, output_index };
    if (item.type === 'message') {
      const text: string = item.content[0].text;
      out += ev('response.output_item.added', { output_index, item: { ...item, status: 'in_progress', content: [] } });
      out += ev('response.content_part.added', {
        ...at,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      });
      for (const delta of text.match(/.{1,8}/gs) ?? [])
        out += ev('response.output_text.delta', { ...at, content_index: 0, delta, logprobs: [] });
      out += ev('response.output_text.done', { ...at, content_index: 0, text, logprobs: [] });
      out += ev('response.content_part.done', { ...at, content_index: 0, part: item.content[0] });
    } else {
      out += ev('response.output_item.added', {
        output_index,
        item: { ...item, status: 'in_progress', arguments: '' },
      });
      out += ev('response.function_call_arguments.delta', { ...at, delta: item.arguments });
      out += ev('response.function_call_arguments.done', { ...at, arguments: item.arguments });
    }
    out += ev('response.output_item.done', { output_index, item });
  });
  return out + ev('response.completed', { response: openaiResponse(body, 'completed', output) });
}

/** OpenAI's POST /v1/responses; anything else is refused as OpenAI refuses an unknown route. */
export function openaiResponsesBehaviour(req: RecordedRequest): Behaviour {
  if (req.path !== '/v1/responses')
    return {
      kind: 'json',
      status: 404,
      body: {
        error: { message: `Invalid URL (POST ${req.path})`, type: 'invalid_request_error', param: null, code: null },
      },
    };
  const output = openaiOutput(req.body);
  if (req.body.stream)
    return { kind: 'raw', status: 200, body: openaiEvents(req.body, output), contentType: 'text/event-stream' };
  return { kind: 'json', body: openaiResponse(req.body, 'completed', output) };
}

// ---- DeepSeek (Chat Completions only)

export const DEEPSEEK_REASONING = 'The user greets me; a short greeting back will do.';

/** DeepSeek's usage: OpenAI's fields plus its own cache hit/miss split. */
export function deepseekUsage(prompt: number, completion: number, reasoning: number) {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: reasoning },
    prompt_cache_hit_tokens: 0,
    prompt_cache_miss_tokens: prompt,
  };
}

/** What DeepSeek answers: a call of the first tool until a tool result is there, then text; reasoning for -reasoner. */
function deepseekAnswer(body: any) {
  const messages: any[] = body.messages ?? [];
  const last = messages.at(-1);
  const tool = body.tools?.[0]?.function;
  const reasoning = body.model === 'deepseek-reasoner' ? DEEPSEEK_REASONING : undefined;
  if (tool && last?.role !== 'tool')
    return {
      reasoning,
      content: '',
      calls: [
        {
          index: 0,
          id: 'call_0_8c1a6b5e-2f3d-4e8a-9b7c-1d2e3f4a5b6c',
          type: 'function',
          function: { name: tool.name, arguments: '{"city":"Paris"}' },
        },
      ],
    };
  const content = last?.role === 'tool' ? `The tool said ${String(last.content)}` : 'Hello! How can I help you today?';
  return { reasoning, content, calls: [] as any[] };
}

export function deepseekBehaviour(req: RecordedRequest): Behaviour {
  if (req.path !== '/v1/chat/completions')
    return { kind: 'json', status: 404, body: { error: { message: 'Not Found', type: 'invalid_request_error' } } };
  const body = req.body;
  const a = deepseekAnswer(body);
  const finish = a.calls.length ? 'tool_calls' : 'stop';
  const reasoningTokens = a.reasoning ? 11 : 0;
  const usage = deepseekUsage(21, 9 + reasoningTokens, reasoningTokens);
  const id = '930c60df-bf64-41c9-a88e-3ec75f81e00e';
  const head = { id, created: CREATED, model: body.model, system_fingerprint: 'fp_3a5770e1b4_prod0225' };
  if (!body.stream) {
    const message: Record<string, unknown> = { role: 'assistant', content: a.content };
    if (a.reasoning) message.reasoning_content = a.reasoning;
    if (a.calls.length) message.tool_calls = a.calls.map(({ index: _i, ...c }) => c);
    return {
      kind: 'json',
      body: {
        ...head,
        object: 'chat.completion',
        choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
        usage,
      },
    };
  }
  const chunk = (delta: unknown, finish_reason: string | null, u?: unknown) =>
    `data: ${JSON.stringify({ ...head, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason }], ...(u ? { usage: u } : {}) })}\n\n`;
  let out = '';
  if (a.reasoning) {
    out += chunk({ role: 'assistant', content: null, reasoning_content: '' }, null);
    for (const piece of a.reasoning.match(/.{1,12}/gs) ?? [])
      out += chunk({ content: null, reasoning_content: piece }, null);
    out += chunk({ content: '', reasoning_content: null }, null);
  } else out += chunk({ role: 'assistant', content: '' }, null);
  for (const piece of a.content.match(/.{1,10}/gs) ?? []) out += chunk({ content: piece }, null);
  for (const c of a.calls) {
    out += chunk({ tool_calls: [{ ...c, function: { name: c.function.name, arguments: '' } }] }, null);
    out += chunk({ tool_calls: [{ index: c.index, function: { arguments: c.function.arguments } }] }, null);
  }
  // DeepSeek puts the usage on the chunk that ends the answer, asked or not
  out += chunk({ content: '' }, finish, usage) + 'data: [DONE]\n\n';
  return { kind: 'raw', status: 200, body: out, contentType: 'text/event-stream; charset=utf-8' };
}
