// The contract of a wire format (docs/decisions/0013-relay-formats.md): how its requests, answers, streams, usage
// and errors convert to and from the hub (relay/hub/types.ts). One codec serves both sides of the relay: a client
// format reads the client's request with requestToHub and writes the answer with responseFromHub / streamFromHub;
// a provider whose upstream speaks the format builds the upstream request with requestFromHub and reads the answer
// with responseToHub / streamToHub. Codecs are pure: no I/O, no options store; per-stream state lives in the
// decoder and encoder objects, one per request.
import type { HubChunk, HubRequest, HubResponse, HubUsage } from '../hub/types.js';

export type WireFormat = 'openai' | 'anthropic' | 'gemini' | 'responses';

/** A request the format cannot express or the client got wrong: a 400 in the client's error shape. */
export class FormatError extends Error {
  constructor(
    message: string,
    readonly status = 400,
    readonly param: string | null = null,
  ) {
    super(message);
  }
}

export interface RequestOptions {
  /** the model sent upstream (after model mapping and suffix adapters) */
  model: string;
  stream: boolean;
  /** Anthropic requires max_tokens: used when the hub request has none (claude.default_max_tokens) */
  defaultMaxTokens?: number;
}

/** Reads one upstream stream of this format, event by event, into hub chunks. */
export interface StreamDecoder {
  /** one event: its data payload (JSON text) and, for SSE, its `event:` name */
  push(data: string, event?: string): HubChunk[];
  /** the upstream ended; chunks the format still owes (for example a usage only known at the end) */
  end(): HubChunk[];
  /** the usage seen so far (cumulative), or null */
  usage(): HubUsage | null;
}

export interface EncoderOptions {
  id: string;
  /** the model name the client asked for, written into the answer */
  model: string;
  /** OpenAI: the client asked for stream_options.include_usage */
  includeUsage?: boolean;
  /** Gemini: `alt=sse` (SSE) or the default JSON array (FormatCodec.clientFraming) */
  framing?: 'sse' | 'json-array';
  /** the client's request body (the Responses API echoes parts of it in its answer) */
  request?: Record<string, any>;
}

/** Writes hub chunks as this format's client stream. Each method returns the bytes to send (maybe ''). */
export interface StreamEncoder {
  /** the content type of the stream */
  readonly contentType: string;
  push(chunk: HubChunk): string;
  /** the stream ended normally; `usage` is the final usage (the last chunks may not have carried it) */
  end(usage: HubUsage | null): string;
  /** the upstream failed after the stream began: an in-band error and the end */
  error(err: ClientError): string;
  /**
   * native lane with a different framing (Bedrock's event-stream, Gemini's SSE to a JSON-array client): one upstream
   * event of this same format, written as it came, only framed for the client; nothing is decoded or dropped
   */
  passEvent?(data: string, event?: string): string;
  /** the end of a passed-through stream (what the framing still owes, e.g. the JSON array's `]`) */
  passEnd?(): string;
}

/** An error as the relay reports it, before it is put in a format's shape. */
export interface ClientError {
  status: number;
  message: string;
  /** OpenAI-style type (new_api_error, upstream_error, invalid_request_error, …) */
  type: string;
  code: string | number | null;
  param?: string | null;
}

/** An error an upstream of this format returned, read into the relay's fields. */
export interface UpstreamError {
  message: string;
  type: string;
  code: string | number | null;
  param: string | null;
}

export interface FormatCodec {
  readonly name: WireFormat;
  /** an upstream of this format reports usage the way Claude bills it: billed and logged as Claude's (hub/usage.ts) */
  readonly claudeUsage?: boolean;
  /**
   * the sensitive-word check cannot mask this format's native stream on its bytes (it masks OpenAI-shaped events):
   * a native stream is then decoded to hub chunks and re-encoded
   */
  readonly maskedAsHub?: boolean;
  /**
   * this format's streams keep their usage where the OpenAI byte scanner does not look (Gemini's usageMetadata): a
   * native stream of it is decoded event by event
   */
  readonly decodedStreams?: boolean;
  /**
   * the framing of a client's stream, from its request's path and query (Gemini: SSE with `alt=sse`, else one JSON
   * array); SSE when absent
   */
  clientFraming?(url: string): 'sse' | 'json-array';
  /** a client's request body in this format → hub; throws FormatError on what the format forbids */
  requestToHub(body: Record<string, any>): HubRequest;
  /** hub → the request body an upstream of this format expects */
  requestFromHub(hub: HubRequest, opts: RequestOptions): Record<string, unknown>;
  /** an upstream's whole answer in this format → hub */
  responseToHub(body: any, model: string): HubResponse;
  /** hub → the whole answer a client of this format expects */
  responseFromHub(hub: HubResponse, opts: EncoderOptions): unknown;
  streamToHub(opts: { id: string; model: string }): StreamDecoder;
  streamFromHub(opts: EncoderOptions): StreamEncoder;
  /** this format's usage object (native lane) → hub usage; null when it holds none */
  usageToHub(usage: any): HubUsage | null;
  /** an upstream error body of this format */
  parseError(status: number, body: Buffer): UpstreamError;
  /** the error a client of this format expects: status and JSON body */
  errorBody(err: ClientError, reqId: string): { status: number; body: string };
}
