// Anthropic (channel type 14): the Messages API at `{base}/v1/messages` with `x-api-key` and `anthropic-version`.
// A Claude client's body passes through (the native lane); any other client's request is built from the hub by the
// Anthropic codec. claude.* options apply on both lanes (provider-settings.ts, thinking.ts).
import { anthropicCodec } from '../../formats/anthropic/index.js';
import type { Adaptor, RelayInfo } from '../types.js';
import { defineProvider } from '../manifest.js';
import { claudeModel, claudeOptionNames, prepareClaudeBody } from './thinking.js';

const DEFAULT_VERSION = '2023-06-01';

function trimBase(url: string): string {
  return url.replace(/\/+$/, '');
}

/** Comma-separated header values joined without repeats (`a,b` + `b,c` → `a,b,c`). */
function mergeList(...values: (string | undefined)[]): string {
  const items = values.flatMap((v) => (v ?? '').split(',').map((s) => s.trim()));
  return [...new Set(items.filter(Boolean))].join(',');
}

/**
 * The headers every Claude call carries: the client's anthropic-version and -beta, then the model's extras from
 * claude.model_headers_settings, each merged with the value already there (a configured beta flag adds to the
 * client's flags instead of replacing them), as new-api writes them.
 */
export function claudeHeaders(info: RelayInfo): Record<string, string> {
  const h: Record<string, string> = {};
  const version = info.clientHeaders['anthropic-version'];
  h['anthropic-version'] = typeof version === 'string' && version ? version : DEFAULT_VERSION;
  const beta = info.clientHeaders['anthropic-beta'];
  if (typeof beta === 'string' && beta) h['anthropic-beta'] = beta;
  for (const [name, value] of Object.entries(info.settings.claude.modelHeaders(claudeOptionNames(info)))) {
    const merged = mergeList(h[name], value);
    if (merged) h[name] = merged;
  }
  return h;
}

/** The Claude body of a request on the translated lane. */
export function claudeBodyFromHub(info: RelayInfo, hub: Parameters<NonNullable<Adaptor['fromHub']>>[1]) {
  const { model } = claudeModel(info.settings, info.upstreamModel);
  const body = anthropicCodec.requestFromHub(hub, {
    model,
    stream: info.isStream,
    defaultMaxTokens: info.settings.claude.defaultMaxTokens(claudeOptionNames(info)),
  });
  return prepareClaudeBody(info, body, 'translated');
}

/** A Claude client's body on the native lane: the claude.* options applied, the model as the upstream names it. */
function convertClaudeBody(info: RelayInfo, body: Record<string, unknown>): boolean {
  const before = body.max_tokens;
  const hadThinking = 'thinking' in body;
  prepareClaudeBody(info, body, 'native');
  const { model } = claudeModel(info.settings, info.upstreamModel);
  const changed = body.model !== model || before !== body.max_tokens || hadThinking !== 'thinking' in body;
  body.model = model;
  return changed;
}

/** The Messages API is its only endpoint: every chat-like request (a Claude client's, or another's through the hub). */
export const anthropicAdaptor = defineProvider({
  id: 'anthropic',
  types: [14],
  wire: 'anthropic',
  endpoints: {
    chat: {
      target: (info) => ({ origin: trimBase(info.channel.baseUrl), path: '/v1/messages' }),
      convertRequest: convertClaudeBody,
      fromHub: claudeBodyFromHub,
    },
  },
  supportsStreamOptions: () => false,
  headers: (info) => ({ 'x-api-key': info.channel.key, ...claudeHeaders(info) }),
  parseError: (status, body) => anthropicCodec.parseError(status, body),
});
