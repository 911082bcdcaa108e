// The upstream leg of a realtime session: where and how the channel's websocket is opened (vendors-and-tasks.md §4).
// OpenAI (type 1) and the OpenAI-compatible types: `{base}/v1/realtime?model=`, the key as `Authorization: Bearer`
// with `OpenAI-Beta: realtime=v1`, or, when the client authenticated by subprotocols (a browser cannot set headers),
// the same subprotocol list with the channel's key, as new-api sends it. Azure (type 3):
// `{base}/openai/realtime?deployment=&api-version=` with `api-key`. Every other type has no realtime API.
import { splitBase } from '../providers/openai/index.js';
import { OPENAI_COMPATIBLE_TYPES } from '../providers/channel-facts.js';
import type { CachedChannel } from '../../services/cache/channel-cache.js';

const AZURE = 3;

export interface RealtimeTarget {
  url: string;
  headers: Record<string, string>;
  protocols: string[];
}

export function speaksRealtime(type: number): boolean {
  return type === AZURE || OPENAI_COMPATIBLE_TYPES.includes(type);
}

/** http(s) → ws(s), as new-api rewrites the base URL's scheme */
const wsOrigin = (origin: string) => origin.replace(/^http/i, 'ws');

export function realtimeTarget(
  channel: CachedChannel,
  upstreamModel: string,
  byProtocols: boolean,
  azureDefaultApiVersion: string,
): RealtimeTarget {
  const { origin, prefix } = splitBase(channel.baseUrl);
  if (channel.type === AZURE) {
    const version = channel.other.trim() || azureDefaultApiVersion;
    const q = `deployment=${encodeURIComponent(upstreamModel)}&api-version=${encodeURIComponent(version)}`;
    return {
      url: `${wsOrigin(origin)}${prefix}/openai/realtime?${q}`,
      headers: { 'api-key': channel.key },
      protocols: [],
    };
  }
  // a base URL that already ends in /v1 is not given a second one
  const path = prefix.endsWith('/v1') ? `${prefix}/realtime` : `${prefix}/v1/realtime`;
  const url = `${wsOrigin(origin)}${path}?model=${encodeURIComponent(upstreamModel)}`;
  const headers: Record<string, string> = {};
  if (channel.organization) headers['OpenAI-Organization'] = channel.organization;
  if (byProtocols)
    return {
      url,
      headers,
      protocols: ['realtime', `openai-insecure-api-key.${channel.key}`, 'openai-beta.realtime-v1'],
    };
  headers.Authorization = `Bearer ${channel.key}`;
  headers['OpenAI-Beta'] = 'realtime=v1';
  return { url, headers, protocols: [] };
}
