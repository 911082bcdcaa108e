// Issue 47 on a real browser: the console in each of its seven languages on a 390 px phone. The choice saved in
// `i18nextLng` applies from the first paint (the language's file is fetched first); the login page, a server error,
// the wallet and the token list show the language's texts, amounts in its currency form, no raw key, nothing wider
// than the screen; and the top bar's menu switches the language.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import {
  BASE_URL,
  ROOT_PASSWORD,
  ROOT_USERNAME,
  ensureRootSetup,
  launchBrowser,
  shot,
  toast,
  type Browser,
} from './browser.js';

const PHONE = { width: 390, height: 844 };

type Texts = { login: string; wrongPassword: string; wallet: string; balance: string; tokens: string };

const BUILT_IN: Record<string, Texts> = {
  zh: {
    login: '用户登录',
    wrongPassword: '用户名或密码错误，或用户已被封禁',
    wallet: '钱包',
    balance: '当前余额',
    tokens: 'API令牌',
  },
  en: {
    login: 'Log in',
    wrongPassword: 'Wrong username or password, or the user is banned',
    wallet: 'Wallet',
    balance: 'Balance',
    tokens: 'API tokens',
  },
};

type LocaleFile = Record<string, Record<string, string>>;
const fileOf = (lng: string): LocaleFile =>
  JSON.parse(readFileSync(new URL(`../src/i18n/locales/${lng}.json`, import.meta.url), 'utf8')) as LocaleFile;

function textsOf(lng: string): Texts {
  if (BUILT_IN[lng]) return BUILT_IN[lng];
  const f = fileOf(lng);
  return {
    login: f.auth!.loginTitle!,
    wrongPassword: f._server!['用户名或密码错误，或用户已被封禁']!,
    wallet: f.topup!.title!,
    balance: f.topup!.balance!,
    tokens: f.token!.title!,
  };
}

/** The keys i18next would show for a missing text: dotted (`redeem.title`) and camelCase (`loginTitle`) ones. */
const RAW_KEYS = (() => {
  const keys = new Set<string>();
  for (const [ns, texts] of Object.entries(fileOf('ja'))) {
    if (ns === '_server') continue;
    for (const key of Object.keys(texts)) {
      keys.add(`${ns}:${key}`);
      const base = key.replace(/_(one|few|many|other)$/, '');
      if (base.includes('.') || /^[a-z]+[A-Z]\w*$/.test(base)) keys.add(base);
    }
  }
  return [...keys];
})();

const LANGUAGES: [lng: string, tag: string, currency: RegExp][] = [
  ['zh', 'zh-CN', /^\$\d/],
  ['zh-TW', 'zh-TW', /^\$\d/],
  ['en', 'en', /^\$\d/],
  ['fr', 'fr', /^\d[\d\s]*,\d\d\s\$$/u],
  ['ja', 'ja', /^\$\d/],
  ['ru', 'ru', /^\d[\d\s]*,\d\d\s\$$/u],
  ['vi', 'vi', /^\d[\d.]*,\d\d\s\$$/u],
];

let b: Browser;

beforeAll(async () => {
  await ensureRootSetup();
  b = await launchBrowser({ viewport: PHONE });
});

afterAll(async () => {
  await b?.close();
});

async function expectNoRawKeyAndFits(page: Page): Promise<void> {
  const text = await page.locator('body').innerText();
  expect(RAW_KEYS.filter((k) => text.includes(k))).toEqual([]);
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
}

async function openIn(page: Page, lng: string, path: string): Promise<void> {
  await page.goto(`${BASE_URL}/about`);
  await page.evaluate((l) => {
    localStorage.clear();
    localStorage.setItem('i18nextLng', l);
  }, lng);
  await page.context().clearCookies();
  await page.goto(`${BASE_URL}${path}`);
}

/**
 * Picks a language from the top bar's menu and waits until it is the stored choice. A loaded CI machine once left the
 * console in the old language for 10 s with no trace of why; a failure now says what the page showed (the menu still
 * open, an error message, the language it is in) and leaves a screenshot.
 */
async function chooseFromMenu(page: Page, name: string, lng: string): Promise<void> {
  await page.getByTestId('language-menu').click();
  await page.getByRole('menuitem', { name }).click();
  try {
    await expect.poll(() => page.evaluate(() => localStorage.getItem('i18nextLng')), { timeout: 30_000 }).toBe(lng);
  } catch (err) {
    await shot(page, `languages-menu-${lng}-failed`);
    const seen = await page.evaluate(() => ({
      lang: document.documentElement.lang,
      stored: localStorage.getItem('i18nextLng'),
      menuOpen: document.querySelector('.ant-dropdown:not(.ant-dropdown-hidden)') !== null,
      messages: [...document.querySelectorAll('.ant-message-notice')].map((n) => n.textContent),
    }));
    throw new Error(`the menu did not switch the console to ${lng}: ${JSON.stringify(seen)}`, { cause: err });
  }
}

describe('the console in each language on a phone', () => {
  it.each(LANGUAGES)('%s: login, a server error, the wallet and the tokens', async (lng, tag, currency) => {
    const { page } = b;
    const texts = textsOf(lng);
    await openIn(page, lng, '/login');
    await page.getByText(texts.login, { exact: true }).first().waitFor();
    expect(await page.evaluate(() => document.documentElement.lang)).toBe(tag);
    await expectNoRawKeyAndFits(page);

    await page.locator('input#username').fill(ROOT_USERNAME);
    await page.locator('input#password').fill('not-the-password');
    await page.locator('form button[type=submit]').click();
    await toast(page, texts.wrongPassword);
    await shot(page, `languages-${lng}-login`);

    await page.locator('input#password').fill(ROOT_PASSWORD);
    await page.locator('form button[type=submit]').click();
    await page.waitForURL(/\/token$/, { timeout: 15_000 });
    await page.getByText(texts.tokens, { exact: true }).first().waitFor();
    await expectNoRawKeyAndFits(page);

    await page.goto(`${BASE_URL}/topup`);
    await page.getByTestId('topup-page').getByText(texts.wallet, { exact: true }).waitFor();
    await page.getByText(texts.balance, { exact: true }).waitFor();
    // '-' until the user's quota has come
    const balance = page.getByTestId('wallet-balance').locator('.ant-statistic-content');
    await expect.poll(async () => (await balance.innerText()).trim(), { timeout: 10_000 }).toMatch(currency);
    await expectNoRawKeyAndFits(page);
    await shot(page, `languages-${lng}-wallet`);
  });

  it('shows the loading state in the language, not keys, while its file is on the way', async () => {
    const { page } = b;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    // French's chunks (its texts, dayjs's French) wait until the loading state has been seen
    await page.route(/\/assets\/fr-[^/]*\.js$/, async (route) => {
      await held;
      await route.continue();
    });
    try {
      await openIn(page, 'fr', '/login');
      await page.getByText('Chargement…').waitFor();
      expect(await page.evaluate(() => document.documentElement.lang)).toBe('fr');
      expect(await page.locator('input#username').count()).toBe(0);
      release();
      await page.getByText(textsOf('fr').login, { exact: true }).first().waitFor();
      await expectNoRawKeyAndFits(page);
    } finally {
      release();
      await page.unroute(/\/assets\/fr-[^/]*\.js$/);
    }
  });

  it('switches from the top bar menu on the phone', async () => {
    const { page } = b;
    await openIn(page, 'zh', '/login');
    await page.getByText(BUILT_IN.zh!.login, { exact: true }).first().waitFor();
    await chooseFromMenu(page, 'Tiếng Việt', 'vi');
    await page.getByText(textsOf('vi').login, { exact: true }).first().waitFor();
    expect(await page.evaluate(() => [document.documentElement.lang, localStorage.getItem('i18nextLng')])).toEqual([
      'vi',
      'vi',
    ]);
    await chooseFromMenu(page, '繁體中文', 'zh-TW');
    await page.getByText(textsOf('zh-TW').login, { exact: true }).first().waitFor();
    await shot(page, 'languages-menu-zh-TW');
  });
});
