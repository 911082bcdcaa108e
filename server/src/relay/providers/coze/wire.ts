// Coze's v3 chat (`POST {base}/v3/chat`) as the hub sees it. Request: {bot_id, user_id, stream, additional_messages:
// [{role: user | assistant, content, content_type: "text"}]}; Coze takes no system turn (the bot's own prompt is its
// system prompt), so one is sent as a user turn marked `meta_data: {source_role: "system"}`. Coze answers a request
// that does not stream with a chat still in progress, to be polled: the relay always streams and reads the stream
// whole for such a request (readAnswer). Stream: SSE with named events, conversation.message.delta (a piece of the
// answer when its type is `answer`), conversation.chat.completed (usage: input_count, output_count),
// conversation.chat.failed and error (the stream fails), done.
import type { StreamDecoder } from '../../formats/codec.js';
import type { HubChunk, HubMessage, HubRequest, HubResponse, HubUsage } from '../../hub/types.js';
import { SseParser } from '../../stream/sse-parser.js';
import type { VendorCodec } from '../types.js';
import { ChunkMaker, hubAnswer, hubUsage, refuseTools, textOf } from '../vendor-text.js';

const VENDOR = 'Coze';

export function cozeRequestFromHub(hub: HubRequest, botId: string): Record<string, unknown> {
  refuseTools(hub, VENDOR);
  const additional = hub.messages.map((m) => {
    const message: Record<string, unknown> = {
      role: m.role === 'assistant' ? 'assistant' : 'user',
      content: textOf(m, VENDOR),
      content_type: 'text',
    };
    if (m.role === 'system' || m.role === 'developer') message.meta_data = { source_role: 'system' };
    return message;
  });
  return {
    bot_id: botId,
    user_id: hub.user || hub.metadata?.user_id || 'api-user',
    stream: true,
    auto_save_history: true,
    additional_messages: additional,
  };
}

function requestToHub(body: Record<string, any>): HubRequest {
  const messages: HubMessage[] = (body.additional_messages ?? []).map((m: any) => ({
    role: m.meta_data?.source_role === 'system' ? 'system' : m.role,
    content: m.content,
  }));
  return { model: 'coze', messages };
}

function failure(data: any): Error {
  return new Error(`Coze: ${data?.last_error?.msg || data?.msg || 'chat failed'}`);
}

function parse(data: string): any {
  try {
    return JSON.parse(data);
  } catch {
    return null;
  }
}

class CozeStreamDecoder implements StreamDecoder {
  private readonly chunks: ChunkMaker;
  private last: HubUsage | null = null;
  private finished = false;

  constructor(opts: { id: string; model: string }) {
    this.chunks = new ChunkMaker(opts.id, opts.model);
  }

  push(data: string, event?: string): HubChunk[] {
    switch (event) {
      case 'conversation.message.delta': {
        const d = parse(data);
        if (d?.role !== 'assistant' || (d.type !== undefined && d.type !== 'answer')) return [];
        return this.chunks.text(typeof d.content === 'string' ? d.content : '');
      }
      case 'conversation.chat.completed': {
        const u = parse(data)?.usage;
        this.last = hubUsage(u?.input_count, u?.output_count);
        return this.finish();
      }
      case 'conversation.chat.failed':
      case 'error':
        throw failure(parse(data));
      default:
        // chat.created / in_progress, message.completed (the whole message again), done
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

/** A request that did not ask to stream was streamed from Coze: its events read into one answer. */
function readAnswer(raw: string, model: string): HubResponse {
  const decoder = new CozeStreamDecoder({ id: '', model });
  const parser = new SseParser();
  let text = '';
  let id = '';
  for (const e of [...parser.push(raw), ...parser.end()]) {
    if (e.event === 'conversation.chat.created') id = String(parse(e.data)?.id ?? '');
    for (const c of decoder.push(e.data, e.event)) text += c.choices[0]?.delta.content ?? '';
  }
  return hubAnswer({ id, model, text, finish: 'stop', usage: decoder.usage() });
}

export const cozeCodec: VendorCodec = {
  name: 'coze',
  requestToHub,
  readAnswer,
  responseToHub: () => {
    throw new Error('Coze answers a chat that is not streamed without its messages');
  },
  streamToHub: (opts) => new CozeStreamDecoder(opts),
};
