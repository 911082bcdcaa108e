// gemini.* options on a Gemini request body (Gemini API and Vertex AI Gemini), as new-api applies them
// (new-api-compat.md §4.7). A body gets the operator's safety settings, image output for the image models, and the
// thinking adapter's model suffixes (`-thinking`, `-thinking-<budget>`, `-nothinking`) when
// gemini.thinking_adapter_enabled is on. A Gemini client's own body (the native lane) keeps the safety settings,
// modalities and thinkingConfig it sent; the options fill in only what it left out.
import type { ProviderSettings } from '../types.js';

// digits only: `gemini-2.0-flash-thinking-exp` is a model of its own, not a budget
const BUDGET_SUFFIX = /-thinking-(\d+)$/;

/** What a model suffix asks of thinking: a budget in tokens, on with the adapter's share, off, or nothing. */
export type GeminiThinking = { budget: number } | 'auto' | 'off' | null;

export interface GeminiModel {
  /** the model to call */
  model: string;
  thinking: GeminiThinking;
}

export function geminiModel(settings: ProviderSettings, requested: string): GeminiModel {
  if (!settings.gemini.thinkingAdapter) return { model: requested, thinking: null };
  const m = BUDGET_SUFFIX.exec(requested);
  if (m) return { model: requested.slice(0, m.index), thinking: { budget: Number(m[1]) } };
  if (requested.endsWith('-nothinking')) return { model: requested.slice(0, -'-nothinking'.length), thinking: 'off' };
  if (requested.endsWith('-thinking')) return { model: requested.slice(0, -'-thinking'.length), thinking: 'auto' };
  return { model: requested, thinking: null };
}

/** Gemini 2.5 Pro (but its two early previews) always thinks: it takes budgets 128…32768 and cannot turn off. */
function alwaysThinks(model: string): boolean {
  return (
    model.startsWith('gemini-2.5-pro') &&
    !model.startsWith('gemini-2.5-pro-preview-05-06') &&
    !model.startsWith('gemini-2.5-pro-preview-03-25')
  );
}

/** The two early 2.5 Pro previews take no budget, only includeThoughts. */
function takesNoBudget(model: string): boolean {
  return model.startsWith('gemini-2.5-pro-preview-05-06') || model.startsWith('gemini-2.5-pro-preview-03-25');
}

/** A budget inside the range the model accepts (Google refuses one outside it). */
export function clampThinkingBudget(model: string, budget: number): number {
  const [min, max] = model.startsWith('gemini-2.5-flash-lite')
    ? [512, 24576]
    : alwaysThinks(model)
      ? [128, 32768]
      : [0, 24576];
  return Math.min(max, Math.max(min, Math.floor(budget)));
}

/** The thinkingConfig a suffix asks for; undefined: leave the request as it is. */
function thinkingConfigFor(
  settings: ProviderSettings,
  model: string,
  thinking: Exclude<GeminiThinking, null>,
  maxOutputTokens: number,
): Record<string, unknown> | undefined {
  if (thinking === 'off') return alwaysThinks(model) ? undefined : { thinkingBudget: 0 };
  if (thinking !== 'auto')
    return { thinkingBudget: clampThinkingBudget(model, thinking.budget), includeThoughts: true };
  // without a maxOutputTokens to take a share of, the model picks its own budget
  if (takesNoBudget(model) || !(maxOutputTokens > 0)) return { includeThoughts: true };
  const budget = clampThinkingBudget(model, maxOutputTokens * settings.gemini.thinkingBudgetRatio);
  return { thinkingBudget: budget, includeThoughts: true };
}

/** Applies the options to a generateContent body in place. */
export function prepareGeminiBody(
  settings: ProviderSettings,
  body: Record<string, any>,
  requested: string,
  lane: 'native' | 'translated',
): void {
  const { model, thinking } = geminiModel(settings, requested);
  const config: Record<string, any> =
    body.generationConfig && typeof body.generationConfig === 'object' ? body.generationConfig : {};
  // the operator's choices fill in what the body does not say: a Gemini client's own safety settings and modalities
  // are kept, but a client that sends none is not left with Google's defaults the operator chose to replace
  if (lane === 'translated' || !Array.isArray(body.safetySettings))
    body.safetySettings = settings.gemini.safetySettings();
  if (settings.gemini.imageModels().includes(model) && !config.responseModalities)
    config.responseModalities = ['TEXT', 'IMAGE'];
  const clientAsked = lane === 'native' && config.thinkingConfig && typeof config.thinkingConfig === 'object';
  if (thinking !== null && !clientAsked) {
    const asked = thinkingConfigFor(settings, model, thinking, Number(config.maxOutputTokens) || 0);
    if (asked) config.thinkingConfig = asked;
  }
  if (Object.keys(config).length) body.generationConfig = config;
}
