// What a provider knows about the channels it serves, beside how it relays: the key's format, what the `other` column
// holds, whether the key is one document or one channel per line, whether a base URL is required, the checks of
// those fields, where the upstream lists its models and how its balance is queried. Each provider declares them in its own folder (<provider>/channel.ts); channel management
// refuses a save with them and the console asks the server to run them (POST /api/channel/check), so the rules exist
// once. These modules are leaves: they import the provider's own parsers and nothing of the relay's core, the
// services, the database or the app context (eslint.config.js), which is what lets services/ import them.

/** What a type's `other` column means; the console labels the field by it. */
export type OtherFieldKind =
  | 'api_version'
  | 'region_or_model_map'
  | 'spark_version'
  | 'knowledge_id'
  | 'account_id'
  | 'plugin'
  | 'app_type'
  | 'bot_id';

/** The channel form's fields a problem can be shown under. */
export type ChannelField = 'key' | 'base_url' | 'other';

/** A refused field, with the message (Chinese, as the server's other texts; the console translates it). */
export interface FieldProblem {
  field: ChannelField;
  message: string;
}

/** The fields a provider's check reads. */
export interface ChannelFieldValues {
  /** one channel's key (one line of the form's key, or the whole key when it is one document); '' is not checked */
  key: string;
  /** the channel's base URL without trailing slashes; '' when the type's default is used */
  baseUrl: string;
  /** the type's default base URL: the vendor's own API */
  defaultBaseUrl: string;
  /** the `other` column; undefined when this save does not check it */
  other?: string;
}

/**
 * GETs a URL of the channel's upstream and parses the JSON answer (throws on a status other than 200); `headers`
 * default to the key as a Bearer token. The caller sends it only to the channel's base URL, never following a
 * redirect, through the channel's proxy (relay/channel-probe.ts).
 */
export type GetJson = (url: string, headers?: Record<string, string>) => Promise<any>;

/** A model list that keeps answering with a next page is cut off here rather than looping forever. */
export const MAX_MODEL_PAGES = 50;

/** A channel's upstream account as model listing and balance queries see it. */
export interface UpstreamAccount {
  /** the channel's base URL, else the type's default, without a trailing slash */
  base: string;
  /** the channel's key (for model listing its first line) */
  key: string;
  get: GetJson;
}

/**
 * Where the console's "fetch models" finds the upstream's models: a fixed list when the key must not be sent as a
 * bearer token (a signing secret, a key file), else a request to the upstream (`url`: its first page).
 */
export type ModelListing =
  { fixed: readonly string[] } | { url(base: string): string; list(account: UpstreamAccount): Promise<string[]> };

export interface ChannelFacts {
  /** an example of the key format ('' for a plain API key) */
  keyHint: string;
  /** what `other` holds and an example of it, when the type uses it */
  other?: { kind: OtherFieldKind; hint: string };
  /** the key is one document (a JSON key file), never split into one channel per line */
  wholeKey: boolean;
  /** the type has no default address: every request is built on the channel's base URL */
  baseUrlRequired: boolean;
  /** `other` when a new channel leaves it empty */
  defaultOther?: string;
  /** the provider's own rules for a channel's fields; null when they are acceptable */
  check(values: ChannelFieldValues): FieldProblem | null;
  models: ModelListing;
  /**
   * The account's balance in the units new-api stores (USD for most; see the provider); absent when the vendor has
   * no balance query. `price`: the Price option, the money of $1 of quota.
   */
  balance?(account: UpstreamAccount, options: { price: number }): Promise<number>;
}

/** OpenAI's model list: {base}/v1/models, or the /models sibling of a base that is a whole chat URL (custom). */
export function openAIModelsUrl(base: string): string {
  if (base.endsWith('/chat/completions')) return `${base.slice(0, -'/chat/completions'.length)}/models`;
  return `${base}/v1/models`;
}

/** The ids of OpenAI's `GET /v1/models` answer (`models/` prefixes dropped, as some compatible vendors add them). */
export const openAIModelListing: ModelListing = {
  url: openAIModelsUrl,
  async list({ base, get }) {
    const j = await get(openAIModelsUrl(base));
    const list = Array.isArray(j?.data) ? j.data : [];
    return list.map((m: { id?: string }) => String(m.id ?? '').replace(/^models\//, '')).filter(Boolean);
  },
};

/** Facts of a provider whose fields have no format of their own and whose models are listed as OpenAI's. */
export function plainFacts(over: Partial<ChannelFacts> = {}): ChannelFacts {
  return {
    keyHint: '',
    wholeKey: false,
    baseUrlRequired: false,
    check: () => null,
    models: openAIModelListing,
    ...over,
  };
}

/**
 * Whether the channel calls the vendor's own API: only there does a key's prefix say anything (a proxy in front of
 * it may hand out keys of any shape).
 */
export function callsVendorApi(values: ChannelFieldValues): boolean {
  return values.baseUrl === '' || values.baseUrl === values.defaultBaseUrl;
}
