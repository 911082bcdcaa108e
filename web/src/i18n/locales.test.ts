// Issue 47: the console in seven languages. Every shipped language's file has every key of every page's bundle and
// every server message (a missing one fails here), the language comes from the browser unless one was chosen, a
// switch loads the file before showing it, and server messages, amounts and times follow the language.
import { afterEach, describe, expect, it } from 'vitest';
import i18n, { LANGUAGE_KEY, OFFERED_LANGUAGES, setLanguage, type LocaleFile } from './index.js';
import { detectLanguage, languageOf, LANGUAGES } from './languages.js';
import { localeProblems } from './locale-keys.js';
import { antdLocale } from './antd-locale.js';
import { SERVER_MESSAGES_EN } from './server-messages.js';
import { translateServerMessage } from './server-message.js';
import { formatDecimal, formatMoney, renderNumber, renderQuota, renderTime } from '../lib/render.js';

// every page's bundle registers itself when its i18n.ts is loaded
const bundles = import.meta.glob('/src/**/i18n.ts', { eager: true });
const files = import.meta.glob<LocaleFile>('./locales/*.json', { eager: true, import: 'default' });
const fileOf = (lng: string) => files[`./locales/${lng}.json`]!;

/** The languages shipped with a file; zh and en are built in. Exactly these: a new file must be listed here. */
const SHIPPED = ['zh-TW', 'fr', 'ja', 'ru', 'vi'];

const english = () => i18n.store.data.en as Record<string, Record<string, string>>;

afterEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.clear();
});

describe('locale files', () => {
  it('are the shipped languages, offered after zh and en in menu order', () => {
    expect(Object.keys(bundles).length).toBeGreaterThan(15);
    const shipped = Object.keys(files).map((p) => p.replace(/^\.\/locales\/|\.json$/g, ''));
    expect(shipped.sort()).toEqual([...SHIPPED].sort());
    expect(OFFERED_LANGUAGES).toEqual(LANGUAGES.filter((l) => l === 'zh' || l === 'en' || SHIPPED.includes(l)));
  });

  it.each(SHIPPED)('%s has every key and server message, with the English placeholders', (lng) => {
    expect(Object.keys(english()).length).toBeGreaterThan(25);
    expect(localeProblems(lng, fileOf(lng), english(), SERVER_MESSAGES_EN)).toEqual([]);
  });

  it('the comparison fails on a missing key, a lost placeholder, an empty text, a missing plural form', () => {
    const doctored = structuredClone(fileOf('ru'));
    delete doctored.common!['nav.login'];
    doctored.common!['error.other'] = 'Ошибка';
    doctored.common!['action.ok'] = ' ';
    delete doctored.channel!['batchTag.hint_few'];
    delete doctored._server!['SMTP 服务器未配置'];
    doctored.common!['nav.nonexistent'] = 'x';
    // what the doctoring adds to the file's own problems (none when it is complete)
    const added = (lng: string, file: LocaleFile) => {
      const before = new Set(localeProblems(lng, fileOf(lng), english(), SERVER_MESSAGES_EN));
      return localeProblems(lng, file, english(), SERVER_MESSAGES_EN).filter((p) => !before.has(p));
    };
    expect(added('ru', doctored).sort()).toEqual([
      'ru _server:SMTP 服务器未配置 missing',
      'ru channel:batchTag.hint_few missing',
      'ru common:action.ok missing',
      'ru common:error.other placeholders  instead of {{message}}',
      'ru common:nav.login missing',
      'ru common:nav.nonexistent unknown',
    ]);
    // a language with one plural form needs no `_one`, and may not carry a `_few`
    const ja = structuredClone(fileOf('ja'));
    ja.channel!['batchTag.hint_few'] = '{{count}}';
    expect(added('ja', ja)).toEqual(['ja channel:batchTag.hint_few unknown']);
  });
});

describe('the language at start', () => {
  const all = LANGUAGES;
  it('comes from the browser: Traditional Chinese by region or script, the others by prefix', () => {
    expect(detectLanguage(null, ['zh-TW'], all)).toBe('zh-TW');
    expect(detectLanguage(null, ['zh-HK', 'en'], all)).toBe('zh-TW');
    expect(detectLanguage(null, ['zh-MO'], all)).toBe('zh-TW');
    expect(detectLanguage(null, ['zh-Hant-CN'], all)).toBe('zh-TW');
    expect(detectLanguage(null, ['zh-Hans-TW'], all)).toBe('zh');
    expect(detectLanguage(null, ['zh-CN'], all)).toBe('zh');
    expect(detectLanguage(null, ['zh-SG'], all)).toBe('zh');
    expect(detectLanguage(null, ['en-GB'], all)).toBe('en');
    expect(detectLanguage(null, ['fr-CA'], all)).toBe('fr');
    expect(detectLanguage(null, ['ja-JP'], all)).toBe('ja');
    expect(detectLanguage(null, ['ru'], all)).toBe('ru');
    expect(detectLanguage(null, ['vi-VN'], all)).toBe('vi');
    // the first the console speaks, in the browser's order
    expect(detectLanguage(null, ['de-DE', 'ja', 'en'], all)).toBe('ja');
    // none: Chinese, as new-api
    expect(detectLanguage(null, ['de-DE', 'ko'], all)).toBe('zh');
    expect(detectLanguage(null, [], all)).toBe('zh');
    // a language this build does not ship is passed over
    expect(detectLanguage(null, ['vi', 'en'], ['zh', 'en'])).toBe('en');
  });

  it('is the saved choice when there is one', () => {
    expect(detectLanguage('en', ['ja'], all)).toBe('en');
    expect(detectLanguage('zh', ['fr'], all)).toBe('zh');
    expect(detectLanguage('zh-TW', ['en'], all)).toBe('zh-TW');
    // i18next's older detector saved regional codes
    expect(detectLanguage('en-US', ['ja'], all)).toBe('en');
    expect(detectLanguage('garbage', ['ru'], all)).toBe('ru');
    expect(languageOf('zh_TW')).toBe('zh-TW');
    expect(languageOf('ko')).toBeUndefined();
  });
});

describe('switching', () => {
  it('loads the file, then shows the language: texts, server messages, <html lang>, antd, the saved choice', async () => {
    await setLanguage('ja');
    expect(i18n.language).toBe('ja');
    expect(i18n.hasResourceBundle('ja', 'channel')).toBe(true);
    expect(i18n.t('nav.login')).toBe(fileOf('ja').common!['nav.login']);
    expect(i18n.t('nav.login')).not.toBe('nav.login');
    expect(i18n.t('title', { ns: 'defaultPassword' })).toBe('デフォルトのパスワードを使用しています！');
    expect(document.documentElement.lang).toBe('ja');
    expect(localStorage.getItem(LANGUAGE_KEY)).toBe('ja');
    expect(antdLocale('ja').locale).toBe('ja');
    await setLanguage('zh-TW');
    expect(document.documentElement.lang).toBe('zh-TW');
    expect(antdLocale('zh-TW').locale).toBe('zh-tw');
    await setLanguage('zh');
    expect(document.documentElement.lang).toBe('zh-CN');
  });

  it('gives plural forms by the language rules', async () => {
    await setLanguage('ru');
    const hint = (count: number) => i18n.t('batchTag.hint', { ns: 'channel', count });
    const ru = fileOf('ru').channel!;
    expect(hint(1)).toBe(ru['batchTag.hint_one']!.replace('{{count}}', '1'));
    expect(hint(3)).toBe(ru['batchTag.hint_few']!.replace('{{count}}', '3'));
    expect(hint(5)).toBe(ru['batchTag.hint_many']!.replace('{{count}}', '5'));
  });
});

describe('server messages', () => {
  it('are shown in Japanese, exactly and by pattern, then in English, then as sent', async () => {
    await setLanguage('ja');
    const ja = fileOf('ja')._server!;
    expect(translateServerMessage('SMTP 服务器未配置')).toBe(ja['SMTP 服务器未配置']);
    expect(translateServerMessage('SMTP 服务器未配置')).not.toBe('The SMTP server is not configured');
    expect(translateServerMessage('充值数量不能小于 5')).toBe(ja['充值数量不能小于 {0}']!.replace('{0}', '5'));
    // a message the Japanese table lacks is shown in English
    const table = i18n.store.data.ja!._server as Record<string, string>;
    const kept = table['SMTP 服务器未配置']!;
    delete table['SMTP 服务器未配置'];
    try {
      expect(translateServerMessage('SMTP 服务器未配置')).toBe('The SMTP server is not configured');
    } finally {
      table['SMTP 服务器未配置'] = kept;
    }
    expect(translateServerMessage('我的渠道')).toBe('我的渠道');
    await setLanguage('zh');
    expect(translateServerMessage('SMTP 服务器未配置')).toBe('SMTP 服务器未配置');
  });
});

describe('amounts, numbers and times', () => {
  const sec = new Date(2024, 0, 5, 7, 8, 9).getTime() / 1000;

  it('keep new-api forms in Chinese and English', async () => {
    localStorage.setItem('quota_per_unit', '500000');
    expect(renderQuota(1250000)).toBe('$2.50');
    expect(renderNumber(12345)).toBe('12.3k');
    expect(renderTime(sec)).toBe('2024-01-05 07:08:09');
    expect(formatMoney(9.5, 'USD')).toBe('9.50 USD');
    expect(formatDecimal(1234.5)).toBe('1234.50');
    await setLanguage('en');
    expect(renderQuota(1250000)).toBe('$2.50');
    expect(renderTime(sec)).toBe('2024-01-05 07:08:09');
  });

  it('take the locale forms in the others', async () => {
    localStorage.setItem('quota_per_unit', '500000');
    await setLanguage('fr');
    expect(renderQuota(1250000)).toMatch(/^2,50\s\$$/u);
    expect(renderTime(sec)).toBe('05/01/2024 07:08:09');
    expect(formatMoney(9.5, 'EUR')).toMatch(/^9,50\sEUR$/u);
    expect(formatMoney(9.5, 'points')).toBe('9.50 points');
    expect(formatDecimal(1234.5)).toMatch(/^1\s234,50$/u);
    await setLanguage('ru');
    expect(renderNumber(12345)).toMatch(/^12,3\sтыс\.$/u);
    await setLanguage('ja');
    expect(renderQuota(1250000)).toBe('$2.50');
    expect(renderTime(sec)).toBe('2024/01/05 7:08:09');
  });
});
