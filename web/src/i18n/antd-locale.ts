// antd's locale (and dayjs's, which antd's date pickers read) for each console language. zh_CN and en_US are in
// the first load, as before; the others are fetched with their language (setLanguage in ./index.ts).
import type { Locale } from 'antd/es/locale';
import zhCN from 'antd/locale/zh_CN';
import enUS from 'antd/locale/en_US';
import type { Language } from './languages.js';

const LAZY: Partial<Record<Language, () => Promise<[{ default: Locale }, unknown]>>> = {
  'zh-TW': () => Promise.all([import('antd/locale/zh_TW'), import('dayjs/locale/zh-tw')]),
  fr: () => Promise.all([import('antd/locale/fr_FR'), import('dayjs/locale/fr')]),
  ja: () => Promise.all([import('antd/locale/ja_JP'), import('dayjs/locale/ja')]),
  ru: () => Promise.all([import('antd/locale/ru_RU'), import('dayjs/locale/ru')]),
  vi: () => Promise.all([import('antd/locale/vi_VN'), import('dayjs/locale/vi')]),
};

/** dayjs's name of each language; zh and en keep dayjs's default, as before. */
const DAYJS: Partial<Record<Language, string>> = { 'zh-TW': 'zh-tw', fr: 'fr', ja: 'ja', ru: 'ru', vi: 'vi' };

const locales = new Map<Language, Locale>([
  ['zh', zhCN],
  ['en', enUS],
]);

export async function loadAntdLocale(lng: Language): Promise<void> {
  const load = LAZY[lng];
  if (!load || locales.has(lng)) return;
  const [antd] = await load();
  locales.set(lng, antd.default);
}

/** antd's locale for a language, English while one is not loaded (it always is by the time setLanguage switches). */
export function antdLocale(lng: Language): Locale {
  return locales.get(lng) ?? enUS;
}

let dayjsChanged = false;

/**
 * dayjs's global locale follows the console's (date pickers' month and day names). zh and en keep dayjs's default, so
 * dayjs stays out of their first load: it is fetched with another language's locale, or to go back from one.
 */
export async function applyDayjsLocale(lng: Language): Promise<void> {
  const name = DAYJS[lng];
  if (!name && !dayjsChanged) return;
  const { default: dayjs } = await import('dayjs');
  dayjs.locale(name ?? 'en');
  dayjsChanged = name !== undefined;
}
