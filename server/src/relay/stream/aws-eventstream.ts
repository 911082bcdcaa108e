// Bedrock's streaming answer (invoke-with-response-stream) is AWS event-stream framing, not SSE: binary messages,
// each a prelude (total length, headers length, CRC), typed headers, a payload and a message CRC. AWS's codec
// decodes one whole message and checks its CRCs; this module cuts whole messages out of a byte stream that arrives
// split anywhere, and turns Bedrock's `chunk` events into the Claude stream events they carry.
//
// AWS's codec (@smithy/eventstream-codec, which brings @smithy/core) is required with the first message decoded or
// encoded, not at start: a gateway without Bedrock channels never needs it (docs/perf/startup-loads.md). It is a
// synchronous require (of the packages' CommonJS builds) because the splitter's push() is synchronous.
import { createRequire } from 'node:module';
import type { EventStreamCodec } from '@smithy/eventstream-codec';

const requireCjs = createRequire(import.meta.url);

interface Codec {
  codec: EventStreamCodec;
  toUtf8: (input: Uint8Array | string) => string;
  fromUtf8: (input: string) => Uint8Array;
}
let loaded: Codec | null = null;

/** AWS's event-stream codec and its UTF-8 helpers, required on first use. */
function aws(): Codec {
  if (loaded) return loaded;
  const { EventStreamCodec: CodecClass } = requireCjs(
    '@smithy/eventstream-codec',
  ) as typeof import('@smithy/eventstream-codec');
  const { fromUtf8, toUtf8 } = requireCjs('@smithy/util-utf8') as typeof import('@smithy/util-utf8');
  return (loaded = { codec: new CodecClass(toUtf8, fromUtf8), toUtf8, fromUtf8 });
}

type Message = ReturnType<EventStreamCodec['decode']>;
type MessageHeaders = Message['headers'];

/** The prelude's first field: the whole message's length, big-endian, including itself. */
const TOTAL_LENGTH_BYTES = 4;
/** prelude (12) + message CRC (4): the smallest possible message */
const MIN_MESSAGE_BYTES = 16;
/** AWS caps a message at 16 MiB; a bigger length means the stream is not event-stream (or is corrupt) */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export interface BedrockStreamEvent {
  /** the Claude stream event, JSON text */
  data: string;
  /** its `type` (message_start, content_block_delta, …) */
  event?: string;
}

/** An exception message inside the stream (throttlingException, modelStreamErrorException, …). */
export class BedrockStreamError extends Error {
  constructor(
    readonly exceptionType: string,
    message: string,
  ) {
    super(`${exceptionType}: ${message}`);
    this.name = 'BedrockStreamError';
  }
}

function headerString(headers: MessageHeaders, name: string): string | undefined {
  const h = headers[name];
  return h && h.type === 'string' ? h.value : undefined;
}

/** Splits a byte stream into whole event-stream messages, whatever the chunk boundaries. */
export class EventStreamSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** bytes needed before anything can be cut: the prelude's length field, then the whole next message */
  private needed = TOTAL_LENGTH_BYTES;

  push(bytes: Uint8Array): Message[] {
    if (bytes.length) {
      this.pending.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      this.pendingBytes += bytes.length;
    }
    // a large message arriving in many pieces is joined once, when complete, not once per piece
    if (this.pendingBytes < this.needed) return [];
    const buf = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
    const out: Message[] = [];
    let offset = 0;
    this.needed = TOTAL_LENGTH_BYTES;
    while (buf.length - offset >= TOTAL_LENGTH_BYTES) {
      const total = buf.readUInt32BE(offset);
      if (total < MIN_MESSAGE_BYTES || total > MAX_MESSAGE_BYTES) {
        throw new Error(`event stream: a message claims ${total} bytes; the stream is not AWS event-stream framing`);
      }
      if (buf.length - offset < total) {
        this.needed = total;
        break;
      }
      out.push(aws().codec.decode(buf.subarray(offset, offset + total)));
      offset += total;
    }
    const rest = buf.subarray(offset);
    // copy the remainder so a large consumed buffer is not kept alive by a small tail
    this.pending = rest.length ? [Buffer.from(rest)] : [];
    this.pendingBytes = rest.length;
    return out;
  }

  /** bytes received that did not make a whole message (a stream cut short) */
  get leftover(): number {
    return this.pendingBytes;
  }
}

/** Bedrock's stream → the Claude events it carries, in the shape of an SSE event (data and event name). */
export class BedrockEventDecoder {
  private readonly splitter = new EventStreamSplitter();

  push(bytes: Uint8Array): BedrockStreamEvent[] {
    const out: BedrockStreamEvent[] = [];
    for (const message of this.splitter.push(bytes)) {
      const event = readMessage(message);
      if (event) out.push(event);
    }
    return out;
  }

  /** bytes received that did not make a whole message */
  get leftover(): number {
    return this.splitter.leftover;
  }
}

function readMessage(message: Message): BedrockStreamEvent | null {
  const messageType = headerString(message.headers, ':message-type');
  const payload = aws().toUtf8(message.body);
  if (messageType === 'exception' || messageType === 'error') {
    // exceptions name themselves in `:exception-type`; the older `error` type uses `:error-code`/`:error-message`
    const type =
      headerString(message.headers, ':exception-type') ?? headerString(message.headers, ':error-code') ?? 'unknown';
    let text = headerString(message.headers, ':error-message') ?? payload;
    try {
      const json = JSON.parse(payload);
      text = json.message ?? json.Message ?? text;
    } catch {
      // a non-JSON payload is the message itself
    }
    throw new BedrockStreamError(type, text);
  }
  if (messageType !== 'event' || headerString(message.headers, ':event-type') !== 'chunk') return null;
  const chunk = JSON.parse(payload) as { bytes?: string };
  if (typeof chunk.bytes !== 'string') return null;
  const data = Buffer.from(chunk.bytes, 'base64').toString('utf8');
  let event: string | undefined;
  try {
    const type = JSON.parse(data).type;
    if (typeof type === 'string') event = type;
  } catch {
    // leave the event name out: the Claude decoder will report the bad JSON
  }
  return event === undefined ? { data } : { data, event };
}

function stringHeaders(values: Record<string, string>): MessageHeaders {
  const headers: MessageHeaders = {};
  for (const [name, value] of Object.entries(values)) headers[name] = { type: 'string', value };
  return headers;
}

/**
 * One `chunk` event as Bedrock frames it: the Claude event's JSON, base64 in `bytes`. Bedrock also pads each
 * payload with a random-length `p` field (so sizes do not leak content); `padding` adds one.
 */
export function encodeBedrockChunk(json: unknown, padding?: string): Uint8Array {
  const text = typeof json === 'string' ? json : JSON.stringify(json);
  const payload: Record<string, string> = { bytes: Buffer.from(text, 'utf8').toString('base64') };
  if (padding !== undefined) payload.p = padding;
  const { codec, fromUtf8 } = aws();
  return codec.encode({
    headers: stringHeaders({ ':event-type': 'chunk', ':content-type': 'application/json', ':message-type': 'event' }),
    body: fromUtf8(JSON.stringify(payload)),
  });
}

/** An exception message, as Bedrock sends one mid-stream (`throttlingException`, `modelStreamErrorException`, …). */
export function encodeBedrockException(type: string, message: string): Uint8Array {
  const { codec, fromUtf8 } = aws();
  return codec.encode({
    headers: stringHeaders({
      ':exception-type': type,
      ':content-type': 'application/json',
      ':message-type': 'exception',
    }),
    body: fromUtf8(JSON.stringify({ message })),
  });
}
