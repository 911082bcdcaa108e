// claude.* options on a Claude request body, shared by every provider that serves Claude (Anthropic, Bedrock,
// Vertex; new-api-compat.md §4.7): max_tokens defaulted from claude.default_max_tokens, and the `-thinking` model
// suffix (claude.thinking_adapter_enabled): `<model>-thinking` asks for `<model>` with extended thinking, its budget
// a share of max_tokens, and max_tokens at least 1280.
import { thinkingWouldBeRefused } from '../../formats/anthropic/thinking-continuity.js';
import type { ProviderSettings, RelayInfo } from '../types.js';

const SUFFIX = '-thinking';
const MIN_MAX_TOKENS = 1280;

/** The model to send and whether the suffix asked for thinking. */
export function claudeModel(settings: ProviderSettings, model: string): { model: string; thinking: boolean } {
  if (settings.claude.thinkingAdapter && model.endsWith(SUFFIX) && model.length > SUFFIX.length)
    return { model: model.slice(0, -SUFFIX.length), thinking: true };
  return { model, thinking: false };
}

/**
 * The names a per-model claude.* entry is looked up by, first match wins: the client's (new-api keys
 * model_headers_settings by it, so operators write the names their users send), then the mapped one, then the one
 * sent upstream (suffix stripped).
 */
export function claudeOptionNames(info: RelayInfo): string[] {
  const sent = claudeModel(info.settings, info.upstreamModel).model;
  return [...new Set([info.originModel, info.upstreamModel, sent])];
}

/** A Claude body (native or built from the hub) made to think: budget, max_tokens, and the sampling Claude allows. */
export function applyClaudeThinking(settings: ProviderSettings, body: Record<string, any>): void {
  let max = Number(body.max_tokens) || 0;
  if (max < MIN_MAX_TOKENS) max = MIN_MAX_TOKENS;
  body.max_tokens = max;
  body.thinking = { type: 'enabled', budget_tokens: Math.floor(max * settings.claude.thinkingBudgetRatio) };
  // Claude refuses temperature, top_k and a top_p below 0.95 with thinking on
  delete body.temperature;
  delete body.top_k;
  if (typeof body.top_p === 'number' && body.top_p < 0.95) delete body.top_p;
}

/**
 * A Claude request body made ready for the model the request names: max_tokens defaulted, the suffix's thinking
 * applied. On the native lane a Claude client's own `thinking` wins over the suffix (as new-api); a body built from
 * the hub always takes the suffix's, unless its tool loop lost the thinking block Claude would then require.
 */
export function prepareClaudeBody(
  info: RelayInfo,
  body: Record<string, any>,
  lane: 'native' | 'translated',
): Record<string, any> {
  const { thinking } = claudeModel(info.settings, info.upstreamModel);
  if (!(Number(body.max_tokens) > 0)) body.max_tokens = info.settings.claude.defaultMaxTokens(claudeOptionNames(info));
  const clientAsked = lane === 'native' && body.thinking && typeof body.thinking === 'object';
  // nor does the suffix turn on thinking Claude would refuse for this tool loop (formats/anthropic/thinking-continuity.ts)
  if (thinking && !clientAsked && !thinkingWouldBeRefused(body.messages)) applyClaudeThinking(info.settings, body);
  return body;
}
