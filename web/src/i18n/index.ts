// i18next setup: languages zh (fallback) and en, choice stored under `i18nextLng`.
// Each page owns its strings in an i18n.ts next to it and calls registerBundle(ns, {zh, en}) at module load.
import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import { common } from './common.js';

export const LANGUAGES = ['zh', 'en'] as const;
export type Language = (typeof LANGUAGES)[number];
export const LANGUAGE_KEY = 'i18nextLng';

function initialLanguage(): Language {
  try {
    const saved = localStorage.getItem(LANGUAGE_KEY);
    if (saved && saved.startsWith('en')) return 'en';
    if (saved && saved.startsWith('zh')) return 'zh';
    if (!saved && typeof navigator !== 'undefined' && navigator.language?.startsWith('en')) return 'en';
  } catch {
    /* storage unavailable */
  }
  return 'zh';
}

void i18n.use(initReactI18next).init({
  lng: initialLanguage(),
  fallbackLng: 'zh',
  supportedLngs: [...LANGUAGES],
  ns: ['common'],
  defaultNS: 'common',
  resources: { zh: { common: common.zh }, en: { common: common.en } },
  interpolation: { escapeValue: false },
  returnNull: false,
});

/** `<html lang>` follows the chosen language (screen readers, hyphenation, fonts): `en` or `zh-CN`. */
function applyDocumentLanguage(lng: string | undefined): void {
  if (typeof document !== 'undefined') document.documentElement.lang = lng?.startsWith('en') ? 'en' : 'zh-CN';
}

// index.html says zh-CN; an English choice made on an earlier visit applies from the first render
applyDocumentLanguage(i18n.language);

i18n.on('languageChanged', (lng) => {
  try {
    localStorage.setItem(LANGUAGE_KEY, lng);
  } catch {
    /* ignore */
  }
  applyDocumentLanguage(lng);
});

export function registerBundle(
  ns: string,
  resources: { zh: Record<string, string>; en: Record<string, string> },
): void {
  i18n.addResourceBundle('zh', ns, resources.zh, true, true);
  i18n.addResourceBundle('en', ns, resources.en, true, true);
}

export function currentLanguage(): Language {
  return i18n.language?.startsWith('en') ? 'en' : 'zh';
}

export default i18n;
