// The OpenAI Chat Completions wire format. The hub is this format, so requests and answers convert by identity; the
// stream encoder writes new-api's stream rules (a usage chunk only when the client asked include_usage, then
// `data: [DONE]`). Used on the translated lane: an OpenAI client on a Claude or Gemini channel, or a Claude or Gemini
// client on an OpenAI-compatible channel. The OpenAI native lane passes bytes and never calls it (relay/stream/sse-scan.ts).
import type { HubChunk, HubRequest, HubResponse, HubResponseMessage, HubUsage } from '../../hub/types.js';
import type { ClientError, EncoderOptions, FormatCodec, StreamDecoder, StreamEncoder } from '../codec.js';
import { parseOpenAIStyleError } from './errors.js';
import { FormatError } from '../codec.js';

function num(v: unknown): number {
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** OpenAI-shaped usage (also DeepSeek's and the Responses API's field names) → hub usage. */
export function openaiUsageToHub(u: any): HubUsage | null {
  if (!u || typeof u !== 'object') return null;
  const prompt = num(u.prompt_tokens ?? u.input_tokens);
  const completion = num(u.completion_tokens ?? u.output_tokens);
  const cached = num(
    u.prompt_tokens_details?.cached_tokens ?? u.input_tokens_details?.cached_tokens ?? u.prompt_cache_hit_tokens,
  );
  const reasoning = num(u.completion_tokens_details?.reasoning_tokens ?? u.output_tokens_details?.reasoning_tokens);
  const creation = num(u.prompt_tokens_details?.cache_creation_tokens);
  const out: HubUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  if (cached || creation)
    out.prompt_tokens_details = { cached_tokens: cached, ...(creation ? { cache_creation_tokens: creation } : {}) };
  if (reasoning) out.completion_tokens_details = { reasoning_tokens: reasoning };
  return out;
}

/** The usage object an OpenAI client is shown (the hub's extension fields are ours, not OpenAI's). */
function usageForClient(u: HubUsage): Record<string, unknown> {
  const out: Record<string, unknown> = {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
  };
  if (u.prompt_tokens_details)
    out.prompt_tokens_details = { cached_tokens: u.prompt_tokens_details.cached_tokens ?? 0 };
  if (u.completion_tokens_details) out.completion_tokens_details = u.completion_tokens_details;
  return out;
}

const EXTENSIONS = ['thinking_blocks', 'thinking_signature', 'redacted_thinking', 'citations', 'gemini_grounding'];

/** Removes the hub's extension fields from a message or delta before an OpenAI client or upstream sees it. */
function plain<T extends Record<string, any>>(m: T): T {
  if (!EXTENSIONS.some((k) => k in m)) return m;
  const rest: Record<string, unknown> = { ...m };
  for (const k of EXTENSIONS) delete rest[k];
  return rest as T;
}

/**
 * An answer message for an OpenAI client: the cited web sources as `annotations` (url_citation, as OpenAI's search
 * models write them), when the hub has citations with a URL and the message carries no annotations of its own.
 */
function messageForClient(m: HubResponseMessage): Record<string, unknown> {
  const out: Record<string, unknown> = { ...plain(m) };
  const cited = (m.citations ?? []).filter((c) => c.url);
  if (!cited.length || 'annotations' in m) return out;
  const length = m.content?.length ?? 0;
  out.annotations = cited.map((c) => ({
    type: 'url_citation',
    url_citation: {
      url: c.url,
      title: c.title ?? c.url,
      start_index: c.start_index ?? 0,
      end_index: c.end_index ?? length,
    },
  }));
  return out;
}

function chunkForClient(c: HubChunk, model: string): Record<string, unknown> {
  return {
    id: c.id,
    object: 'chat.completion.chunk',
    created: c.created,
    model,
    choices: c.choices.map((ch) => ({ index: ch.index, delta: plain(ch.delta), finish_reason: ch.finish_reason })),
  };
}

class OpenAIStreamDecoder implements StreamDecoder {
  private last: HubUsage | null = null;
  push(data: string): HubChunk[] {
    if (data === '[DONE]') return [];
    const j = JSON.parse(data);
    if (j?.error && !j.choices) throw new Error(String(j.error.message ?? 'upstream stream error'));
    const usage = openaiUsageToHub(j.usage);
    if (usage) this.last = usage;
    if (!Array.isArray(j.choices)) j.choices = [];
    return [j as HubChunk];
  }
  end(): HubChunk[] {
    return [];
  }
  usage(): HubUsage | null {
    return this.last;
  }
}

class OpenAIStreamEncoder implements StreamEncoder {
  readonly contentType = 'text/event-stream';
  /** the latest cumulative usage the chunks carried: decoders attach usage to early chunks too (Claude's
   * message_start has the input and one output token), so only the last one seen is the answer's */
  private latestUsage: HubUsage | null = null;
  private lastId: string | null = null;
  constructor(private readonly o: EncoderOptions) {}

  push(c: HubChunk): string {
    this.lastId = c.id;
    if (c.usage) this.latestUsage = c.usage;
    return c.choices.length ? `data: ${JSON.stringify(chunkForClient(c, this.o.model))}\n\n` : '';
  }
  /** OpenAI sends the usage once, in its own chunk after the finish reason and before [DONE]. */
  end(usage: HubUsage | null): string {
    const final = usage ?? this.latestUsage;
    const tail = final && this.o.includeUsage ? this.usageEvent(final, this.lastId ?? `chatcmpl-${this.o.id}`) : '';
    return `${tail}data: [DONE]\n\n`;
  }
  error(err: ClientError): string {
    return `data: ${JSON.stringify({ error: { message: err.message, type: err.type, code: err.code } })}\n\ndata: [DONE]\n\n`;
  }
  private usageEvent(u: HubUsage, id: string): string {
    const obj = {
      id,
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: this.o.model,
      choices: [],
      usage: usageForClient(u),
    };
    return `data: ${JSON.stringify(obj)}\n\n`;
  }
}

export const openaiCodec: FormatCodec = {
  name: 'openai',
  requestToHub(body) {
    if (!Array.isArray(body.messages) || body.messages.length === 0)
      throw new FormatError('field messages is required', 400, 'messages');
    return body as HubRequest;
  },
  requestFromHub(hub, opts) {
    const out: Record<string, unknown> = { ...hub, model: opts.model, messages: hub.messages.map(plain) };
    delete out.thinking_budget;
    delete out.metadata;
    delete out.top_k;
    if (opts.stream) {
      out.stream = true;
      out.stream_options = { include_usage: true };
    } else {
      delete out.stream;
      delete out.stream_options;
    }
    return out;
  },
  responseToHub(body) {
    if (!body || !Array.isArray(body.choices)) throw new Error('upstream answer has no choices');
    return body as HubResponse;
  },
  responseFromHub(hub, opts) {
    const out: Record<string, unknown> = {
      id: hub.id,
      object: 'chat.completion',
      created: hub.created,
      model: opts.model,
      choices: hub.choices.map((c) => ({
        index: c.index,
        message: messageForClient(c.message),
        finish_reason: c.finish_reason,
      })),
    };
    if (hub.usage) out.usage = usageForClient(hub.usage);
    return out;
  },
  streamToHub: () => new OpenAIStreamDecoder(),
  streamFromHub: (opts) => new OpenAIStreamEncoder(opts),
  usageToHub: openaiUsageToHub,
  parseError: parseOpenAIStyleError,
  errorBody(err, reqId) {
    return {
      status: err.status,
      body: JSON.stringify({
        error: {
          message: `${err.message} (request id: ${reqId})`,
          type: err.type,
          param: err.param ?? '',
          code: err.code,
        },
      }),
    };
  },
};
