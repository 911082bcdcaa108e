// OpenAI and the OpenAI-compatible channel types listed in providers/index.ts (Ollama's chat too). Requests go to
// `{base}{/v1/...}` with `Authorization: Bearer <key>`; responses pass through. OpenAI itself (type 1) also serves the
// Responses API; the compatible vendors only serve Chat Completions, so a Responses client reaches them through the hub.
// OpenRouter (type 20) also gets new-api's attribution headers and asks for the cost in the usage.
import { CappedMap } from '../../../lib/bounded.js';
import type { WireFormat } from '../../formats/codec.js';
import { openaiCodec } from '../../formats/openai/index.js';
import type { Adaptor, ProviderError, RelayInfo, UpstreamTarget } from '../types.js';

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
 * A request of another client format (Claude, Gemini, Responses) that reached this channel through the hub: its body
 * is a Chat Completions request whatever path the client called, so it goes where chat requests go.
 */
function throughHub(info: RelayInfo): boolean {
  return !!info.mode.hub && info.clientFormat !== 'openai' && !alsoSpeaks(info).includes(info.clientFormat);
}

const CHAT_PATH = '/v1/chat/completions';

function upstreamPath(info: RelayInfo): string {
  const { channel, mode, upstreamModel } = info;
  const hub = throughHub(info);
  const chat = mode.name === 'chat' || hub;
  let path = hub ? CHAT_PATH : mode.upstreamPath;
  switch (channel.type) {
    case 43: // DeepSeek: FIM completions live under /beta
      if (mode.name === 'completions') path = '/beta/completions';
      break;
    case 45: // VolcEngine Ark
      if (chat) path = upstreamModel.startsWith('bot') ? '/api/v3/bots/chat/completions' : '/api/v3/chat/completions';
      else if (mode.name === 'embeddings') path = '/api/v3/embeddings';
      break;
    case 27: // Perplexity serves its chat API without the /v1 segment
      path = path.replace(/^\/v1/, '');
      break;
    case 1:
      // Cloudflare AI Gateway bases already end in the provider segment; the path goes without /v1
      if (channel.baseUrl.includes('gateway.ai.cloudflare.com')) path = path.replace(/^\/v1/, '');
      break;
  }
  return path;
}

export function parseOpenAIStyleError(status: number, body: Buffer): ProviderError {
  const fallback: ProviderError = {
    message: '',
    type: 'upstream_error',
    code: 'bad_response_status_code',
    param: String(status),
  };
  let j: any;
  try {
    j = JSON.parse(body.toString('utf8'));
  } catch {
    // as new-api: a body that is not JSON (a proxy's HTML page, a plain-text stack) is not shown to the client
    fallback.message = `bad response status code ${status}`;
    return fallback;
  }
  const e = j?.error;
  if (e && typeof e === 'object' && (e.type || e.message)) {
    // an OpenAI-shaped error object replaces the whole error (new-api-compat.md §4.6 step 9)
    return {
      message: String(e.message ?? ''),
      type: String(e.type || 'upstream_error'),
      code: e.code ?? null,
      param: e.param == null ? null : String(e.param),
    };
  }
  const msg =
    (typeof e === 'string' && e) ||
    j?.message ||
    j?.msg ||
    j?.err ||
    j?.error_msg ||
    j?.header?.message ||
    j?.response?.error?.message ||
    '';
  fallback.message = msg ? String(msg) : `bad response status code ${status}`;
  return fallback;
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

export const openaiAdaptor: Adaptor = {
  alsoSpeaks,

  supportsStreamOptions(info) {
    return STREAM_OPTIONS_TYPES.has(info.channel.type);
  },

  target(info): UpstreamTarget {
    if (info.channel.type === 8) {
      // custom channel: the base URL is the full URL, `{model}` substituted
      const full = info.channel.baseUrl.replace(/\{model\}/g, info.upstreamModel);
      const u = new URL(full);
      return { origin: u.origin, path: u.pathname + u.search };
    }
    const { origin, prefix } = splitBase(info.channel.baseUrl);
    return { origin, path: prefix + upstreamPath(info) };
  },

  headers(info) {
    const h: Record<string, string> = { authorization: `Bearer ${info.channel.key}` };
    if (info.channel.type === 1 && info.channel.organization) h['OpenAI-Organization'] = info.channel.organization;
    if (info.channel.type === OPENROUTER) Object.assign(h, OPENROUTER_HEADERS);
    return h;
  },

  convertRequest(info, body) {
    if (info.mode.name !== 'chat' && info.mode.name !== 'completions') return false;
    const usage = info.channel.type === OPENROUTER && askUsageCost(body);
    return reasoningModelTweaks(body, info) || usage;
  },

  fromHub(info, hub) {
    const body = openaiCodec.requestFromHub(hub, { model: info.upstreamModel, stream: info.isStream });
    if (info.channel.type === OPENROUTER) askUsageCost(body);
    return body;
  },

  parseError: parseOpenAIStyleError,
};
