// The console's languages: their codes, tags and names, and the choice of one from what the browser asks for.
// No i18next here, so detection is testable on its own and cheap to import.

/** Every language the console knows, in menu order. `zh` is Simplified Chinese (the code saved choices carry). */
export const LANGUAGES = ['zh', 'zh-TW', 'en', 'fr', 'ja', 'ru', 'vi'] as const;
export type Language = (typeof LANGUAGES)[number];

/** The BCP 47 tag of each language: `<html lang>`, Intl formats, Accept-Language. */
export const LANGUAGE_TAGS: Record<Language, string> = {
  zh: 'zh-CN',
  'zh-TW': 'zh-TW',
  en: 'en',
  fr: 'fr',
  ja: 'ja',
  ru: 'ru',
  vi: 'vi',
};

/** Each language's name in its own script: the switch shows them untranslated, so a reader finds their own. */
export const LANGUAGE_NAMES: Record<Language, string> = {
  zh: '简体中文',
  'zh-TW': '繁體中文',
  en: 'English',
  fr: 'Français',
  ja: '日本語',
  ru: 'Русский',
  vi: 'Tiếng Việt',
};

/** Traditional Chinese: Taiwan, Hong Kong, Macau and any code naming the Hant script. */
const TRADITIONAL = /^zh-(tw|hk|mo|hant)\b/i;

/**
 * The console language for a language code (a saved choice or one of the browser's), or undefined if none fits.
 * index.html's boot script makes the same choice for the loading state's `<html lang>` and word: change both.
 */
export function languageOf(code: string | null | undefined): Language | undefined {
  if (!code) return undefined;
  const lower = code.trim().toLowerCase().replace(/_/g, '-');
  if (TRADITIONAL.test(lower)) return 'zh-TW';
  const primary = lower.split('-')[0];
  if (primary === 'zh') return 'zh';
  return (['en', 'fr', 'ja', 'ru', 'vi'] as const).find((l) => l === primary);
}

/** A saved choice wins; then the browser's languages in its order of preference; else Chinese, as new-api. */
export function detectLanguage(
  saved: string | null,
  browser: readonly string[],
  offered: readonly Language[],
): Language {
  const fit = (code: string | null) => {
    const l = languageOf(code);
    return l && offered.includes(l) ? l : undefined;
  };
  return fit(saved) ?? browser.map(fit).find((l) => l !== undefined) ?? 'zh';
}
