// The English console reads as English: no full-width punctuation in any English resource (every page's bundle,
// the shared one and the server-message table), `<html lang>` follows the language, and server messages are shown
// in English when the console is.
import { afterEach, describe, expect, it } from 'vitest';
import i18n from './index.js';
import { SERVER_MESSAGES_EN } from './server-messages.js';
import { englishOf, translateServerMessage } from './server-message.js';

// every page's bundle registers itself when its i18n.ts is loaded
const bundles = import.meta.glob('/src/**/i18n.ts', { eager: true });

// CJK punctuation (，。、【】「」…) and the full-width forms of ASCII (：！（）＄…); curly quotes are English too
const FULL_WIDTH_PUNCTUATION = /[\u3000-\u303f\uff01-\uff5e]/;

function strings(tree: unknown, path: string, out: [string, string][]): [string, string][] {
  if (typeof tree === 'string') out.push([path, tree]);
  else if (tree && typeof tree === 'object') {
    for (const [k, v] of Object.entries(tree)) strings(v, path ? `${path}.${k}` : k, out);
  }
  return out;
}

afterEach(async () => {
  await i18n.changeLanguage('zh');
});

describe('English resources', () => {
  it('loads every bundle', () => {
    expect(Object.keys(bundles).length).toBeGreaterThan(15);
    expect(Object.keys(i18n.store.data.en).length).toBeGreaterThan(15);
  });

  it('have no full-width punctuation', () => {
    const english = strings(i18n.store.data.en, '', []);
    expect(english.length).toBeGreaterThan(500);
    const offending = english.filter(([, text]) => FULL_WIDTH_PUNCTUATION.test(text)).map(([key]) => key);
    expect(offending).toEqual([]);
    const serverTable = Object.entries(SERVER_MESSAGES_EN).filter(([, en]) => FULL_WIDTH_PUNCTUATION.test(en));
    expect(serverTable).toEqual([]);
  });

  it('have no Chinese but the word a user must type', () => {
    // WeChat's official account answers the keyword 验证码 (the language menu's names are not in the bundles)
    const allowed = (text: string) => text.replace('"验证码"', '');
    const chinese = strings(i18n.store.data.en, '', []).filter(([, text]) => /[\u3400-\u9fff]/.test(allowed(text)));
    expect(chinese.map(([key]) => key)).toEqual([]);
  });
});

describe('<html lang>', () => {
  it('follows the chosen language', async () => {
    await i18n.changeLanguage('en');
    expect(document.documentElement.lang).toBe('en');
    await i18n.changeLanguage('zh');
    expect(document.documentElement.lang).toBe('zh-CN');
  });
});

describe('server messages', () => {
  it('are shown as sent while the console is in Chinese', () => {
    expect(translateServerMessage('SMTP 服务器未配置')).toBe('SMTP 服务器未配置');
  });

  it('are translated exactly and by pattern while the console is in English', async () => {
    await i18n.changeLanguage('en');
    expect(translateServerMessage('SMTP 服务器未配置')).toBe('The SMTP server is not configured');
    expect(translateServerMessage('用户名或密码错误，或用户已被封禁')).toBe(
      'Wrong username or password, or the user is banned',
    );
    expect(translateServerMessage('充值数量不能小于 5')).toBe('The top-up amount must be at least 5');
    // a value that is itself a server text is translated too (a quota amount inside a log line)
    expect(translateServerMessage('通过兑换码充值 ＄10.000000 额度，兑换码ID 7')).toBe(
      'Topped up $10.000000 of quota with a redemption code, code ID 7',
    );
    expect(translateServerMessage('模型倍率 1.00，补全倍率 2.00，分组倍率 1.00(可能是上游超时)')).toBe(
      'Model ratio 1.00, completion ratio 2.00, group ratio 1.00 (possibly an upstream timeout)',
    );
    expect(translateServerMessage('模型名称重复（仅大小写不同）: GPT-4')).toBe(
      'Model name duplicated (differing only in case): GPT-4',
    );
    // texts the table does not know (an upstream's error, a name typed by an admin) are left alone
    expect(translateServerMessage('upstream said no')).toBe('upstream said no');
    expect(translateServerMessage('我的渠道')).toBe('我的渠道');
    expect(englishOf('我的渠道')).toBeUndefined();
  });
});

describe('plurals', () => {
  it('say "1 channel" and "2 channels" in English, and use the one Chinese form', async () => {
    const channel = (key: string, count: number) => i18n.t(key, { ns: 'channel', count });
    await i18n.changeLanguage('en');
    expect(channel('batchTag.hint', 1)).toBe('1 channel selected');
    expect(channel('batchTag.hint', 2)).toBe('2 channels selected');
    expect(channel('batchTag.hint', 0)).toBe('0 channels selected');
    expect(i18n.t('ratio.total', { ns: 'setting', count: 1 })).toBe('1 model');
    expect(i18n.t('total', { ns: 'pricing', count: 3 })).toBe('3 models');
    expect(i18n.t('msg.created', { ns: 'token', count: 1 })).toBe('1 token created');
    await i18n.changeLanguage('zh');
    expect(channel('batchTag.hint', 1)).toBe('已选择 1 个渠道');
    expect(channel('batchTag.hint', 3)).toBe('已选择 3 个渠道');
  });

  it('every English count text with a plural noun has its singular form', () => {
    const en = i18n.store.data.en as Record<string, Record<string, string>>;
    const missing: string[] = [];
    for (const [ns, bundle] of Object.entries(en)) {
      for (const [key, text] of Object.entries(bundle)) {
        if (key.endsWith('_one') || !/\{\{count\}\} (\w+ )?[a-z]+s\b/.test(text)) continue;
        const base = key.replace(/_other$/, '');
        if (bundle[`${base}_one`] === undefined) missing.push(`${ns}:${key}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
