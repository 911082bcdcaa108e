// The manifest of an OpenAI-compatible vendor: OpenAI's endpoints (or the subset the vendor serves) at the channel's
// base URL, the key as a Bearer token, the vendor's own headers beside it. A vendor folder's index.ts is then one call
// of openaiCompatible, and the registry (providers/index.ts) one line.
import { defineProvider } from '../manifest.js';
import type { Adaptor, EndpointSet, RelayInfo } from '../types.js';
import { OPENAI_ENDPOINTS } from './index.js';
import { parseOpenAIStyleError } from '../../formats/openai/errors.js';

export interface OpenAICompatibleVendor {
  /** its folder's name under providers/ */
  id: string;
  /** its channel types (the console's list and default base URL: services/channel-types.ts) */
  types: readonly number[];
  /** the endpoints it serves: OpenAI's all by default; leave out what the vendor lacks, and it is refused locally */
  endpoints?: EndpointSet;
  /** headers besides `Authorization: Bearer <key>` */
  headers?(info: RelayInfo): Record<string, string>;
  /** it accepts `stream_options.include_usage` (default: no) */
  streamOptions?: boolean;
}

export function openaiCompatible(vendor: OpenAICompatibleVendor): Adaptor {
  const streamOptions = vendor.streamOptions === true;
  return defineProvider({
    id: vendor.id,
    types: vendor.types,
    endpoints: vendor.endpoints ?? OPENAI_ENDPOINTS,
    supportsStreamOptions: () => streamOptions,
    headers: (info) => ({ authorization: `Bearer ${info.channel.key}`, ...vendor.headers?.(info) }),
    parseError: parseOpenAIStyleError,
  });
}
