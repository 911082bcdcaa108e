// PaLM 2's chat (`POST {base}/v1beta2/models/{model}:generateMessage`) as the hub sees it. Request: the system turns
// become `prompt.context`, the others `prompt.messages` with PaLM's authors "0" (the user) and "1" (the model), as
// new-api writes them; temperature, top_p, top_k, candidate_count 1. Answer: {candidates: [{author, content}],
// filters}: no usage (counted locally). PaLM cannot stream: a stream request gets the whole answer as one event
// (the `whole-json` framing), decoded into one piece of text and the end.
import { FormatError, type StreamDecoder } from '../../formats/codec.js';
import type { HubChunk, HubMessage, HubRequest, HubResponse, HubUsage } from '../../hub/types.js';
import type { VendorCodec } from '../types.js';
import { ChunkMaker, hubAnswer, refuseTools, textOf } from '../vendor-text.js';

const VENDOR = 'PaLM';

export function palmRequestFromHub(hub: HubRequest): Record<string, unknown> {
  refuseTools(hub, VENDOR);
  const system = hub.messages.filter((m) => m.role === 'system' || m.role === 'developer');
  const turns = hub.messages.filter((m) => m.role !== 'system' && m.role !== 'developer');
  if (!turns.length) throw new FormatError('PaLM 的对话至少需要一条用户消息');
  const prompt: Record<string, unknown> = {
    messages: turns.map((m) => ({ author: m.role === 'assistant' ? '1' : '0', content: textOf(m, VENDOR) })),
  };
  if (system.length) prompt.context = system.map((m) => textOf(m, VENDOR)).join('\n');
  const body: Record<string, unknown> = { prompt, candidate_count: 1 };
  if (hub.temperature !== undefined) body.temperature = hub.temperature;
  if (hub.top_p !== undefined) body.top_p = hub.top_p;
  if (hub.top_k !== undefined) body.top_k = hub.top_k;
  return body;
}

function requestToHub(body: Record<string, any>): HubRequest {
  const messages: HubMessage[] = [];
  if (typeof body.prompt?.context === 'string') messages.push({ role: 'system', content: body.prompt.context });
  for (const m of body.prompt?.messages ?? [])
    messages.push({ role: m.author === '1' ? 'assistant' : 'user', content: m.content });
  const hub: HubRequest = { model: 'palm', messages };
  if (body.temperature !== undefined) hub.temperature = body.temperature;
  if (body.top_p !== undefined) hub.top_p = body.top_p;
  return hub;
}

/** The answer's text, and whether PaLM's filters withheld it. */
function answerOf(body: any): { text: string; filtered: boolean } {
  const candidate = Array.isArray(body?.candidates) ? body.candidates[0] : undefined;
  if (candidate && typeof candidate.content === 'string') return { text: candidate.content, filtered: false };
  if (Array.isArray(body?.filters) && body.filters.length) return { text: '', filtered: true };
  throw new Error('invalid PaLM answer: no candidates');
}

function responseToHub(body: any, model: string): HubResponse {
  const { text, filtered } = answerOf(body);
  return hubAnswer({ id: '', model, text, finish: filtered ? 'content_filter' : 'stop', usage: null });
}

class PalmStreamDecoder implements StreamDecoder {
  private readonly chunks: ChunkMaker;

  constructor(opts: { id: string; model: string }) {
    this.chunks = new ChunkMaker(opts.id, opts.model);
  }

  push(data: string): HubChunk[] {
    const { text, filtered } = answerOf(JSON.parse(data));
    return [...this.chunks.text(text), this.chunks.finish(filtered ? 'content_filter' : 'stop', null)];
  }

  end(): HubChunk[] {
    return [];
  }

  usage(): HubUsage | null {
    return null;
  }
}

export const palmCodec: VendorCodec = {
  name: 'palm',
  requestToHub,
  responseToHub,
  streamToHub: (opts) => new PalmStreamDecoder(opts),
};
