// The provider adaptor contract. An adaptor builds the upstream's request (URL, headers, signing, vendor options);
// a provider that speaks the client's format has its answers passed through byte for byte, one that speaks another
// declares its wire format and the relay translates through the hub with that format's codec (relay/formats/).
// An adaptor sees a plain channel value and its own settings, never the application context or the cache's types,
// so a provider cannot reach the database, Redis or the relay's caches.
import type { IncomingHttpHeaders } from 'node:http';
import type { RelayMode } from '../modes/mode.js';
import type { FramingName } from '../stream/framing.js';
import type { WireFormat } from '../formats/codec.js';
import type { HubRequest } from '../hub/types.js';

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

/** The gateway settings adaptors read: the server's config and the vendor options (relay/provider-settings.ts). */
export interface ProviderSettings {
  /** Azure's api-version when the channel names none */
  azureDefaultApiVersion: string;
  claude: {
    /** claude.default_max_tokens: the entry of the first of `models` that has one, else `default` */
    defaultMaxTokens(models: readonly string[]): number;
    /** claude.thinking_adapter_enabled: the `-thinking` model suffix turns thinking on */
    thinkingAdapter: boolean;
    /** claude.thinking_adapter_budget_tokens_percentage */
    thinkingBudgetRatio: number;
    /** claude.model_headers_settings: the extra headers of the first of `models` that has an entry */
    modelHeaders(models: readonly string[]): Record<string, string>;
  };
  gemini: {
    /** gemini.version_settings: the API version for a model (its entry, else `default`) */
    version(model: string): string;
    /** gemini.safety_settings as Gemini's safetySettings list */
    safetySettings(): { category: string; threshold: string }[];
    thinkingAdapter: boolean;
    thinkingBudgetRatio: number;
    /** gemini.supported_imagine_models: models asked for image output */
    imageModels(): string[];
  };
  /** an OAuth access token for a Vertex AI service account (cached process-wide by the relay's services) */
  vertexToken?(serviceAccountJson: string): Promise<string>;
  /** a Vertex token the upstream refused: fetch a new one next time */
  vertexTokenRefused?(serviceAccountJson: string): void;
  /**
   * fetches an image a request links to, for a provider that must send it inline (providers/media.ts): only public
   * addresses, size- and time-limited; throws FormatError (a 400 for the client) when it cannot
   */
  fetchImage?(url: string): Promise<{ mimeType: string; data: string }>;
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
  /** the client's wire format (the lane is native when the provider speaks it) */
  clientFormat: WireFormat;
  /** the client's request headers (anthropic-version, anthropic-beta) */
  clientHeaders: IncomingHttpHeaders;
}

/** The final upstream request, which an adaptor's `authorize` may sign or add a fetched token to. */
export interface SignableRequest {
  method: string;
  origin: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

export interface UpstreamTarget {
  origin: string;
  /** path + query */
  path: string;
}

export interface UpstreamUsage {
  /** includes cache reads, excludes cache writes (services/pricing/index.ts) */
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  /** Claude cache writes */
  cache_creation_tokens?: number;
  /** the usage came from a Claude model: billed with the Claude formula and logged with its fields */
  claude?: boolean;
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
  /**
   * the wire format the upstream speaks (default openai), or per request (Vertex: Claude or Gemini by model): the
   * client's own format passes through, others translate
   */
  wire?: WireFormat | ((info: RelayInfo) => WireFormat);
  /** how the upstream frames a stream (default SSE; relay/stream/framing.ts) */
  framing?: FramingName;
  /**
   * other client formats the upstream accepts as they are (OpenAI's own API also speaks the Responses API): a client of
   * one of them takes the native lane
   */
  alsoSpeaks?(info: RelayInfo): readonly WireFormat[];
  /**
   * translated lane: the hub request → the upstream's body (default: the wire codec's requestFromHub); may be async
   * (a provider that needs remote images inlined fetches them here)
   */
  fromHub?(info: RelayInfo, hub: HubRequest): Record<string, unknown> | Promise<Record<string, unknown>>;
  /** once the final request is known: sign it or add a token fetched for it (sets headers) */
  authorize?(info: RelayInfo, req: SignableRequest): Promise<void>;
  /** the provider has no endpoint for this request's mode (Vertex AI's embeddings): a 400, nothing is sent */
  cannotServe?(info: RelayInfo): boolean;
  /** the upstream answered 401: credentials it cached (an OAuth token) are dropped */
  unauthorized?(info: RelayInfo): void;
  /** Whether `stream_options.include_usage` may be sent to this channel type (new-api-compat.md §4.6 step 7, §7). */
  supportsStreamOptions(info: RelayInfo): boolean;
  target(info: RelayInfo): UpstreamTarget;
  /** Auth and provider headers (content-type/accept are added by the engine). */
  headers(info: RelayInfo): Record<string, string>;
  /**
   * Adapts the parsed body in place. Returns true when it changed anything (the body is then re-serialised); false
   * means the raw client bytes can be forwarded. A provider that must fetch something for it (remote images) returns
   * a promise.
   */
  convertRequest(info: RelayInfo, body: Record<string, unknown>): boolean | Promise<boolean>;
  /**
   * Non-OpenAI upstreams: convert a whole JSON response to OpenAI format (null: this response is OpenAI format already
   * and goes through as it is). Throwing makes it a 502 bad response.
   */
  convertResponse?(info: RelayInfo, body: Buffer): { body: Buffer; usage: UpstreamUsage | null } | null;
  /** Extracts the error from a non-200 upstream body (new-api-compat.md §4.6 step 9). */
  parseError(status: number, body: Buffer, headers?: Record<string, string>): ProviderError;
}
