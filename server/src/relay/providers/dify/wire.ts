// Dify's app API as the hub sees it. The conversation goes as one `query` (a lone user turn as it is, else the turns
// written out as new-api writes them: `SYSTEM: \n…\nUSER: \n…\nASSISTANT: \n…\n`), with `inputs`, `user` and
// `response_mode`. Answers: a chat app's {answer, metadata: {usage}}, a completion app's the same, a workflow's
// {data: {outputs, total_tokens}}. Streams are SSE whose JSON names its event: message / agent_message (a piece of the
// answer), text_chunk (a workflow's), message_end (the usage), workflow_finished, error; the rest (pings, agent
// thoughts, node events) carry nothing the hub holds. An agent app answers only in streams: a request that is not a
// stream is streamed from Dify and read whole (readAnswer).
import type { StreamDecoder } from '../../formats/codec.js';
import type { HubChunk, HubMessage, HubRequest, HubResponse, HubUsage } from '../../hub/types.js';
import { SseParser } from '../../stream/sse-parser.js';
import type { VendorCodec } from '../types.js';
import { ChunkMaker, hubAnswer, hubUsage, refuseTools, textOf } from '../vendor-text.js';

const VENDOR = 'Dify';
const ROLE_NAMES: Record<string, string> = { system: 'SYSTEM', developer: 'SYSTEM', assistant: 'ASSISTANT' };
const TURN = /^(SYSTEM|USER|ASSISTANT): \n/m;

/** The conversation as Dify's one query. */
export function difyQuery(hub: HubRequest): string {
  refuseTools(hub, VENDOR);
  const turns = hub.messages;
  if (turns.length === 1 && turns[0].role === 'user') return textOf(turns[0], VENDOR);
  return turns.map((m) => `${ROLE_NAMES[m.role] ?? 'USER'}: \n${textOf(m, VENDOR)}\n`).join('');
}

/** A query read back into turns (the mock and the conformance test check what was sent). */
export function turnsOfQuery(query: string): HubMessage[] {
  if (!TURN.test(query)) return [{ role: 'user', content: query }];
  const parts = query.split(TURN).slice(1);
  const turns: HubMessage[] = [];
  for (let i = 0; i < parts.length; i += 2) {
    const role = parts[i] === 'SYSTEM' ? 'system' : parts[i] === 'ASSISTANT' ? 'assistant' : 'user';
    turns.push({ role, content: parts[i + 1].replace(/\n$/, '') });
  }
  return turns;
}

function requestToHub(body: Record<string, any>): HubRequest {
  const query = typeof body.query === 'string' ? body.query : String(body.inputs?.query ?? '');
  return { model: 'dify', messages: turnsOfQuery(query) };
}

/** A workflow's outputs as text: its `text` / `answer` / `result` output, else all of them as JSON. */
function outputText(outputs: any): string {
  for (const name of ['text', 'answer', 'result', 'output'])
    if (typeof outputs?.[name] === 'string') return outputs[name];
  return outputs && typeof outputs === 'object' ? JSON.stringify(outputs) : '';
}

function failure(event: any): Error {
  return new Error(`Dify: ${event?.message ?? event?.data?.error ?? 'error'}`);
}

function responseToHub(body: any, model: string): HubResponse {
  if (body?.data && typeof body.data === 'object' && 'outputs' in body.data) {
    if (body.data.status && body.data.status !== 'succeeded') throw failure(body);
    // a workflow reports only its total tokens: the relay counts the prompt and completion itself
    return hubAnswer({
      id: String(body.workflow_run_id ?? ''),
      model,
      text: outputText(body.data.outputs),
      finish: 'stop',
      usage: null,
    });
  }
  if (typeof body?.answer !== 'string') throw new Error('invalid Dify answer: no answer');
  const u = body.metadata?.usage;
  return hubAnswer({
    id: String(body.message_id ?? body.id ?? ''),
    model,
    text: body.answer,
    finish: 'stop',
    usage: hubUsage(u?.prompt_tokens, u?.completion_tokens),
  });
}

class DifyStreamDecoder implements StreamDecoder {
  private readonly chunks: ChunkMaker;
  private last: HubUsage | null = null;
  private finished = false;

  constructor(opts: { id: string; model: string }) {
    this.chunks = new ChunkMaker(opts.id, opts.model);
  }

  push(data: string): HubChunk[] {
    if (!data.trim()) return []; // `event: ping`
    const event = JSON.parse(data);
    switch (event?.event) {
      case 'message':
      case 'agent_message':
        return this.chunks.text(typeof event.answer === 'string' ? event.answer : '');
      case 'text_chunk':
        return this.chunks.text(typeof event.data?.text === 'string' ? event.data.text : '');
      case 'message_end': {
        const u = event.metadata?.usage;
        this.last = hubUsage(u?.prompt_tokens, u?.completion_tokens);
        return this.finish();
      }
      case 'workflow_finished':
        if (event.data?.status && event.data.status !== 'succeeded') throw failure(event);
        return this.finish();
      case 'error':
        throw failure(event);
      default:
        return [];
    }
  }

  private finish(): HubChunk[] {
    if (this.finished) return [];
    this.finished = true;
    return [this.chunks.finish('stop', this.last)];
  }

  end(): HubChunk[] {
    return this.finish();
  }

  usage(): HubUsage | null {
    return this.last;
  }
}

/** An answer streamed because the app answers only in streams (agent), read whole into one answer. */
function readAnswer(raw: string, model: string): HubResponse {
  if (raw.trimStart().startsWith('{')) return responseToHub(JSON.parse(raw), model);
  const decoder = new DifyStreamDecoder({ id: '', model });
  const parser = new SseParser();
  let text = '';
  for (const e of [...parser.push(raw), ...parser.end()])
    for (const c of decoder.push(e.data)) text += c.choices[0]?.delta.content ?? '';
  return hubAnswer({ id: '', model, text, finish: 'stop', usage: decoder.usage() });
}

export const difyCodec: VendorCodec = {
  name: 'dify',
  requestToHub,
  responseToHub,
  readAnswer,
  streamToHub: (opts) => new DifyStreamDecoder(opts),
};
