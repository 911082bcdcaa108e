// The provider contract. A provider is a manifest (ProviderManifest): its id, the channel types it serves, and one entry
// per endpoint it supports (chat, embeddings, …) with what that endpoint does differently from the provider's shared
// parts (target URL, body conversion, headers, answer conversion). An endpoint it does not declare is refused before
// anything is sent (providers/manifest.ts `declares`). defineProvider turns a manifest into the Adaptor the relay calls,
// each call going to the entry of the request's endpoint.
// An adaptor sees a plain channel value and its own settings, never the application context or the cache's types,
// so a provider cannot reach the database, Redis or the relay's caches.
import type { IncomingHttpHeaders } from 'node:http';
import type { RelayMode } from '../modes/mode.js';
import type { FramingName } from '../stream/framing.js';
import type { UpstreamError, WireFormat } from '../formats/codec.js';
import type { UpstreamUsage } from '../hub/usage.js';

export type { UpstreamUsage } from '../hub/usage.js';
import type { HubRequest } from '../hub/types.js';
import type { EndpointKind } from '../modes/endpoint-kind.js';

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
  /** where Vertex AI's service-account grant is exchanged (VERTEX_TOKEN_URL); empty: the key's own or Google's */
  vertexTokenUrl?: string;
  /** the tokens of providers whose key is exchanged for one (relay/credential-cache.ts, one per process) */
  credentials?: CredentialSource;
  /**
   * fetches an image a request links to, for a provider that must send it inline (providers/media.ts): only public
   * addresses, size- and time-limited; throws FormatError (a 400 for the client) when it cannot
   */
  fetchImage?(url: string): Promise<{ mimeType: string; data: string }>;
}

/**
 * What a channel's key is to its upstream. `static`: sent as it is (a bearer key; the default). `signed`: the
 * provider's `authorize` signs every request with it (Bedrock's SigV4); nothing is cached. `exchanged`: the key buys a
 * token that lasts a while (Vertex AI's OAuth token, an AK/SK token, a JWT): the relay's credential cache keeps one per
 * key and asks again before it lapses, after the upstream refuses it (401) and never for a key no channel holds.
 */
export type ProviderCredential = { kind: 'static' } | { kind: 'signed' } | ExchangedCredential;

export interface ExchangedCredential {
  kind: 'exchanged';
  /** the provider's name in the cache: tokens of different providers never meet, even for the same key */
  id: string;
  /** trades the channel's key for a token; throws (with a message free of the key) when refused */
  exchange(key: string, settings: ProviderSettings): Promise<ExchangedToken>;
}

export interface ExchangedToken {
  token: string;
  /**
   * how long the token is good for, counted from when the exchange was asked (vendors answer `expires_in`): relative,
   * so the vendor's clock and ours need not agree
   */
  lifetimeMs: number;
}

/** The exchanged tokens a provider reads through `info.settings.credentials`. */
export interface CredentialSource {
  /** the token for `key`: the cached one while it is fresh, else one exchange however many requests wait for it */
  get(credential: ExchangedCredential, key: string): Promise<string>;
  /** the upstream refused the token (401): the next `get` exchanges again */
  invalidate(credential: ExchangedCredential, key: string): void;
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

/** an upstream's error read into the relay's fields: each wire format's parser (formats/<format>/errors.ts) makes one */
export type ProviderError = UpstreamError;

/**
 * What one endpoint of a provider does differently from the provider's shared parts; an entry may be empty (`{}`)
 * when the shared parts serve it as they are.
 */
export interface EndpointEntry {
  target?(info: RelayInfo): UpstreamTarget;
  headers?(info: RelayInfo): Record<string, string>;
  convertRequest?(info: RelayInfo, body: Record<string, unknown>): boolean | Promise<boolean>;
  fromHub?(info: RelayInfo, hub: HubRequest): Record<string, unknown> | Promise<Record<string, unknown>>;
  convertResponse?(info: RelayInfo, body: Buffer): { body: Buffer; usage: UpstreamUsage | null } | null;
}

/** The endpoints a provider serves, each with its entry. */
export type EndpointSet = Partial<Record<EndpointKind, EndpointEntry>>;

/**
 * A provider as its folder declares it. The Adaptor methods it shares with EndpointEntry are the defaults of its
 * entries (target and headers must come from one or the other); convertRequest defaults to leaving the body as it is.
 */
export interface ProviderManifest
  extends
    Omit<Adaptor, 'id' | 'types' | 'endpoints' | 'target' | 'headers' | 'convertRequest'>,
    Omit<EndpointEntry, 'convertResponse' | 'fromHub'> {
  /** its folder's name under providers/, where its recorded fixtures live */
  id: string;
  /** the channel types it serves (each also listed in services/channel-protocols.ts, read without the relay) */
  types: readonly number[];
  endpoints: EndpointSet;
}

export interface Adaptor {
  readonly id: string;
  readonly types: readonly number[];
  /** the endpoints it serves: any other is refused before anything is sent */
  readonly endpoints: EndpointSet;
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
  /** what the channel's key is to the upstream (default static) */
  credential?: ProviderCredential;
  /** once the final request is known: sign it or add a token fetched for it (sets headers) */
  authorize?(info: RelayInfo, req: SignableRequest): Promise<void>;
  /**
   * the upstream answered 401: credentials it cached are dropped (a provider with an exchanged credential gets this
   * from the registry, providers/index.ts)
   */
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
