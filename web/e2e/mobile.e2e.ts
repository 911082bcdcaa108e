// The console on a phone (390×844): every page is reached through the header's menu button and its drawer, and no
// page is wider than the screen. Root opens the wallet and the tokens page from the menu, creates a token and
// reaches its row actions, in the token's stacked cell.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { BASE_URL, ensureRootSetup, launchBrowser, loginAsRoot, shot, toast, type Browser } from './browser.js';

const PHONE = { width: 390, height: 844 };
let b: Browser;

beforeAll(async () => {
  await ensureRootSetup();
  b = await launchBrowser({ viewport: PHONE });
});

afterAll(async () => {
  await b?.close();
});

/** What makes a page unusable on a phone: the document wider than the screen, a card title cut short. */
async function layoutProblems(page: Page) {
  return page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clippedTitles: Array.from(document.querySelectorAll<HTMLElement>('.ant-card-head-title'))
      .filter((el) => el.scrollWidth > el.clientWidth + 1)
      .map((el) => el.textContent),
  }));
}

async function expectFits(page: Page, name: string) {
  // let lazy chunks, fonts and data settle before measuring
  await page.waitForLoadState('networkidle');
  const problems = await layoutProblems(page);
  await shot(page, `mobile-${name}`);
  expect(problems.scrollWidth, `${name}: document wider than the phone`).toBeLessThanOrEqual(PHONE.width);
  expect(problems.clippedTitles, `${name}: card titles cut`).toEqual([]);
}

/** Opens the header's menu and chooses an entry by its text. */
async function viaMenu(page: Page, entry: string) {
  await page.getByTestId('mobile-menu-button').click();
  const menu = page.getByTestId('mobile-menu');
  await menu.waitFor();
  await menu.getByText(entry, { exact: true }).click();
  await menu.waitFor({ state: 'hidden' });
}

const within = (box: { x: number; width: number } | null) => !!box && box.x >= 0 && box.x + box.width <= PHONE.width;

describe('console on a 390×844 phone', () => {
  it('guest pages fit, sign-up included, in both languages', async () => {
    const { page } = b;
    for (const lang of ['zh', 'en']) {
      await page.goto(`${BASE_URL}/`);
      await page.evaluate((l) => localStorage.setItem('i18nextLng', l), lang);
      await page.reload();
      const register = page.getByRole('button', { name: lang === 'en' ? 'Sign up' : /注\s*册/ });
      await register.waitFor();
      expect(within(await register.boundingBox()), 'sign-up button inside the screen').toBe(true);
      await expectFits(page, `home-${lang}`);
      await page.goto(`${BASE_URL}/login`);
      await page.locator('input#username').waitFor();
      await expectFits(page, `login-${lang}`);
    }
    await page.evaluate(() => localStorage.setItem('i18nextLng', 'zh'));
    // a guest's menu holds the site links
    await page.goto(`${BASE_URL}/`);
    await viaMenu(page, '模型价格');
    await page.waitForURL(/\/pricing$/);
  });

  it('root reaches the wallet and the tokens page through the menu and creates a token', async () => {
    const { page } = b;
    await loginAsRoot(page);
    await page.goto(`${BASE_URL}/`);
    await expect.poll(() => page.getByTestId('sidebar').count()).toBe(0);

    await viaMenu(page, '钱包');
    await page.waitForURL(/\/topup$/);
    await page.getByTestId('topup-page').waitFor();
    await expectFits(page, 'wallet');

    await viaMenu(page, 'API令牌');
    await page.waitForURL(/\/token$/);
    await page.getByTestId('token-page').waitFor();
    await page.getByTestId('token-add').click();
    const form = page.getByTestId('token-form');
    await form.locator('input[name=name]').fill('phone-token');
    await form.getByRole('button', { name: '永不过期' }).click();
    await page.getByTestId('token-submit').click();
    await toast(page, /令牌创建成功/);
    // the new key's dialog fits the phone's width
    await page.getByTestId('created-key').waitFor();
    await expectFits(page, 'created key dialog');
    await page.getByTestId('created-keys-close').click();
    await page.getByTestId('created-key').waitFor({ state: 'hidden' });
    const row = page.locator('tr', { hasText: 'phone-token' });
    await row.waitFor();
    await expectFits(page, 'tokens');

    // each token is one stacked cell on a phone (issue 46): its key and its actions are on the screen, no scrolling
    expect(within(await row.locator('[data-testid^=token-key-]').boundingBox()), 'key on screen').toBe(true);
    const edit = row.getByRole('button', { name: /编\s*辑/ });
    await edit.scrollIntoViewIfNeeded();
    expect(within(await edit.boundingBox()), 'edit button reachable').toBe(true);
    await edit.click();
    await expect.poll(() => form.locator('input[name=name]').inputValue()).toBe('phone-token');
    // the 560 px drawer is held to the screen's width once it has slid in
    const panel = page.locator('.ant-drawer-open .ant-drawer-content-wrapper');
    await expect.poll(async () => within(await panel.boundingBox()), { timeout: 3000 }).toBe(true);
    await shot(page, 'mobile-token-edit');
    await page.keyboard.press('Escape');
  });

  it('logs and the playground fit; the playground settings do not cover its title', async () => {
    const { page } = b;
    for (const lang of ['zh', 'en']) {
      await page.evaluate((l) => localStorage.setItem('i18nextLng', l), lang);
      await page.goto(`${BASE_URL}/log`);
      await page.getByTestId('log-page').waitFor();
      await expectFits(page, `logs-${lang}`);
    }
    await page.evaluate(() => localStorage.setItem('i18nextLng', 'zh'));
    await page.reload();

    await viaMenu(page, '操练场');
    await page.waitForURL(/\/playground$/);
    await page.getByTestId('playground-page').waitFor();
    await expectFits(page, 'playground');
    const title = await page.locator('[data-testid=playground-page] .ant-card-head-title').boundingBox();
    const toggle = page.getByTestId('playground-settings-toggle');
    const toggleBox = await toggle.boundingBox();
    expect(title && toggleBox).toBeTruthy();
    const overlaps =
      title!.x < toggleBox!.x + toggleBox!.width &&
      toggleBox!.x < title!.x + title!.width &&
      title!.y < toggleBox!.y + toggleBox!.height &&
      toggleBox!.y < title!.y + title!.height;
    expect(overlaps, 'settings toggle over the title').toBe(false);
    await toggle.click();
    await page.getByTestId('playground-model').waitFor();
    await shot(page, 'mobile-playground-settings');
    await page.keyboard.press('Escape');
    await page.getByTestId('playground-model').waitFor({ state: 'hidden' });
  });

  it('the admin pages fit, their tables scrolling inside the card, and keep their add button on screen', async () => {
    const { page } = b;
    for (const [entry, path, add] of [
      ['渠道', '/channel', /添加渠道/],
      ['兑换码管理', '/redemption', /添加兑换码/],
      ['订阅管理', '/subscription', /新建套餐/],
      ['用户管理', '/user', /添加用户/],
    ] as const) {
      await viaMenu(page, entry);
      await page.waitForURL(new RegExp(`${path}$`));
      await page.locator('.ant-table').first().waitFor();
      await expectFits(page, path.slice(1));
      expect(within(await page.getByRole('button', { name: add }).first().boundingBox()), `${path}: add`).toBe(true);
    }
  });

  it('/console leads to the dashboard', async () => {
    const { page } = b;
    await page.goto(`${BASE_URL}/console`);
    await page.waitForURL(/\/detail$/);
  });
});
