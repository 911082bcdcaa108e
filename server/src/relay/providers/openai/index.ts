// OpenAI and the OpenAI-compatible channel types listed in services/channel-protocols.ts (Ollama's chat too). Requests
// go to `{base}{/v1/...}` with `Authorization: Bearer <key>`; responses pass through. OpenAI itself (type 1) also
// serves the Responses API; the compatible vendors only serve Chat Completions, so a Responses client reaches them
// through the hub.
// OpenRouter (type 20) also gets new-api's attribution headers and asks for the cost in the usage.
import { CappedMap } from '../../../lib/bounded.js';
import type { WireFormat } from '../../formats/codec.js';
import { openaiCodec } from '../../formats/openai/index.js';
import type { EndpointSet, RelayInfo, UpstreamTarget } from '../types.js';
import { parseOpenAIStyleError } from '../../formats/openai/errors.js';
import { defineProvider } from '../manifest.js';
import { OPENAI_COMPATIBLE_TYPES } from './channel.js';

/**
 * Channel types that accept stream_options (new-api-compat.md §7, the OpenAI-compatible subset of
 * SupportStreamOptions).
 */
const STREAM_OPTIONS_TYPES = new Set([1, 3, 4, 45, 48]);

/** Base URLs come from channel settings (and a Vertex channel's region): few, but bounded all the same. */
export const originCache = new CappedMap<string, { origin: string; prefix: string }>(1000);

/** Splits a base URL once into origin and path prefix (cached: base URLs are few). */
export function splitBase(base: string): { origin: string; prefix: string } {
  let hit = originCache.get(base);
  if (!hit) {
    const u = new URL(base);
    hit = { origin: u.origin, prefix: u.pathname.replace(/\/+$/, '') };
    originCache.set(base, hit);
  }
  return hit;
}

const OPENROUTER = 20;

/** OpenRouter's app attribution, the values new-api sends (new-api-compat.md §7). */
const OPENROUTER_HEADERS = { 'HTTP-Referer': 'https://www.newapi.ai', 'X-OpenRouter-Title': 'New API' } as const;

/**
 * OpenRouter's usage accounting: the answer's usage then carries the cost (and a stream ends with a usage chunk).
 * A client's own `usage` field is left as it is. Returns whether the body changed.
 */
function askUsageCost(body: Record<string, unknown>): boolean {
  if (body.usage !== undefined) return false;
  body.usage = { include: true };
  return true;
}

const RESPONSES: readonly WireFormat[] = ['responses'];
const NOTHING_ELSE: readonly WireFormat[] = [];

/** The client formats besides Chat Completions a channel type's upstream accepts as they are. */
function alsoSpeaks(info: RelayInfo): readonly WireFormat[] {
  return info.channel.type === 1 ? RESPONSES : NOTHING_ELSE;
}

/**
 * `{base}{path}`, the vendors' path rules applied; a custom channel's (type 8) base URL is the whole URL, `{model}`
 * substituted.
 */
function openaiTarget(path: string | ((info: RelayInfo) => string)): (info: RelayInfo) => UpstreamTarget {
  return (info) => {
    const { channel } = info;
    if (channel.type === 8) {
      const u = new URL(channel.baseUrl.replace(/\{model\}/g, info.upstreamModel));
      return { origin: u.origin, path: u.pathname + u.search };
    }
    let p = typeof path === 'string' ? path : path(info);
    // Perplexity serves its API without the /v1 segment; Cloudflare AI Gateway bases already end in the provider's
    if (channel.type === 27 || (channel.type === 1 && channel.baseUrl.includes('gateway.ai.cloudflare.com')))
      p = p.replace(/^\/v1/, '');
    const { origin, prefix } = splitBase(channel.baseUrl);
    return { origin, path: prefix + p };
  };
}

const VOLCENGINE = 45;

function chatPath(info: RelayInfo): string {
  if (info.channel.type !== VOLCENGINE) return '/v1/chat/completions';
  return info.upstreamModel.startsWith('bot') ? '/api/v3/bots/chat/completions' : '/api/v3/chat/completions';
}

/** o1/o3 request rules (new-api-compat.md §4.7). Returns whether the body changed. */
function reasoningModelTweaks(body: Record<string, unknown>, info: RelayInfo): boolean {
  let model = String(body.model ?? '');
  if (!/^o[13]/.test(model)) return false;
  let changed = false;
  const m = /-(high|low|medium)$/.exec(model);
  if (m) {
    body.reasoning_effort = m[1];
    model = model.slice(0, -m[0].length);
    body.model = model;
    info.upstreamModel = model;
    changed = true;
  }
  if (body.max_tokens !== undefined) {
    body.max_completion_tokens = body.max_tokens;
    delete body.max_tokens;
    changed = true;
  }
  if (body.temperature !== undefined) {
    delete body.temperature;
    changed = true;
  }
  if ((model === 'o1' || model === 'o1-2024-12-17' || model.startsWith('o3')) && Array.isArray(body.messages)) {
    const first = body.messages[0] as { role?: string } | undefined;
    if (first?.role === 'system') {
      body.messages = [{ ...first, role: 'developer' }, ...body.messages.slice(1)];
      changed = true;
    }
  }
  return changed;
}

/** o1/o3 rules and OpenRouter's usage cost on a client's own chat / completions body. */
function convertTextRequest(info: RelayInfo, body: Record<string, unknown>): boolean {
  const usage = info.channel.type === OPENROUTER && askUsageCost(body);
  return reasoningModelTweaks(body, info) || usage;
}

/**
 * Every endpoint of OpenAI's API at its `/v1/...` path. An OpenAI-compatible vendor's manifest re-uses this set
 * (its own headers and stream options beside it); a chat request of another client format reaches `chat` through the
 * hub.
 */
export const OPENAI_ENDPOINTS = {
  chat: { target: openaiTarget(chatPath), convertRequest: convertTextRequest },
  // DeepSeek serves FIM completions under /beta
  completions: {
    target: openaiTarget((info) => (info.channel.type === 43 ? '/beta/completions' : '/v1/completions')),
    convertRequest: convertTextRequest,
  },
  embeddings: {
    target: openaiTarget((info) => (info.channel.type === VOLCENGINE ? '/api/v3/embeddings' : '/v1/embeddings')),
  },
  edits: { target: openaiTarget('/v1/edits') },
  images: { target: openaiTarget('/v1/images/generations') },
  image_edits: { target: openaiTarget('/v1/images/edits') },
  audio_speech: { target: openaiTarget('/v1/audio/speech') },
  audio_transcription: { target: openaiTarget('/v1/audio/transcriptions') },
  audio_translation: { target: openaiTarget('/v1/audio/translations') },
  rerank: { target: openaiTarget('/v1/rerank') },
  moderations: { target: openaiTarget('/v1/moderations') },
  // spoken natively by OpenAI itself only (alsoSpeaks): other types' Responses clients come through the hub to `chat`
  responses: { target: openaiTarget('/v1/responses') },
} satisfies EndpointSet;

export const openaiAdaptor = defineProvider({
  id: 'openai',
  types: OPENAI_COMPATIBLE_TYPES,
  endpoints: OPENAI_ENDPOINTS,
  alsoSpeaks,

  supportsStreamOptions(info) {
    return STREAM_OPTIONS_TYPES.has(info.channel.type);
  },

  headers(info) {
    const h: Record<string, string> = { authorization: `Bearer ${info.channel.key}` };
    if (info.channel.type === 1 && info.channel.organization) h['OpenAI-Organization'] = info.channel.organization;
    if (info.channel.type === OPENROUTER) Object.assign(h, OPENROUTER_HEADERS);
    return h;
  },

  fromHub(info, hub) {
    const body = openaiCodec.requestFromHub(hub, { model: info.upstreamModel, stream: info.isStream });
    if (info.channel.type === OPENROUTER) askUsageCost(body);
    return body;
  },

  parseError: parseOpenAIStyleError,
});
