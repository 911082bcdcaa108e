// gemini.* options applied to a Gemini request body, whichever lane built it (Gemini API and Vertex AI Gemini):
// safety settings, image output for the image models, and the thinking adapter's model suffixes
// (`-thinking`, `-thinking-<budget>`, `-nothinking`) when gemini.thinking_adapter_enabled is on.
import type { ProviderSettings } from '../types.js';

const BUDGET_SUFFIX = /-thinking-(\d+)$/;

export interface GeminiModel {
  /** the model to call */
  model: string;
  /** thinking budget the suffix asked for: a number of tokens, 'auto' (a share of maxOutputTokens) or 0 (off) */
  thinking: number | 'auto' | null;
}

export function geminiModel(settings: ProviderSettings, requested: string): GeminiModel {
  if (!settings.gemini.thinkingAdapter) return { model: requested, thinking: null };
  const m = BUDGET_SUFFIX.exec(requested);
  if (m) return { model: requested.slice(0, m.index), thinking: Number(m[1]) };
  if (requested.endsWith('-nothinking')) return { model: requested.slice(0, -'-nothinking'.length), thinking: 0 };
  if (requested.endsWith('-thinking')) return { model: requested.slice(0, -'-thinking'.length), thinking: 'auto' };
  return { model: requested, thinking: null };
}

/** Applies the options to a generateContent body in place. */
export function prepareGeminiBody(settings: ProviderSettings, body: Record<string, any>, requested: string): void {
  const { model, thinking } = geminiModel(settings, requested);
  if (!Array.isArray(body.safetySettings)) body.safetySettings = settings.gemini.safetySettings();
  const config: Record<string, any> =
    body.generationConfig && typeof body.generationConfig === 'object' ? body.generationConfig : {};
  if (settings.gemini.imageModels().includes(model) && !config.responseModalities)
    config.responseModalities = ['TEXT', 'IMAGE'];
  if (thinking !== null) {
    const max = Number(config.maxOutputTokens) || 0;
    const budget =
      thinking === 'auto' ? (max > 0 ? Math.floor(max * settings.gemini.thinkingBudgetRatio) : -1) : thinking;
    config.thinkingConfig =
      budget === 0
        ? { thinkingBudget: 0 }
        : { ...(config.thinkingConfig ?? {}), thinkingBudget: budget, includeThoughts: true };
  }
  if (Object.keys(config).length) body.generationConfig = config;
}
