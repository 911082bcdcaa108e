// Anthropic (channel type 14): the Messages API at `{base}/v1/messages` with `x-api-key` and `anthropic-version`.
// A Claude client's body passes through (the native lane); any other client's request is built from the hub by the
// Anthropic codec. claude.* options apply on both lanes (provider-settings.ts, thinking.ts).
import { anthropicCodec } from '../../formats/anthropic/index.js';
import type { Adaptor, RelayInfo } from '../types.js';
import { claudeModel, prepareClaudeBody } from './thinking.js';

const DEFAULT_VERSION = '2023-06-01';

function trimBase(url: string): string {
  return url.replace(/\/+$/, '');
}

/** The headers every Claude call carries: the client's anthropic-version and -beta, then per-model extras. */
export function claudeHeaders(info: RelayInfo): Record<string, string> {
  const h: Record<string, string> = {};
  const version = info.clientHeaders['anthropic-version'];
  h['anthropic-version'] = typeof version === 'string' && version ? version : DEFAULT_VERSION;
  const beta = info.clientHeaders['anthropic-beta'];
  if (typeof beta === 'string' && beta) h['anthropic-beta'] = beta;
  const { model } = claudeModel(info.settings, info.upstreamModel);
  Object.assign(h, info.settings.claude.modelHeaders(model));
  return h;
}

/** The Claude body of a request on the translated lane. */
export function claudeBodyFromHub(info: RelayInfo, hub: Parameters<NonNullable<Adaptor['fromHub']>>[1]) {
  const { model } = claudeModel(info.settings, info.upstreamModel);
  const body = anthropicCodec.requestFromHub(hub, {
    model,
    stream: info.isStream,
    defaultMaxTokens: info.settings.claude.defaultMaxTokens(model),
  });
  return prepareClaudeBody(info.settings, body, info.upstreamModel);
}

export const anthropicAdaptor: Adaptor = {
  wire: 'anthropic',
  supportsStreamOptions: () => false,
  target: (info) => ({ origin: trimBase(info.channel.baseUrl), path: '/v1/messages' }),
  headers: (info) => ({ 'x-api-key': info.channel.key, ...claudeHeaders(info) }),
  convertRequest(info, body) {
    const before = body.max_tokens;
    prepareClaudeBody(info.settings, body, info.upstreamModel);
    const { model } = claudeModel(info.settings, info.upstreamModel);
    const changed = body.model !== model || before !== body.max_tokens || 'thinking' in body;
    body.model = model;
    return changed;
  },
  fromHub: claudeBodyFromHub,
  parseError: (status, body) => anthropicCodec.parseError(status, body),
};
