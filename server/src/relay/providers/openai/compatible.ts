// The manifest of an OpenAI-compatible vendor: OpenAI's endpoints (or the subset the vendor serves) at the channel's
// base URL, the key as a Bearer token, the vendor's own headers beside it. A vendor folder's index.ts is then one call
// of openaiCompatible, and the registry (providers/index.ts) one line.
// A vendor whose OpenAI API lives elsewhere than `{base}/v1` (Zhipu's /api/paas/v4, Qianfan's /v2, Cloudflare's
// account path) names that root as `apiPath`; each endpoint keeps OpenAI's path below it.
import { defineProvider } from '../manifest.js';
import type { Adaptor, EndpointEntry, EndpointSet, ProviderError, RelayInfo } from '../types.js';
import type { WireFormat } from '../../formats/codec.js';
import type { EndpointKind } from '../../modes/endpoint-kind.js';
import { OPENAI_ENDPOINTS, splitBase } from './index.js';
import { parseOpenAIStyleError } from '../../formats/openai/errors.js';

/** OpenAI's path of each endpoint below its API root (`/v1`). */
const OPENAI_PATHS = {
  chat: '/chat/completions',
  completions: '/completions',
  embeddings: '/embeddings',
  edits: '/edits',
  images: '/images/generations',
  image_edits: '/images/edits',
  audio_speech: '/audio/speech',
  audio_transcription: '/audio/transcriptions',
  audio_translation: '/audio/translations',
  rerank: '/rerank',
  moderations: '/moderations',
  responses: '/responses',
} satisfies Partial<Record<EndpointKind, string>>;

export type OpenAIPathKind = keyof typeof OPENAI_PATHS;

export interface OpenAICompatibleVendor {
  /** its folder's name under providers/ */
  id: string;
  /** its channel types (the console's list and default base URL: services/channel-types.ts) */
  types: readonly number[];
  /** the endpoints it serves: OpenAI's all by default; leave out what the vendor lacks, and it is refused locally */
  endpoints?: EndpointSet;
  /**
   * where its OpenAI API lives below the base URL instead of `/v1` ('' for the base itself), or per request (an
   * account id from `other`); `serves` then names its endpoints, each at OpenAI's path below this root
   */
  apiPath?: string | ((info: RelayInfo) => string);
  /** with `apiPath`: the endpoints it serves (default: all of OpenAI's); entries in `endpoints` replace these */
  serves?: readonly OpenAIPathKind[];
  /** other client formats its upstream accepts as they are (Cloudflare's Responses API): those take the native lane */
  alsoSpeaks?(info: RelayInfo): readonly WireFormat[];
  /** headers besides `Authorization: Bearer <key>` (a vendor may replace that one too) */
  headers?(info: RelayInfo): Record<string, string>;
  /** it accepts `stream_options.include_usage` (default: no) */
  streamOptions?: boolean;
  /** reads its error bodies (default: OpenAI's shape, formats/openai/errors.ts) */
  parseError?: Adaptor['parseError'];
}

/** The entries of `serves`, each at `{base}{apiPath}{OpenAI's path}`. */
function endpointsBelow(
  apiPath: string | ((info: RelayInfo) => string),
  serves: readonly OpenAIPathKind[],
): EndpointSet {
  const root = typeof apiPath === 'string' ? () => apiPath : apiPath;
  const at =
    (kind: OpenAIPathKind): EndpointEntry['target'] =>
    (info) => {
      const { origin, prefix } = splitBase(info.channel.baseUrl);
      return { origin, path: prefix + root(info) + OPENAI_PATHS[kind] };
    };
  return Object.fromEntries(serves.map((kind) => [kind, { target: at(kind) }]));
}

export function openaiCompatible(vendor: OpenAICompatibleVendor): Adaptor {
  const streamOptions = vendor.streamOptions === true;
  const endpoints =
    vendor.apiPath === undefined
      ? (vendor.endpoints ?? OPENAI_ENDPOINTS)
      : {
          ...endpointsBelow(vendor.apiPath, vendor.serves ?? (Object.keys(OPENAI_PATHS) as OpenAIPathKind[])),
          ...vendor.endpoints,
        };
  return defineProvider({
    id: vendor.id,
    types: vendor.types,
    endpoints,
    ...(vendor.alsoSpeaks ? { alsoSpeaks: vendor.alsoSpeaks } : {}),
    supportsStreamOptions: () => streamOptions,
    headers: (info) => ({ authorization: `Bearer ${info.channel.key}`, ...vendor.headers?.(info) }),
    parseError: vendor.parseError ?? parseOpenAIStyleError,
  });
}

/**
 * An error parser for a vendor whose errors are OpenAI's shape only sometimes: OpenAI's reading first, and where it
 * finds no message (it says `bad response status code`), the vendor's own field.
 */
export function withVendorMessage(message: (body: any) => unknown): (status: number, body: Buffer) => ProviderError {
  return (status, body) => {
    const parsed = parseOpenAIStyleError(status, body);
    if (parsed.message !== `bad response status code ${status}`) return parsed;
    let found: unknown;
    try {
      found = message(JSON.parse(body.toString('utf8')));
    } catch {
      found = undefined;
    }
    return typeof found === 'string' && found ? { ...parsed, message: found } : parsed;
  };
}
