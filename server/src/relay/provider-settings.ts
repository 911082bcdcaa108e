// The settings providers read (providers/types.ts ProviderSettings), built from the server's config and the vendor
// options (claude.*, gemini.*; new-api-compat.md §6.1). Options change at run time: every lookup reads the store,
// and a JSON option is parsed again only when its text changed.
import type { AppContext } from '../context.js';
import type { OptionStore } from '../services/options.js';
import type { ExchangedCredential, ProviderChannel, ProviderSettings } from './providers/types.js';

/** Parses a JSON option once per distinct text; a malformed value counts as `fallback`. */
function jsonOption<T>(options: OptionStore, key: string, fallback: T): () => T {
  let text: string | null = null;
  let value = fallback;
  return () => {
    const t = options.get(key);
    if (t !== text) {
      text = t;
      try {
        const v = JSON.parse(t);
        value = v && typeof v === 'object' ? (v as T) : fallback;
      } catch {
        value = fallback;
      }
    }
    return value;
  };
}

/** A per-model entry of a `{"default": …, "<model>": …}` option: the first of `models` that has one, else `default`. */
function perModel<T>(
  map: Record<string, unknown>,
  models: string | readonly string[],
  valid: (v: unknown) => v is T,
): T | undefined {
  for (const model of typeof models === 'string' ? [models] : models) {
    const own = Object.hasOwn(map, model) ? map[model] : undefined;
    if (valid(own)) return own;
  }
  const dflt = map.default;
  return valid(dflt) ? dflt : undefined;
}

const isPositive = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0;
const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** Where exchanged tokens are kept (relay/credential-cache.ts; tests give a fixed token). */
export interface CredentialStore {
  get(
    credential: ExchangedCredential,
    key: string,
    settings: ProviderSettings,
    channel?: ProviderChannel,
  ): Promise<string>;
  invalidate(credential: ExchangedCredential, key: string, channel?: ProviderChannel): void;
}

export function providerSettings(
  ctx: AppContext,
  credentials?: CredentialStore,
  fetchImage?: ProviderSettings['fetchImage'],
  sendUpstream?: ProviderSettings['sendUpstream'],
): ProviderSettings {
  const o = ctx.options;
  const claudeMaxTokens = jsonOption<Record<string, unknown>>(o, 'claude.default_max_tokens', {});
  const claudeHeaders = jsonOption<Record<string, unknown>>(o, 'claude.model_headers_settings', {});
  const geminiVersions = jsonOption<Record<string, unknown>>(o, 'gemini.version_settings', {});
  const geminiSafety = jsonOption<Record<string, unknown>>(o, 'gemini.safety_settings', {});
  const geminiImage = jsonOption<unknown[]>(o, 'gemini.supported_imagine_models', []);
  const ratio = (key: string, dflt: number) => {
    const r = o.num(key, dflt);
    return r > 0 && r < 1 ? r : dflt;
  };
  const settings: ProviderSettings = {
    azureDefaultApiVersion: ctx.config.azureDefaultApiVersion,
    claude: {
      defaultMaxTokens: (models) => perModel(claudeMaxTokens(), models, isPositive) ?? 8192,
      get thinkingAdapter() {
        return o.bool('claude.thinking_adapter_enabled');
      },
      get thinkingBudgetRatio() {
        return ratio('claude.thinking_adapter_budget_tokens_percentage', 0.8);
      },
      modelHeaders(models) {
        const all = claudeHeaders();
        const named = models.find((m) => Object.hasOwn(all, m));
        const h = named === undefined ? undefined : all[named];
        const out: Record<string, string> = {};
        if (h && typeof h === 'object')
          for (const [k, v] of Object.entries(h as Record<string, unknown>)) {
            // a header may be given as a list of values (anthropic-beta): joined as Anthropic accepts them
            if (Array.isArray(v)) out[k.toLowerCase()] = v.map(String).join(',');
            else if (v != null) out[k.toLowerCase()] = String(v);
          }
        return out;
      },
    },
    gemini: {
      version: (model) => perModel(geminiVersions(), model, isText) ?? 'v1beta',
      safetySettings() {
        const map = geminiSafety();
        const dflt = isText(map.default) ? map.default : 'OFF';
        const out: { category: string; threshold: string }[] = [];
        for (const category of SAFETY_CATEGORIES) {
          const v = map[category];
          out.push({ category, threshold: isText(v) ? v : dflt });
        }
        return out;
      },
      get thinkingAdapter() {
        return o.bool('gemini.thinking_adapter_enabled');
      },
      get thinkingBudgetRatio() {
        return ratio('gemini.thinking_adapter_budget_tokens_percentage', 0.6);
      },
      imageModels: () => geminiImage().filter(isText),
    },
    vertexTokenUrl: ctx.config.vertexTokenUrl,
    fetchImage,
    sendUpstream,
  };
  // an exchange reads the settings (a token endpoint named by the config): the store is handed them here, once
  if (credentials)
    settings.credentials = {
      get: (credential, key, channel) => credentials.get(credential, key, settings, channel),
      invalidate: (credential, key, channel) => credentials.invalidate(credential, key, channel),
    };
  return settings;
}

/** The harm categories new-api sends in every Gemini request's safetySettings. */
const SAFETY_CATEGORIES = [
  'HARM_CATEGORY_HARASSMENT',
  'HARM_CATEGORY_HATE_SPEECH',
  'HARM_CATEGORY_SEXUALLY_EXPLICIT',
  'HARM_CATEGORY_DANGEROUS_CONTENT',
  'HARM_CATEGORY_CIVIC_INTEGRITY',
];
