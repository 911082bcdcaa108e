// Relay modes: what differs between JSON endpoints (path upstream, validation, local token counting, where the
// completion text lives). The pipeline (relay/pipeline/) is the same for every mode.
import { countTextTokens } from '../../services/tokenizer.js';
import type { PriceData } from '../../services/pricing/index.js';
import type { UpstreamUsage } from '../hub/usage.js';
import type { WireFormat } from '../formats/codec.js';
import type { HubRequest } from '../hub/types.js';
import type { EndpointKind } from './endpoint-kind.js';

export interface StreamDelta {
  text: string;
  toolCalls: number;
}

/**
 * How a non-chat request (embeddings) is served by a provider of another wire format: its body is built from the
 * client's and the provider's whole answer is written back in the client's shape (relay/attempt.ts, the translated
 * lane of modes without a hub form).
 */
export interface ModeTranslation {
  /** the client's body → the upstream's body; throws FormatError for what the upstream's format cannot say */
  request(body: Record<string, any>, upstreamModel: string): Record<string, unknown>;
  /** the upstream's whole JSON answer → the client's answer, and the usage the upstream reported (null: none) */
  response(upstream: any, ctx: TranslationContext): { body: unknown; usage: UpstreamUsage | null };
}

export interface TranslationContext {
  /** the model the client asked for, written into the answer */
  model: string;
  /** the client's request body */
  request: Record<string, any>;
  /** the local count of the request's input tokens */
  promptTokens(): number;
}

export interface RelayMode {
  name: string;
  /**
   * the endpoint the client asked for; a provider serves it only when its manifest declares it (providers/endpoints.ts).
   * Chat-like modes of other client formats (Claude messages, Gemini generateContent) are `chat`.
   */
  endpoint: EndpointKind;
  canStream: boolean;
  /** billed per input only (embeddings): no completion tokens */
  inputOnly?: boolean;
  /** new-api's validation (new-api-compat.md §4.6 step 2); a message means 400 invalid_text_request */
  validate(body: Record<string, any>): string | null;
  /** local prompt count (new-api-compat.md §5.4) */
  promptTokens(body: Record<string, any>, model: string): number;
  /**
   * the prompt's texts, for the sensitive-word check (new-api-compat.md §4.6 step 3: chat, completions, embeddings,
   * moderations)
   */
  promptTexts?(body: Record<string, any>): Iterable<string>;
  /** an upper bound of promptTokens that needs no tokenizer, for a body of `bodyBytes` valid UTF-8; -1 when none holds */
  promptBound?(body: Record<string, any>, bodyBytes: number): number;
  /** completion text of a non-stream response (fallback counting when usage is missing) */
  responseText(json: any): StreamDelta;
  /** completion text of one stream chunk */
  chunkText(json: any): StreamDelta;

  // ---- optional hooks for the non-chat modes (relay/modes/*); the chat path never sets them
  /** model used when the request names none (new-api-compat.md §4.3 step 2) */
  defaultModel?: string;
  /** multipart/form-data request: `body` holds its fields (formFields), the raw bytes are forwarded unchanged */
  multipart?: boolean;
  /** success body is not JSON (audio): piped to the client as received, with the upstream content-type */
  rawResponse?: boolean;
  /** charge known before the call (images): reserved up front and charged on success instead of the token formula */
  fixedQuota?(price: PriceData, body: Record<string, any>, model: string, quotaPerUnit: number): number;
  /** consume-log content replacing the ratio line */
  logContent?(body: Record<string, any>, price: PriceData): string;
  /** usage of a whole non-stream response (replaces extractUsage); null falls back to local counting */
  responseUsage?(buf: Buffer, body: Record<string, any>, model: string): UpstreamUsage | null;
  /**
   * usage carried by one stream event, given the usage seen so far (a format that reports it in parts merges them);
   * when set, no event is dropped for carrying usage
   */
  streamUsage?(json: any, prev: UpstreamUsage | null): UpstreamUsage | null;
  /** typed-event SSE protocol (Responses API): no stream_options upstream, no `data: [DONE]` added */
  eventStream?: boolean;
  /** bytes that only the stream's last event holds (Anthropic's message_stop): the response ends with that event */
  streamTerminal?: Buffer;

  // ---- client formats other than OpenAI's (relay/formats/), and the translated lane
  /** the client's wire format (default openai): its errors, and the native lane when the provider speaks it */
  format?: WireFormat;
  /** the body is a chat request of `format` that converts to the hub: providers of other formats can serve it */
  hub?: boolean;
  /** the hub form of a body, when the mode already made it (validation, counting): not converted twice */
  hubOf?(body: Record<string, any>): HubRequest;
  /** a mode without a hub form served by providers of other wire formats, by the provider's wire (embeddings) */
  translate?: Partial<Record<WireFormat, ModeTranslation>>;
  /** always a stream (Gemini's streamGenerateContent), whatever the body says */
  alwaysStream?: boolean;
  /** the largest output the request allows, where the format keeps it (default: max_tokens and its aliases) */
  maxTokens?(body: Record<string, any>): number;
  /**
   * its answers are text checked for sensitive words when CheckSensitiveOnCompletionEnabled is on
   * (relay/sensitive-output.ts): chat, completions, Claude messages, Gemini generateContent
   */
  checksCompletion?: boolean;
}

/**
 * Completion tokens for text produced without upstream usage: tokenizer count + 7 per tool call (new-api-compat.md
 * §4.7).
 */
export function countCompletion(d: StreamDelta, model: string): number {
  return countTextTokens(d.text, model) + d.toolCalls * 7;
}
