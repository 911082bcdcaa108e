// Issue 46 point 12 on a real browser: on a 390 px phone the token list shows each token's status, quota, key and
// actions (the wide table showed only the name and the actions) and the settings' tab bar does not overflow; on a
// 1280 px desktop the sidebar stays in view while a long page (the system settings) scrolls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { BASE_URL, ensureRootSetup, launchBrowser, loginAsRoot, shot, type Browser } from './browser.js';

const PHONE = { width: 390, height: 844 };
let b: Browser;

beforeAll(async () => {
  await ensureRootSetup();
  b = await launchBrowser({ viewport: { width: 1280, height: 800 } });
  await loginAsRoot(b.page);
});

afterAll(async () => {
  await b?.close();
});

const onScreen = async (page: Page, selector: string) => {
  const r = await page.locator(selector).first().boundingBox();
  const { width, height } = page.viewportSize()!;
  return !!r && r.x >= 0 && r.x + r.width <= width && r.y >= 0 && r.y + r.height <= height;
};

describe('phone and desktop layout', () => {
  it('phone: a token shows its status, quota, key and actions on the screen', async () => {
    const { page } = b;
    await page.setViewportSize(PHONE);
    const created = await page.evaluate(async () => {
      const user = JSON.parse(localStorage.getItem('user') ?? '{}') as { id?: number };
      const res = await fetch('/api/token/', {
        method: 'POST',
        headers: { 'New-Api-User': String(user.id ?? -1), 'Content-Type': 'application/json' },
        body: JSON.stringify({ name: 'phone-layout', remain_quota: 1250000, expired_time: -1, unlimited_quota: false }),
      });
      return (await res.json()) as { success: boolean };
    });
    expect(created.success).toBe(true);
    await page.goto(`${BASE_URL}/token`);
    const card = page.locator('[data-testid^=token-card-]', { hasText: 'phone-layout' });
    await card.waitFor();
    const text = await card.textContent();
    expect(text).toContain('$2.50');
    expect(text).toMatch(/已启用/);
    for (const part of ['[data-testid^=token-key-]', '[data-testid^=token-edit-]', '[data-testid^=token-delete-]']) {
      const r = await card.locator(part).boundingBox();
      expect(r && r.x >= 0 && r.x + r.width <= PHONE.width, part).toBe(true);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await shot(page, 'phone-layout-tokens');
  });

  it('phone: the settings tabs are a picker and nothing is wider than the screen', async () => {
    const { page } = b;
    await page.setViewportSize(PHONE);
    await page.goto(`${BASE_URL}/setting?tab=system`);
    await page.getByTestId('setting-tab-select').waitFor();
    await page.getByTestId('section-smtp').waitFor();
    expect(await page.locator('.ant-tabs-nav').count()).toBe(0);
    expect(await onScreen(page, '[data-testid=setting-tab-select]')).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
    await shot(page, 'phone-layout-settings');
    // the picker changes the tab
    await page.getByTestId('setting-tab-select').click();
    await page.locator('.ant-select-item-option', { hasText: '其他设置' }).click();
    await page.waitForURL(/tab=other/);
    await page.getByTestId('section-branding').waitFor();
  });

  it('desktop: the sidebar stays in view at the bottom of a long settings tab, whose contents lead to a section', async () => {
    const { page } = b;
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.goto(`${BASE_URL}/setting?tab=system`);
    await page.getByTestId('section-turnstile').waitFor();
    const contents = page.getByTestId('setting-contents');
    await contents.getByText('配置 Turnstile').click();
    await expect.poll(() => onScreen(page, '[data-testid=section-turnstile] .ant-card-head')).toBe(true);
    expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(1000);
    // the sidebar's menu and the contents are still on the screen
    expect(await onScreen(page, '[data-testid=sidebar] .ant-menu-item-selected')).toBe(true);
    expect(await onScreen(page, '[data-testid=setting-contents] .ant-anchor')).toBe(true);
    await shot(page, 'phone-layout-desktop-sidebar');
  });
});
