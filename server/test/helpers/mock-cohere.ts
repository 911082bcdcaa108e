// Cohere's v1 API as a strict mock: Bearer auth (401 {"message": "invalid api token"}), chat bodies checked by Cohere's
// rules (a non-empty `message` unless `tool_results` end the conversation, `chat_history` of USER / CHATBOT / SYSTEM /
// TOOL turns, tools with typed parameter definitions, results for declared tools as lists of objects, `p` within
// [0.01, 0.99], no field of OpenAI's such as `messages`), answers and streams from the recorded fixtures: the stream as
// newline-delimited JSON, never `data:` frames. The model `fail-model` gets the recorded error; a request with tools
// and no results yet gets the recorded tool call (tools/).
import { fixture, MockJsonVendor, type MockAnswer, type SeenRequest } from './mock-json-vendor.js';

const CHAT_FIELDS = new Set([
  'model',
  'message',
  'preamble',
  'chat_history',
  'stream',
  'max_tokens',
  'temperature',
  'p',
  'k',
  'stop_sequences',
  'seed',
  'frequency_penalty',
  'presence_penalty',
  'conversation_id',
  'tools',
  'tool_results',
]);

const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PARAM_TYPE = /^(str|int|float|bool|Dict|List\[(str|int|float|bool|Dict)\])$/;

/** Cohere's refusal of a `tools` list: names, parameter definitions with a type and a boolean `required`. */
function toolsProblem(tools: unknown): string | null {
  if (!Array.isArray(tools)) return 'invalid request: tools must be a list';
  for (const t of tools) {
    if (!TOOL_NAME.test(String(t?.name))) return `invalid request: tool name ${t?.name} is invalid`;
    for (const [k, d] of Object.entries<any>(t.parameter_definitions ?? {}))
      if (!PARAM_TYPE.test(String(d?.type)) || typeof d.required !== 'boolean')
        return `invalid request: parameter ${k} of ${t.name} needs a type and a boolean required`;
  }
  return null;
}

/** a call as Cohere writes it: {name, parameters: an object} */
const isCall = (c: any) => TOOL_NAME.test(String(c?.name)) && !!c.parameters && typeof c.parameters === 'object';

/** Cohere's refusal of tool results: each {call, outputs: a list of objects}, for a tool the request declares. */
function resultsProblem(results: unknown, tools: any[] | undefined): string | null {
  if (!Array.isArray(results) || !results.length) return 'invalid request: tool_results must be a non-empty list';
  for (const r of results) {
    if (!isCall(r?.call)) return 'invalid request: tool_results[].call needs a name and parameters';
    if (!tools?.some((t) => t.name === r.call.name)) return `invalid request: tool ${r.call.name} is not in tools`;
    if (!Array.isArray(r.outputs) || !r.outputs.every((o: unknown) => o && typeof o === 'object' && !Array.isArray(o)))
      return 'invalid request: tool_results[].outputs must be a list of objects';
  }
  return null;
}

/** Cohere's refusal of a v1 chat body, or null. */
export function checkCohereChatBody(body: any): string | null {
  if (!body || typeof body !== 'object') return 'invalid request: body must be JSON';
  for (const k of Object.keys(body)) if (!CHAT_FIELDS.has(k)) return `invalid request: unknown field ${k}`;
  if (body.tools !== undefined) {
    const problem = toolsProblem(body.tools);
    if (problem) return problem;
  }
  if (body.tool_results !== undefined) {
    const problem = resultsProblem(body.tool_results, body.tools);
    if (problem) return problem;
    if (body.message !== '') return 'invalid request: message must be empty when tool_results are given';
  } else if (typeof body.message !== 'string' || !body.message)
    return 'invalid request: message must be a non-empty string';
  if (body.chat_history !== undefined) {
    if (!Array.isArray(body.chat_history)) return 'invalid request: chat_history must be a list';
    for (const t of body.chat_history) {
      if (t?.role === 'TOOL') {
        const problem = resultsProblem(t.tool_results, body.tools);
        if (problem) return problem;
        continue;
      }
      if (!['USER', 'CHATBOT', 'SYSTEM'].includes(t?.role) || typeof t.message !== 'string')
        return 'invalid request: chat_history entries need a role of USER, CHATBOT, SYSTEM or TOOL and a message';
      if (
        t.tool_calls !== undefined &&
        (t.role !== 'CHATBOT' || !Array.isArray(t.tool_calls) || !t.tool_calls.every(isCall))
      )
        return 'invalid request: only CHATBOT turns carry tool_calls, each with a name and parameters';
    }
  }
  if (body.p !== undefined && (typeof body.p !== 'number' || body.p < 0.01 || body.p > 0.99))
    return 'invalid request: p must be between 0.01 and 0.99';
  if (body.stop_sequences !== undefined && !Array.isArray(body.stop_sequences))
    return 'invalid request: stop_sequences must be a list';
  return null;
}

const bad = (message: string): MockAnswer => ({ status: 400, body: { message } });

export function startCohereMock(key: string, extra: Record<string, (r: SeenRequest) => MockAnswer> = {}) {
  return MockJsonVendor.start({
    auth: (r) =>
      r.headers.authorization === `Bearer ${key}` ? null : { status: 401, body: fixture('cohere', 'error.json') },
    routes: {
      '/v1/chat': (r) => {
        const problem = checkCohereChatBody(r.body);
        if (problem) return bad(problem);
        if (r.body.model === 'fail-model') return { status: 400, body: { message: 'model fail-model not found' } };
        // what an OpenAI-style proxy in front of Cohere would send: SSE frames, which are not Cohere's stream
        if (r.body.model === 'sse-model')
          return {
            status: 200,
            body: fixture('cohere', 'stream.ndjson').replace(/^(.+)$/gm, 'data: $1\n'),
            contentType: 'text/event-stream',
          };
        const dir = r.body.tools && !r.body.tool_results ? 'tools/' : '';
        if (r.body.stream)
          return {
            status: 200,
            body: fixture('cohere', `${dir}stream.ndjson`),
            contentType: 'application/stream+json',
          };
        return { status: 200, body: fixture('cohere', `${dir}answer.json`) };
      },
      ...extra,
    },
  });
}
