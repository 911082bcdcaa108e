// Claude's `-thinking` model suffix (claude.thinking_adapter_enabled; new-api-compat.md §4.7): `<model>-thinking`
// asks for `<model>` with extended thinking, its budget a share of max_tokens, and max_tokens at least 1280.
// Shared by every provider that serves Claude (Anthropic, Bedrock, Vertex).
import type { ProviderSettings } from '../types.js';

const SUFFIX = '-thinking';
const MIN_MAX_TOKENS = 1280;

/** The model to send and whether the suffix asked for thinking. */
export function claudeModel(settings: ProviderSettings, model: string): { model: string; thinking: boolean } {
  if (settings.claude.thinkingAdapter && model.endsWith(SUFFIX) && model.length > SUFFIX.length)
    return { model: model.slice(0, -SUFFIX.length), thinking: true };
  return { model, thinking: false };
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

/** A Claude request body for model `model`: max_tokens defaulted, the suffix's thinking applied. */
export function prepareClaudeBody(
  settings: ProviderSettings,
  body: Record<string, any>,
  requestedModel: string,
): Record<string, any> {
  const { model, thinking } = claudeModel(settings, requestedModel);
  if (!(Number(body.max_tokens) > 0)) body.max_tokens = settings.claude.defaultMaxTokens(model);
  if (thinking) applyClaudeThinking(settings, body);
  return body;
}
