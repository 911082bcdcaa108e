// The framings an upstream stream may come in, behind one interface: bytes in, whole events out. A provider names its
// framing (providers/types.ts `framing`); the lanes and the pump only see this interface and the flag that says
// whether the relay's SSE byte scanner (relay/stream/sse-scan.ts) can read the bytes as they are. A new framing is one
// more entry here.
import { awsEventFraming } from './aws-framing.js';
import { JsonArraySplitter } from './json-array.js';
import { ndjsonFraming } from './ndjson.js';
import { wholeJsonFraming } from './whole-json.js';
import { SseParser } from './sse-parser.js';
import { wsJsonFraming } from './ws-json.js';

/** One upstream event: its data payload and, for SSE, its `event:` name. */
export interface FramedEvent {
  data: string;
  event?: string;
}

/** Cuts an upstream byte stream into events (per request: it holds the bytes of an event not yet complete). */
export interface EventFraming {
  push(bytes: Buffer): FramedEvent[];
  /** the upstream ended: a last event still owed, or a throw when the bytes ended inside one */
  end(): FramedEvent[];
}

export interface FramingKind {
  /** a new framing for one stream */
  create(): EventFraming;
  /** the bytes are Server-Sent Events the native lane's byte scanner may pass through without decoding them */
  scannable: boolean;
}

/** A streamed top-level JSON array (Gemini's streamGenerateContent without alt=sse): each element is one event. */
function jsonArrayFraming(): EventFraming {
  const splitter = new JsonArraySplitter();
  return {
    push: (bytes) => splitter.push(bytes).map((data) => ({ data })),
    end: () => splitter.end().map((data) => ({ data })),
  };
}

export type FramingName = 'sse' | 'aws-eventstream' | 'json-array' | 'ws-json' | 'ndjson' | 'whole-json';

const FRAMINGS: Record<FramingName, FramingKind> = {
  sse: { create: () => new SseParser(), scannable: true },
  'aws-eventstream': { create: awsEventFraming, scannable: false },
  'json-array': { create: jsonArrayFraming, scannable: false },
  // websocket frames (transport/websocket.ts), each one JSON event
  'ws-json': { create: wsJsonFraming, scannable: false },
  // newline-delimited JSON (Cohere's v1 chat stream)
  ndjson: { create: ndjsonFraming, scannable: false },
  // one JSON answer as the only event (PaLM, which cannot stream)
  'whole-json': { create: wholeJsonFraming, scannable: false },
};

/** The framing a provider declared (SSE when it declared none). */
export function framingOf(name: FramingName | undefined): FramingKind {
  return FRAMINGS[name ?? 'sse'];
}
