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
import type { FormatCodec, UpstreamError, WireFormat } from '../formats/codec.js';
import type { UpstreamUsage } from '../hub/usage.js';

export type { UpstreamUsage } from '../hub/usage.js';
import type { HubRequest, HubResponse } from '../hub/types.js';
import type { EndpointKind } from '../modes/endpoint-kind.js';
import type { VendorAnswerReader } from './dialect.js';
import type { OutgoingRequest } from '../../lib/response-sink.js';

/** The channel fields an adaptor reads (the relay's cached channel is one). */
export interface ProviderChannel {
  type: number;
  key: string;
  /** upstream base URL, the type's default when the channel names none */
  baseUrl: string;
  /** the channel's `other` column (Azure: the API version) */
  other: string;
  organization: string;
  /** the channel's `setting` (its proxy: channel-setting.ts proxyOf); absent where the caller has none */
  setting?: Record<string, unknown> | null;
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
  /**
   * a provider's own request to the channel's upstream beside the relayed one (Baidu's token exchange), sent as the
   * relay's are: through the channel's proxy when it has one, else the relay's direct client; read whole, redirects
   * never followed; throws when no answer came
   */
  sendUpstream?(channel: ProviderChannel, req: OutgoingRequest): Promise<{ status: number; body: Buffer }>;
}

/**
 * What a channel's key is to its upstream. `static`: sent as it is (a bearer key; the default). `signed`: the
 * provider's `authorize` signs every request with it (Bedrock's SigV4); nothing is cached. `exchanged`: the key buys a
 * token that lasts a while (Vertex AI's OAuth token, an AK/SK token, a JWT): the relay's credential cache keeps one per
 * key and base URL and asks again before it lapses, after the upstream refuses it (401) and never for a key no channel holds.
 */
export type ProviderCredential = { kind: 'static' } | { kind: 'signed' } | ExchangedCredential;

export interface ExchangedCredential {
  kind: 'exchanged';
  /** the provider's name in the cache: tokens of different providers never meet, even for the same key */
  id: string;
  /** trades the channel's key for a token; throws (with a message free of the key) when refused */
  exchange(key: string, settings: ProviderSettings, channel?: ProviderChannel): Promise<ExchangedToken>;
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
  /**
   * the token for `key` at `channel`'s base URL (a vendor's token endpoint is on it, Baidu's; a token is kept per key
   * and base URL): the cached one while it is fresh, else one exchange however many requests wait for it
   */
  get(credential: ExchangedCredential, key: string, channel?: ProviderChannel): Promise<string>;
  /** the upstream at `channel`'s base URL refused the token (401): the next `get` there exchanges again */
  invalidate(credential: ExchangedCredential, key: string, channel?: ProviderChannel): void;
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
  /** the client's request path and query (a Gemini client's `:embedContent` is asked of the upstream as it came) */
  clientUrl?: string;
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

/** An error an upstream reported inside a 200 answer, with the HTTP status it stands for. */
export interface InBandError {
  status: number;
  error: ProviderError;
}

/**
 * What one endpoint of a provider does differently from the provider's shared parts; an entry may be empty (`{}`)
 * when the shared parts serve it as they are.
 */
export interface EndpointEntry {
  target?(info: RelayInfo): UpstreamTarget;
  headers?(info: RelayInfo): Record<string, string>;
  convertRequest?(info: RelayInfo, body: Record<string, unknown>): boolean | Promise<boolean>;
  fromHub?(info: RelayInfo, hub: HubRequest): Record<string, unknown> | Promise<Record<string, unknown>>;
  convertResponse?(info: RelayInfo, body: Buffer): ConvertedAnswer | null;
  /**
   * An endpoint whose 200 answer is a receipt, not the result (DashScope's asynchronous image task): the relay hands
   * the receipt here once it is read, and this follows it up (polls the vendor's task, fetches images) until it has the
   * client's answer in OpenAI's shape, or the vendor's failure. Nothing is charged before it resolves with `ok`.
   */
  awaitAnswer?(info: RelayInfo, receipt: Buffer, io: FollowUpIo): Promise<AwaitedAnswer>;
  /**
   * a multipart request (an audio upload) the vendor takes in another shape (Cloudflare's `/ai/run`: the audio bytes
   * alone): the upstream body built from the client's form; its content type comes from `headers`. Throws FormatError
   * (a 400, nothing sent) for a form the vendor cannot carry.
   */
  convertForm?(info: RelayInfo, raw: Buffer, boundary: string): Buffer;
}

/**
 * What an `awaitAnswer` may do after its first request, all through the relay: the provider stays pure (no sockets,
 * no timers of its own), and each of these rejects with ClientLeft as soon as the client goes away.
 */
export interface FollowUpIo {
  /** the client's request as it came (its `response_format`, say), before the provider converted its copy */
  readonly request: Readonly<Record<string, unknown>>;
  /** GET `path` (with its query) on the first request's origin, through the channel's transport (its proxy) */
  get(path: string, headers: Record<string, string>): Promise<{ status: number; body: Buffer }>;
  /** resolves after `ms` */
  wait(ms: number): Promise<void>;
  /** an image the vendor names, fetched as a user-chosen URL is (SSRF-guarded, size- and time-limited), base64 */
  fetchImage(url: string): Promise<{ mimeType: string; data: string }>;
}

/** The client went away while an `awaitAnswer` was waiting: the follow-up stops, nothing is charged. */
export class ClientLeft extends Error {
  constructor() {
    super('client left');
  }
}

/**
 * The outcome of an `awaitAnswer`: the client's answer, or the vendor's failure with the HTTP status it stands for
 * (`final`: another channel is not tried, the vendor having done the work already or the cause being the request's).
 */
export type AwaitedAnswer =
  /** `images`: how many the answer holds, when fewer than asked (the price is counted for those) */
  { ok: true; body: Buffer; images?: number } | { ok: false; status: number; error: ProviderError; final?: boolean };

/** A whole upstream answer converted for the client, with its usage (and its content type when it is not JSON). */
export interface ConvertedAnswer {
  body: Buffer;
  usage: UpstreamUsage | null;
  contentType?: string;
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
    Omit<EndpointEntry, 'convertResponse' | 'fromHub' | 'convertForm'> {
  /** its folder's name under providers/, where its recorded fixtures live */
  id: string;
  /** the channel types it serves (each also listed in services/channel-protocols.ts, read without the relay) */
  types: readonly number[];
  endpoints: EndpointSet;
}

/**
 * The upstream side of a vendor's own wire format (Cohere's v1 chat, Dify's chat-messages, Coze, PaLM): no client
 * speaks it, so every chat request reaches it through the hub (the translated lane), its body built by the provider's
 * `fromHub` and its answer and stream read back to the hub here. `requestToHub` reads a body of this format back (the
 * vendor mocks and the conformance test use it to check what was sent).
 */
export interface VendorCodec extends Pick<FormatCodec, 'responseToHub' | 'streamToHub'> {
  readonly name: string;
  requestToHub?(body: Record<string, any>): HubRequest;
  /** a whole answer from its text, when it may be other than one JSON document (Dify's agent apps stream always) */
  readAnswer?(raw: string, model: string): HubResponse;
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
  /**
   * `websocket`: the upstream answers over a websocket (iFlytek Spark): the request's URL is opened as ws(s), its body
   * sent as one frame, each frame received read as one event of an event stream (relay/transport/ws-exchange.ts)
   */
  carrier?: 'websocket';
  /**
   * the vendor's own format (no client speaks it): its chat is always translated, through `fromHub` and this codec;
   * `wire` is then unused
   */
  codec?: VendorCodec;
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
  convertResponse?(info: RelayInfo, body: Buffer): ConvertedAnswer | null;
  /** a multipart request rebuilt for the vendor (EndpointEntry.convertForm); null: the form goes as it came */
  convertForm?(info: RelayInfo, raw: Buffer, boundary: string): Buffer | null;
  /**
   * whether this request's answer is converted (its endpoint has a convertResponse): a raw answer (audio) is then read
   * whole and converted instead of piped as it comes
   */
  convertsAnswer?(info: RelayInfo): boolean;
  /** whether this request's 200 answer is a receipt its endpoint's `awaitAnswer` follows up */
  awaitsAnswer?(info: RelayInfo): boolean;
  awaitAnswer?(info: RelayInfo, receipt: Buffer, io: FollowUpIo): Promise<AwaitedAnswer>;
  /**
   * An upstream that reports errors inside an HTTP 200 answer (MiniMax's `base_resp`): the error of a whole answer and
   * the status it stands for, null when the answer is a success. The relay then treats it as that upstream error
   * (retried, refunded, nothing sent to the client) instead of passing it on and charging it.
   */
  answerError?(info: RelayInfo, body: Buffer): InBandError | null;
  /**
   * an upstream that answers in its own JSON and stream shapes (Baidu ERNIE v1, Zhipu v3, Hunyuan): its 200 answers
   * are rewritten into OpenAI chat's as they arrive, and an error inside one becomes a real error (dialect.ts)
   */
  answers?: VendorAnswerReader;
  /** Extracts the error from a non-200 upstream body (new-api-compat.md §4.6 step 9). */
  parseError(status: number, body: Buffer, headers?: Record<string, string>): ProviderError;
  /** an asynchronous task platform (Suno): the task engine's calls (relay/tasks/); absent for the others */
  task?: TaskAdaptor;
}

/** What the task engine asks of a platform's upstream: one submit, many tasks fetched at once. */
export interface TaskRequest {
  method: 'GET' | 'POST';
  /** the whole URL, on the channel's base */
  url: string;
  headers: Record<string, string>;
  /** a JSON text, or the client's own bytes (a multipart form passed through with its boundary) */
  body?: string | Buffer;
}

/** The client's submit as it came: its bytes and content type (a platform that takes multipart forwards them). */
export interface TaskSubmitRaw {
  bytes: Buffer;
  contentType: string;
}

/** What a submit's upstream request may need besides its checked body. */
export interface TaskSubmitContext {
  /** the client's request as it came */
  raw?: TaskSubmitRaw;
  /** the upstream id of the task a follow-up (a remix) starts from */
  origin?: string;
  /** the model the channel's model_mapping names for the client's */
  upstreamModel?: string;
  /** the relay's provider settings: a platform whose key is exchanged for a token asks its credential cache */
  settings?: ProviderSettings;
}

/** What a fetch's upstream request may need besides the channel and the ids. */
export interface TaskFetchContext {
  /** as TaskSubmitContext's */
  settings?: ProviderSettings;
}

/**
 * Where a finished task's media (a video) is read for a client (GET /v1/videos/{id}/content): the engine makes the
 * calls. `channel`: the channel's own address with its key (a Range is added by the engine); `url`: an address the
 * upstream answered, read as a user-chosen URL (the SSRF rules, never with the key; a `data:` URI is decoded);
 * `bytes`: the media itself; `lookup`: one call first (its answer names the next source: a file's download address,
 * an operation's inline bytes); `refused`: no way through the gateway (why, for the client).
 */
export type TaskContentSource =
  | { kind: 'channel'; url: string; headers: Record<string, string> }
  | { kind: 'url'; url: string }
  | { kind: 'bytes'; bytes: Buffer; contentType: string }
  | { kind: 'lookup'; request: TaskRequest; read(status: number, body: unknown): TaskContentSource }
  | { kind: 'refused'; status: number; message: string; code: string };

/** What a content source may need besides the channel and the task. */
export interface TaskContentContext extends TaskFetchContext {
  /** `?variant=` of OpenAI's content endpoint (video, thumbnail, spritesheet), checked */
  variant?: string | null;
}

/** A submit's price beyond the per-call one: units (seconds) × a size ratio in millionths, and what the log shows. */
export interface TaskPriceUnits {
  units: number;
  ratioPpm: number;
  /** shown in the consume log row's `other` (new-api's other_ratios) */
  ratios: Record<string, number | string>;
}

/** A submit checked by the platform: its action, the model its price is named by, the body sent upstream. */
export type TaskValidation =
  | { ok: true; action: string; model: string; body: Record<string, unknown> }
  | { ok: false; code: string; message: string };

/** One task's state read from the upstream (status: services/tasks/status.ts). */
export interface TaskStateRead {
  upstreamId: string;
  status: string;
  failReason: string;
  data: unknown;
  /** the upstream's progress ("40%") while the task runs, where it reports one */
  progress?: string;
  /** the units the upstream deducted for a finished task (Kling's final_unit_deduction), a positive integer */
  usedUnits?: number;
}

/**
 * An asynchronous task platform's part of a provider (the manifest's `task` slot). Pure: it builds requests and reads
 * answers; the HTTP calls, the money and the task rows are the engine's.
 */
export interface TaskAdaptor {
  /** tasks.platform */
  platform: string;
  /** checks a submit, names its action and model (the per-call price's name) */
  validate(action: string, body: unknown, raw?: TaskSubmitRaw): TaskValidation;
  /** the price name of the submit (ModelPrice), for the engine's per-call charge */
  priceName(model: string): string;
  /** a per-second platform's units of a checked submit (video); absent: one call, one price */
  priceUnits?(body: Record<string, unknown>): TaskPriceUnits;
  /** channel types that take this platform's tasks besides its own line's (Sora's on OpenAI channels, type 1) */
  alsoOnTypes?: readonly number[];
  /** its address comes from the channel's key and settings (Vertex's region host): polled without a base URL */
  baseUrlOptional?: boolean;
  buildSubmit(
    channel: ProviderChannel,
    action: string,
    body: Record<string, unknown>,
    context?: TaskSubmitContext,
  ): TaskRequest | Promise<TaskRequest>;
  /** the upstream's task id from a submit answer (`sent`: the request it answers), or null when it refused */
  readSubmit(status: number, body: unknown, sent?: TaskRequest): string | null;
  /** what a refused submit's answer said, where the platform's error shape is neither Suno's nor OpenAI's */
  submitError?(status: number, body: unknown): { message: string; code: string } | undefined;
  /** one request for the states of many of the channel's tasks (`actions`: each one's tasks.action, in order) */
  buildFetch(
    channel: ProviderChannel,
    upstreamIds: readonly string[],
    actions?: readonly string[],
    context?: TaskFetchContext,
  ): TaskRequest | Promise<TaskRequest>;
  /** the states of a fetch answer (`upstreamIds`: the ids it asked for), null when the answer is no success */
  readFetch(status: number, body: unknown, upstreamIds?: readonly string[]): TaskStateRead[] | null;
  /** tasks asked for in one fetch at most */
  fetchBatch: number;
  /** where a finished task's result is found (new-api's result_url), from the data the poller kept */
  resultUrl?(publicId: string, data: unknown): string;
  /**
   * where a finished task's media is read for the client (`data`: what the poller kept); absent: the resultUrl when
   * it is an http(s) or data: address
   */
  content?(
    channel: ProviderChannel,
    upstreamId: string,
    data: unknown,
    context?: TaskContentContext,
  ): TaskContentSource | Promise<TaskContentSource>;
}
