// Screenshots of every console page in light/dark and zh/en, at desktop (1440×900) and phone (390×844) sizes, kept as
// test artefacts under web/test-results/screens/<size>-<theme>-<lang>-<page>.png for a person to look over.
// One browser for all of them: the theme and language are switched through their localStorage keys
// (context/theme.tsx `theme-mode`, i18n `i18nextLng`), which the console reads when a page loads.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { BASE_URL, ensureRootSetup, launchBrowser, loginAsRoot, RESULTS_DIR, type Browser } from './browser.js';

const SCREENS_DIR = join(RESULTS_DIR, 'screens');
const SIZES = {
  desktop: { width: 1440, height: 900 },
  phone: { width: 390, height: 844 },
} as const;
const SIZE_NAMES = Object.keys(SIZES) as (keyof typeof SIZES)[];
const THEMES = ['light', 'dark'] as const;
const LANGUAGES = ['zh', 'en'] as const;

const GUEST_PAGES = { login: '/login', register: '/register' };
const PAGES = {
  home: '/',
  pricing: '/pricing',
  about: '/about',
  dashboard: '/detail',
  tokens: '/token',
  logs: '/log',
  playground: '/playground',
  wallet: '/topup',
  personal: '/personal',
  channels: '/channel',
  redemptions: '/redemption',
  subscriptions: '/subscription',
  users: '/user',
  settings: '/setting',
};

let b: Browser;
const saved: string[] = [];

beforeAll(async () => {
  await ensureRootSetup();
  mkdirSync(SCREENS_DIR, { recursive: true });
  b = await launchBrowser();
});

afterAll(async () => {
  await b?.close();
});

async function useLook(page: Page, theme: string, lang: string) {
  await page.evaluate(
    ([t, l]) => {
      localStorage.setItem('theme-mode', t!);
      localStorage.setItem('i18nextLng', l!);
    },
    [theme, lang],
  );
}

/** The page has drawn its content and stopped spinning; quicker than waiting for the network to go quiet. */
async function settled(page: Page) {
  await page.waitForFunction(() => {
    const content = document.querySelector<HTMLElement>('.ant-layout-content');
    return !!content && content.innerText.trim().length > 0 && !document.querySelector('.ant-spin-spinning');
  });
  // antd's entrance transitions
  await page.waitForTimeout(150);
}

async function capture(page: Page, size: keyof typeof SIZES, pages: Record<string, string>) {
  {
    await page.setViewportSize(SIZES[size]);
    for (const theme of THEMES) {
      for (const lang of LANGUAGES) {
        await useLook(page, theme, lang);
        for (const [name, path] of Object.entries(pages)) {
          await page.goto(`${BASE_URL}${path}`);
          await settled(page);
          // the theme really applied (a wrong key would silently give light screenshots): antd's header background
          const header = await page.evaluate(() => getComputedStyle(document.querySelector('header')!).backgroundColor);
          expect(header, `${name} in ${theme}`).toBe(theme === 'dark' ? 'rgb(20, 20, 20)' : 'rgb(255, 255, 255)');
          const file = join(SCREENS_DIR, `${size}-${theme}-${lang}-${name}.png`);
          await page.screenshot({ path: file });
          saved.push(file);
        }
      }
    }
  }
}

describe('screenshots', () => {
  it('guest pages', async () => {
    await b.page.goto(`${BASE_URL}/`);
    for (const size of SIZE_NAMES) await capture(b.page, size, GUEST_PAGES);
  });

  for (const size of SIZE_NAMES) {
    it(`console pages as root, ${size}`, { timeout: 240_000 }, async () => {
      if (!(await b.page.evaluate(() => localStorage.getItem('user')))) await loginAsRoot(b.page);
      await capture(b.page, size, PAGES);
    });
  }

  it('saved one per page, look and size', () => {
    const looks = SIZE_NAMES.length * THEMES.length * LANGUAGES.length;
    expect(saved.length).toBe(looks * (Object.keys(GUEST_PAGES).length + Object.keys(PAGES).length));
  });
});
