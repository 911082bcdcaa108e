// What a provider knows about the channels it serves, beside how it relays: the key's format, what the `other` column
// holds, whether the key is one document or one channel per line, whether a base URL is required, and the checks
// of those fields. Each provider declares them in its own folder (<provider>/channel.ts); channel management
// refuses a save with them and the console asks the server to run them (POST /api/channel/check), so the rules exist
// once. These modules are leaves: they import the provider's own parsers and nothing of the relay's core, the
// services, the database or the app context (eslint.config.js), which is what lets services/ import them.

/** What a type's `other` column means; the console labels the field by it. */
export type OtherFieldKind =
  'api_version' | 'region_or_model_map' | 'spark_version' | 'knowledge_id' | 'account_id' | 'plugin';

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
}

/** Facts of a provider whose fields have no format of their own. */
export function plainFacts(over: Partial<ChannelFacts> = {}): ChannelFacts {
  return { keyHint: '', wholeKey: false, baseUrlRequired: false, check: () => null, ...over };
}

/**
 * Whether the channel calls the vendor's own API: only there does a key's prefix say anything (a proxy in front of
 * it may hand out keys of any shape).
 */
export function callsVendorApi(values: ChannelFieldValues): boolean {
  return values.baseUrl === '' || values.baseUrl === values.defaultBaseUrl;
}
