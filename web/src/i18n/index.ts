// i18next setup. zh (Simplified, the fallback) and en are built in: every page's i18n.ts registers them with
// registerBundle(ns, {zh, en}) at module load. The other languages live in ./locales/<lng>.json, one file with every
// namespace and the server messages (`_server`), each its own chunk loaded on first use (setLanguage), so a zh or
// en reader downloads none of them. The choice is stored under `i18nextLng`.
import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import { common } from './common.js';
import { applyDayjsLocale, loadAntdLocale } from './antd-locale.js';
import { detectLanguage, LANGUAGE_TAGS, LANGUAGES, languageOf, type Language } from './languages.js';

export { LANGUAGE_NAMES, LANGUAGE_TAGS, type Language } from './languages.js';
export const LANGUAGE_KEY = 'i18nextLng';

/** A language's file: namespace → key → text, `_server` → server message → text. */
export type LocaleFile = Record<string, Record<string, string>>;

const LOCALE_FILES = import.meta.glob<LocaleFile>('./locales/*.json', { import: 'default' });
const fileOf = (lng: Language) => LOCALE_FILES[`./locales/${lng}.json`];

/** The languages this build offers: the two built in and those with a locale file, in menu order. */
export const OFFERED_LANGUAGES: readonly Language[] = LANGUAGES.filter(
  (l) => l === 'zh' || l === 'en' || fileOf(l) !== undefined,
);

function initialLanguage(): Language {
  let saved: string | null = null;
  try {
    saved = localStorage.getItem(LANGUAGE_KEY);
  } catch {
    /* storage unavailable */
  }
  const browser =
    typeof navigator === 'undefined' ? [] : navigator.languages?.length ? navigator.languages : [navigator.language];
  return detectLanguage(saved, browser, OFFERED_LANGUAGES);
}

const initial = initialLanguage();

void i18n.use(initReactI18next).init({
  lng: initial,
  // Traditional Chinese falls back to Simplified, the others to English; zh-TW also reaches zh through i18next's
  // language-only step
  fallbackLng: { zh: ['zh'], 'zh-TW': ['zh'], en: ['zh'], default: ['en', 'zh'] },
  supportedLngs: [...LANGUAGES],
  ns: ['common'],
  defaultNS: 'common',
  resources: { zh: { common: common.zh }, en: { common: common.en } },
  interpolation: { escapeValue: false },
  returnNull: false,
});

/** `<html lang>` follows the chosen language (screen readers, hyphenation, fonts). */
function applyDocumentLanguage(lng: string | undefined): void {
  if (typeof document !== 'undefined') document.documentElement.lang = LANGUAGE_TAGS[languageOf(lng) ?? 'zh'];
}

// index.html says zh-CN; a choice made on an earlier visit applies from the first render
applyDocumentLanguage(i18n.language);

i18n.on('languageChanged', (lng) => {
  try {
    localStorage.setItem(LANGUAGE_KEY, lng);
  } catch {
    /* ignore */
  }
  applyDocumentLanguage(lng);
  void applyDayjsLocale(languageOf(lng) ?? 'zh');
});

export function registerBundle(
  ns: string,
  resources: { zh: Record<string, string>; en: Record<string, string> },
): void {
  i18n.addResourceBundle('zh', ns, resources.zh, true, true);
  i18n.addResourceBundle('en', ns, resources.en, true, true);
}

const loaded = new Map<Language, Promise<void>>();

/** Adds a language's file to i18next (every namespace, `_server` included) once; zh and en have none. */
export function loadLanguage(lng: Language): Promise<void> {
  const file = fileOf(lng);
  if (!file) return Promise.resolve();
  let done = loaded.get(lng);
  if (!done) {
    done = file().then((bundles) => {
      for (const [ns, texts] of Object.entries(bundles)) i18n.addResourceBundle(lng, ns, texts, true, true);
    });
    // a failed download may be retried by the next switch
    done.catch(() => loaded.delete(lng));
    loaded.set(lng, done);
  }
  return done;
}

/** Switches the console's language: its texts and antd's locale first, so nothing shows a key or a mix. */
export async function setLanguage(lng: Language): Promise<void> {
  await Promise.all([loadLanguage(lng), loadAntdLocale(lng)]);
  await i18n.changeLanguage(lng);
}

/**
 * Resolves when the initial language's texts are in (at once for zh and en): main.tsx renders after it. A failed
 * download still renders, in the fallback language.
 */
export const languageReady: Promise<void> = Promise.all([loadLanguage(initial), loadAntdLocale(initial)]).then(
  () => applyDayjsLocale(initial),
  () => undefined,
);

export function currentLanguage(): Language {
  return languageOf(i18n.language) ?? 'zh';
}

/** The BCP 47 tag for Intl formats of the current language. */
export function localeTag(): string {
  return LANGUAGE_TAGS[currentLanguage()];
}

export default i18n;
