// Wire-format codecs by name (formats/codec.ts): the relay picks a client's and a provider's codec from here.
import type { FormatCodec, WireFormat } from './codec.js';
import { anthropicCodec } from './anthropic/index.js';
import { geminiCodec } from './gemini/index.js';
import { openaiCodec } from './openai/index.js';
import { responsesCodec } from './responses/index.js';

const CODECS: Record<WireFormat, FormatCodec> = {
  openai: openaiCodec,
  anthropic: anthropicCodec,
  gemini: geminiCodec,
  responses: responsesCodec,
};

export function codecFor(format: WireFormat): FormatCodec {
  return CODECS[format];
}

/** The framing of a client's stream: its format's reading of the request's path and query, SSE by default. */
export function clientFraming(format: WireFormat, url: string): 'sse' | 'json-array' {
  return CODECS[format].clientFraming?.(url) ?? 'sse';
}

export type { FormatCodec, WireFormat } from './codec.js';
