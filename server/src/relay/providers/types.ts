// The provider adaptor contract. An adaptor turns the client's OpenAI-format request into the upstream's request
// and, when the upstream speaks another protocol, the upstream's response back into OpenAI format.
// OpenAI-compatible providers (openai/, azure/) implement only the request side: the engine passes their responses
// through byte for byte. Claude / Gemini adaptors would add convertResponse / convertStreamEvent / parseUsage.
// An adaptor sees a plain channel value and its own settings, never the application context or the cache's types,
// so a provider cannot reach the database, Redis or the relay's caches.
import type { RelayMode } from '../modes/mode.js';

/** The channel fields an adaptor reads (the relay's cached channel is one). */
export interface ProviderChannel {
  type: number;
  key: string;
  /** upstream base URL, the type's default when the channel names none */
  baseUrl: string;
  /** the channel's `other` column (Azure: the API version) */
  other: string;
  organization: string;
}

/** The gateway settings adaptors read (the server's config is one). */
export interface ProviderSettings {
  /** Azure's api-version when the channel names none */
  azureDefaultApiVersion: string;
}

export interface RelayInfo {
  settings: ProviderSettings;
  channel: ProviderChannel;
  mode: RelayMode;
  /** model name the client asked for (billing, logs) */
  originModel: string;
  /** model sent upstream (after model_mapping) */
  upstreamModel: string;
  isStream: boolean;
}

export interface UpstreamTarget {
  origin: string;
  /** path + query */
  path: string;
}

export interface UpstreamUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  /** audio tokens within prompt_tokens / completion_tokens (gpt-4o-audio), when the upstream reports any */
  audio_input?: number;
  audio_output?: number;
}

export interface ProviderError {
  message: string;
  type: string;
  code: string | number | null;
  param: string | null;
}

export interface Adaptor {
  /** Whether `stream_options.include_usage` may be sent to this channel type (new-api-compat.md §4.6 step 7, §7). */
  supportsStreamOptions(info: RelayInfo): boolean;
  target(info: RelayInfo): UpstreamTarget;
  /** Auth and provider headers (content-type/accept are added by the engine). */
  headers(info: RelayInfo): Record<string, string>;
  /**
   * Adapts the parsed body in place. Returns true when it changed anything (the engine then re-serialises);
   * false means the raw client bytes can be forwarded.
   */
  convertRequest(info: RelayInfo, body: Record<string, unknown>): boolean;
  /**
   * Non-OpenAI upstreams: convert a whole JSON response to OpenAI format (null: this response is OpenAI format already
   * and goes through as it is). Throwing makes it a 502 bad response.
   */
  convertResponse?(info: RelayInfo, body: Buffer): { body: Buffer; usage: UpstreamUsage | null } | null;
  /** Non-OpenAI upstreams: convert one SSE data payload into zero or more OpenAI chunk payloads. */
  convertStreamEvent?(info: RelayInfo, data: string): string[];
  /** Extracts the error from a non-200 upstream body (new-api-compat.md §4.6 step 9). */
  parseError(status: number, body: Buffer): ProviderError;
}
