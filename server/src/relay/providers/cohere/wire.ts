// Cohere's v1 chat (`POST {base}/v1/chat`) as the hub sees it. Request: the system turns become `preamble`, the last
// user turn `message`, the turns before it `chat_history` ({role: USER | CHATBOT | TOOL, message}); top_p is `p`,
// top_k `k`, stop `stop_sequences`; tools, tool calls and results as tools.ts says. Answer: {response_id, text,
// tool_calls, finish_reason, meta: {billed_units, tokens}}. Stream: one JSON object a line (the `ndjson` framing),
// `event_type` stream-start → text-generation… (tool-calls-generation) → stream-end, the last with `is_finished: true`
// and the whole response (its meta holds the usage).
import { FormatError } from '../../formats/codec.js';
import type { StreamDecoder } from '../../formats/codec.js';
import type {
  HubChunk,
  HubFinishReason,
  HubMessage,
  HubRequest,
  HubResponse,
  HubToolCall,
  HubUsage,
} from '../../hub/types.js';
import type { VendorCodec } from '../types.js';
import { ChunkMaker, hubAnswer, hubUsage, textOf } from '../vendor-text.js';
import { cohereCall, cohereResults, cohereTools, hubCalls, outputText, toolToHub } from './tools.js';

const VENDOR = 'Cohere';

/** Cohere's `p` is in [0.01, 0.99]: OpenAI clients' default of 1 (and 0) are moved inside it, as for Zhipu's top_p. */
function nucleus(p: number): number {
  return Math.min(0.99, Math.max(0.01, p));
}

export function cohereRequestFromHub(hub: HubRequest, model: string, stream: boolean): Record<string, unknown> {
  const system = hub.messages.filter((m) => m.role === 'system' || m.role === 'developer');
  const turns = hub.messages.filter((m) => m.role !== 'system' && m.role !== 'developer');
  const text = (m: HubMessage) => textOf(m, VENDOR);
  const calls = new Map<string, HubToolCall>();
  for (const m of turns) for (const c of m.tool_calls ?? []) calls.set(c.id, c);
  // tool results that end the conversation go in `tool_results`, with an empty message
  let end = turns.length;
  while (end > 0 && turns[end - 1].role === 'tool') end--;
  const body: Record<string, unknown> = { model };
  let history: HubMessage[];
  if (end < turns.length) {
    body.message = '';
    body.tool_results = cohereResults(turns.slice(end), calls, text);
    history = turns.slice(0, end);
  } else {
    const last = turns.at(-1);
    if (!last || last.role !== 'user') throw new FormatError('Cohere 的对话必须以用户消息结尾');
    body.message = text(last);
    history = turns.slice(0, -1);
  }
  if (system.length) body.preamble = system.map(text).join('\n');
  if (history.length) body.chat_history = chatHistory(history, calls, text);
  const tools = cohereTools(hub);
  if (tools) body.tools = tools;
  if (stream) body.stream = true;
  const max = hub.max_completion_tokens ?? hub.max_tokens;
  if (max !== undefined) body.max_tokens = max;
  if (hub.temperature !== undefined) body.temperature = hub.temperature;
  if (hub.top_p !== undefined) body.p = nucleus(hub.top_p);
  if (hub.top_k !== undefined) body.k = hub.top_k;
  if (hub.stop !== undefined) body.stop_sequences = [hub.stop].flat();
  if (hub.seed !== undefined) body.seed = hub.seed;
  if (hub.frequency_penalty !== undefined) body.frequency_penalty = hub.frequency_penalty;
  if (hub.presence_penalty !== undefined) body.presence_penalty = hub.presence_penalty;
  return body;
}

/** The turns before the last as chat_history: USER, CHATBOT (with its tool calls) and TOOL (a run of results). */
function chatHistory(turns: HubMessage[], calls: Map<string, HubToolCall>, text: (m: HubMessage) => string) {
  const out: Record<string, unknown>[] = [];
  for (let i = 0; i < turns.length; i++) {
    const m = turns[i];
    if (m.role === 'tool') {
      let j = i;
      while (j + 1 < turns.length && turns[j + 1].role === 'tool') j++;
      out.push({ role: 'TOOL', tool_results: cohereResults(turns.slice(i, j + 1), calls, text) });
      i = j;
    } else if (m.role === 'assistant') {
      const turn: Record<string, unknown> = { role: 'CHATBOT', message: text(m) };
      if (m.tool_calls?.length) turn.tool_calls = m.tool_calls.map(cohereCall);
      out.push(turn);
    } else out.push({ role: 'USER', message: text(m) });
  }
  return out;
}

/** A v1 chat body read back as a hub request (the mock and the conformance test check what was sent). */
function requestToHub(body: Record<string, any>): HubRequest {
  const messages: HubMessage[] = [];
  const ids = new Map<string, string>();
  const called = (calls: any[]): HubToolCall[] =>
    calls.map((c) => {
      const id = `call_${ids.size}`;
      ids.set(JSON.stringify([c.name, c.parameters]), id);
      return { id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.parameters ?? {}) } };
    });
  const results = (list: any[]) =>
    list.forEach((r) =>
      messages.push({
        role: 'tool',
        tool_call_id: ids.get(JSON.stringify([r.call?.name, r.call?.parameters])) ?? '',
        content: outputText(r.outputs ?? []),
      }),
    );
  if (typeof body.preamble === 'string') messages.push({ role: 'system', content: body.preamble });
  for (const t of body.chat_history ?? []) {
    if (t.role === 'TOOL') results(t.tool_results ?? []);
    else if (t.role === 'CHATBOT')
      messages.push({
        role: 'assistant',
        content: t.message ?? '',
        ...(t.tool_calls?.length ? { tool_calls: called(t.tool_calls) } : {}),
      });
    else messages.push({ role: t.role === 'SYSTEM' ? 'system' : 'user', content: t.message });
  }
  if (Array.isArray(body.tool_results) && body.message === '') results(body.tool_results);
  else messages.push({ role: 'user', content: body.message });
  const hub: HubRequest = { model: body.model, messages };
  if (Array.isArray(body.tools)) hub.tools = body.tools.map(toolToHub);
  if (body.temperature !== undefined) hub.temperature = body.temperature;
  if (body.p !== undefined) hub.top_p = body.p;
  if (body.stop_sequences !== undefined) hub.stop = body.stop_sequences;
  if (body.max_tokens !== undefined) hub.max_tokens = body.max_tokens;
  return hub;
}

/** Cohere's finish reasons: COMPLETE, STOP_SEQUENCE, MAX_TOKENS, ERROR, ERROR_TOXIC, ERROR_LIMIT, USER_CANCEL. */
function finishOf(reason: unknown): HubFinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason === 'ERROR_TOXIC') return 'content_filter';
  return 'stop';
}

/** The billed tokens (what Cohere charges), else the counted ones. */
export function cohereUsage(meta: any): HubUsage | null {
  return (
    hubUsage(meta?.billed_units?.input_tokens, meta?.billed_units?.output_tokens) ??
    hubUsage(meta?.tokens?.input_tokens, meta?.tokens?.output_tokens)
  );
}

function responseToHub(body: any, model: string): HubResponse {
  if (typeof body?.text !== 'string') throw new Error('invalid Cohere chat response: no text');
  const id = String(body.response_id ?? body.generation_id ?? '');
  const calls = hubCalls(body.tool_calls, String(body.generation_id ?? id));
  const answer = hubAnswer({
    id,
    model,
    text: body.text,
    finish: calls.length ? 'tool_calls' : finishOf(body.finish_reason),
    usage: cohereUsage(body.meta),
    native: typeof body.finish_reason === 'string' ? body.finish_reason : undefined,
  });
  if (calls.length) {
    const message = answer.choices[0].message;
    message.tool_calls = calls;
    if (!body.text) message.content = null;
  }
  return answer;
}

class CohereStreamDecoder implements StreamDecoder {
  private readonly chunks: ChunkMaker;
  private last: HubUsage | null = null;
  private called = false;
  private generation = '';

  constructor(opts: { id: string; model: string }) {
    this.chunks = new ChunkMaker(opts.id, opts.model);
  }

  push(data: string): HubChunk[] {
    const event = JSON.parse(data);
    switch (event?.event_type) {
      case 'stream-start':
        this.generation = String(event.generation_id ?? '');
        return [];
      case 'tool-calls-chunk':
        // the tool plan's text comes in these pieces; the calls' pieces are taken whole from tool-calls-generation
        return this.chunks.text(typeof event.text === 'string' ? event.text : '');
      case 'tool-calls-generation': {
        // the calls whole (the `tool-calls-chunk` events before it carry them in pieces)
        const calls = hubCalls(event.tool_calls, this.generation);
        if (calls.length) this.called = true;
        return this.chunks.calls(calls);
      }
      case 'text-generation':
        return this.chunks.text(typeof event.text === 'string' ? event.text : '');
      case 'stream-end': {
        const reason = event.finish_reason ?? event.response?.finish_reason;
        if (reason === 'ERROR') throw new Error(`Cohere stream failed: ${event.response?.text ?? 'ERROR'}`);
        this.last = cohereUsage(event.response?.meta);
        const finish = this.called ? 'tool_calls' : finishOf(reason);
        return [this.chunks.finish(finish, this.last, typeof reason === 'string' ? reason : undefined)];
      }
      default:
        // search-queries-generation, search-results, citation-generation: nothing the hub carries
        return [];
    }
  }

  end(): HubChunk[] {
    return [];
  }

  usage(): HubUsage | null {
    return this.last;
  }
}

export const cohereCodec: VendorCodec = {
  name: 'cohere',
  requestToHub,
  responseToHub,
  streamToHub: (opts) => new CohereStreamDecoder(opts),
};
