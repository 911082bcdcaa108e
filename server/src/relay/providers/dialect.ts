// Vendors that answer in their own JSON and stream shapes (Baidu ERNIE v1, Zhipu v3, Tencent Hunyuan): their answer's
// bytes are rewritten into OpenAI chat's as they arrive (relay/upstream-call.ts `rewrite`), before any lane reads
// them, so every lane (the native pass-through's byte scanner, the hub decoders of a Claude or Gemini client, the
// channel test) sees an OpenAI upstream. An error the vendor puts inside an HTTP 200 (Baidu's `error_code`, Tencent's
// `Response.Error`) is thrown as a VendorRefusal: the relay turns it into a real error for the client, charged nothing.
import { StringDecoder } from 'node:string_decoder';
import type { UpstreamUsage } from '../hub/usage.js';
import type { RelayInfo } from './types.js';

/** An error a vendor told inside a 200 answer: the status the client gets, the vendor's message and code. */
export class VendorRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | number | null,
    /** the vendor refused the exchanged token (expired, revoked): it is dropped and the request sent once more */
    readonly credentialRefused = false,
  ) {
    super(message);
    this.name = 'VendorRefusal';
  }
}

/** Rewrites a body's bytes as they arrive; push and end may throw a VendorRefusal. */
export interface BodyRewrite {
  /** the content type of the rewritten body */
  readonly contentType: string;
  push(chunk: Buffer): Buffer;
  end(): Buffer;
}

/** One event of a vendor's event stream with all its fields (`data`, `event`, `id`, and Zhipu's `meta`). */
export type VendorEvent = Record<string, string>;

/** What a vendor's reader makes of its answers, as OpenAI chat's objects. */
export interface VendorAnswerReader {
  /** a whole answer (parsed JSON) → OpenAI's chat completion (or embeddings list); throws VendorRefusal */
  answer(info: RelayInfo, json: any): Record<string, unknown>;
  /** a reader of one stream: each event → OpenAI chunks (none for a keep-alive); throws VendorRefusal in-band */
  stream(info: RelayInfo): (event: VendorEvent) => Record<string, unknown>[];
}

/** An OpenAI chat completion with one text choice. */
export function openaiAnswer(
  info: RelayInfo,
  a: { id: string; created?: number; text: string; finish: string | null; usage: UpstreamUsageLike | null },
): Record<string, unknown> {
  return {
    id: a.id,
    object: 'chat.completion',
    created: a.created ?? Math.floor(Date.now() / 1000),
    model: info.upstreamModel,
    choices: [{ index: 0, message: { role: 'assistant', content: a.text }, finish_reason: a.finish ?? 'stop' }],
    ...(a.usage ? { usage: openaiUsage(a.usage) } : {}),
  };
}

/** An OpenAI chat chunk: a text delta, or a finish with the usage. */
export function openaiChunk(
  info: RelayInfo,
  a: { id: string; created?: number; text?: string; finish?: string | null; usage?: UpstreamUsageLike | null },
): Record<string, unknown> {
  return {
    id: a.id,
    object: 'chat.completion.chunk',
    created: a.created ?? Math.floor(Date.now() / 1000),
    model: info.upstreamModel,
    choices: [
      {
        index: 0,
        delta: a.text === undefined ? {} : { role: 'assistant', content: a.text },
        finish_reason: a.finish ?? null,
      },
    ],
    ...(a.usage ? { usage: openaiUsage(a.usage) } : {}),
  };
}

export type UpstreamUsageLike = Pick<UpstreamUsage, 'prompt_tokens' | 'completion_tokens'>;

function openaiUsage(u: UpstreamUsageLike) {
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
  };
}

/** Splits a stream into events, keeping every field of each (a standard SSE parser drops Zhipu's `meta:`). */
export class VendorEventParser {
  private readonly decoder = new StringDecoder('utf8');
  private buf = '';

  push(chunk: Buffer): VendorEvent[] {
    this.buf += this.decoder.write(chunk);
    const out: VendorEvent[] = [];
    for (;;) {
      const m = /\r\n\r\n|\n\n|\r\r/.exec(this.buf);
      if (!m) break;
      const ev = parseEvent(this.buf.slice(0, m.index));
      this.buf = this.buf.slice(m.index + m[0].length);
      if (ev) out.push(ev);
    }
    return out;
  }

  end(): VendorEvent[] {
    const rest = this.buf + this.decoder.end();
    this.buf = '';
    const ev = rest.trim() ? parseEvent(rest) : null;
    return ev ? [ev] : [];
  }
}

function parseEvent(block: string): VendorEvent | null {
  const ev: VendorEvent = {};
  let any = false;
  for (const line of block.split(/\r\n|\n|\r/)) {
    if (!line || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    ev[field] = field in ev ? `${ev[field]}\n${value}` : value;
    any = true;
  }
  return any ? ev : null;
}

const sse = (chunks: Record<string, unknown>[]) => chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('');

/** Parses a whole answer; a body that is not JSON is a bad answer (a 502), not a refusal. */
function parseJson(bytes: Buffer): unknown {
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new Error(`upstream answer is not JSON: ${bytes.toString('utf8').slice(0, 200)}`);
  }
}

/**
 * The rewrite of one answer: an event stream event by event into OpenAI's SSE (ending with `[DONE]`), any other body
 * (a whole answer, or the JSON error a vendor sends a stream request) whole at its end.
 */
export function vendorRewrite(reader: VendorAnswerReader, info: RelayInfo, contentType: string): BodyRewrite {
  if (contentType.includes('text/event-stream') && !info.isStream) return wholeOfStream(reader, info);
  if (contentType.includes('text/event-stream')) {
    const parser = new VendorEventParser();
    const read = reader.stream(info);
    const convert = (events: VendorEvent[]) => Buffer.from(sse(events.flatMap(read)));
    return {
      contentType: 'text/event-stream',
      push: (chunk) => convert(parser.push(chunk)),
      end: () => Buffer.concat([convert(parser.end()), Buffer.from('data: [DONE]\n\n')]),
    };
  }
  const parts: Buffer[] = [];
  return {
    contentType: 'application/json',
    push(chunk) {
      parts.push(chunk);
      return Buffer.alloc(0);
    },
    end: () => Buffer.from(JSON.stringify(reader.answer(info, parseJson(Buffer.concat(parts))))),
  };
}

/**
 * A vendor that only streams (Spark, over its websocket) answering a request that asked for a whole answer: its events
 * are read as a stream's and joined into one OpenAI chat completion at the end.
 */
function wholeOfStream(reader: VendorAnswerReader, info: RelayInfo): BodyRewrite {
  const parser = new VendorEventParser();
  const read = reader.stream(info);
  let id = '';
  let text = '';
  let finish: string | null = null;
  let usage: UpstreamUsageLike | null = null;
  const take = (events: VendorEvent[]) => {
    for (const chunk of events.flatMap(read) as any[]) {
      id ||= String(chunk.id ?? '');
      const choice = chunk.choices?.[0];
      text += choice?.delta?.content ?? '';
      finish = choice?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    return Buffer.alloc(0);
  };
  return {
    contentType: 'application/json',
    push: (chunk) => take(parser.push(chunk)),
    end() {
      take(parser.end());
      return Buffer.from(JSON.stringify(openaiAnswer(info, { id, text, finish, usage })));
    },
  };
}

/** A whole answer rewritten at once (the channel test's); throws a VendorRefusal as the rewrite does. */
export function rewriteWhole(reader: VendorAnswerReader, info: RelayInfo, contentType: string, body: Buffer): Buffer {
  const r = vendorRewrite(reader, info, contentType);
  return Buffer.concat([r.push(body), r.end()]);
}
