// Public pricing page, logged out: a channel (created here through the root API session when the run has none)
// makes its models appear; guest banner, prices per 1M tokens, search, group switching with its notice, copy, the
// ratio help, and theme-aware toasts in light and dark. Then the logged-in banner for root.
// Runs after console.e2e.ts (setup done, root exists) and before relay.e2e.ts; it removes the channel it created
// and restores GroupRatio, so the relay spec starts from the same state.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { BASE_URL, launchBrowser, loginAsRoot, shot, type Browser, ensureRootSetup } from './browser.js';

const CHANNEL_NAME = 'e2e-pricing';
// Default prices (server/src/services/pricing/defaults.ts): gpt-3.5-turbo ratio 0.25, completion ratio 3;
// claude-3-haiku-20240307 ratio 0.125; mj_imagine a fixed price of $0.1 per call.
const MODELS = ['claude-3-haiku-20240307', 'mj_imagine', 'gpt-3.5-turbo'];
const GROUP_RATIO = { default: 1, vip: 2, svip: 1 };

let b: Browser;
let createdChannel = 0;
let originalGroupRatio: string | null = null;

interface Envelope<T> {
  success: boolean;
  message: string;
  data: T;
}

/** Console API call from inside the page with the root session (cookie + New-Api-User). */
async function rootApi<T>(page: Page, method: string, path: string, body?: unknown): Promise<Envelope<T>> {
  return page.evaluate(
    async ({ method, path, body }) => {
      const user = JSON.parse(localStorage.getItem('user') ?? '{}') as { id?: number };
      const res = await fetch(path, {
        method,
        headers: { 'New-Api-User': String(user.id ?? -1), 'Content-Type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return (await res.json()) as Envelope<unknown>;
    },
    { method, path, body },
  ) as Promise<Envelope<T>>;
}

async function loggedIn(page: Page): Promise<boolean> {
  return page.evaluate(() => localStorage.getItem('user') !== null).catch(() => false);
}

/** Logs out from the login page: a logged-in page left open would get 401s from its background queries once the
 * session is gone and redirect to /login?expired=true, aborting the spec's next page.goto. */
async function logout(page: Page): Promise<void> {
  await page.goto(`${BASE_URL}/login`);
  await page.evaluate(async () => {
    await fetch('/api/user/logout');
    localStorage.removeItem('user');
  });
}

/** The background of the visible toast's card (the nearest painted ancestor of its text), to tell a themed toast
 * from antd's static one, which is always light. */
async function toastBackground(page: Page, text: string): Promise<string> {
  const label = page.locator('.ant-message').getByText(text).first();
  await label.waitFor();
  return label.evaluate((node) => {
    for (let el: Element | null = node; el; el = el.parentElement) {
      const bg = getComputedStyle(el).backgroundColor;
      if (bg && bg !== 'rgba(0, 0, 0, 0)' && bg !== 'transparent') return bg;
    }
    return 'none';
  });
}

beforeAll(async () => {
  await ensureRootSetup();
  b = await launchBrowser();
  await b.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE_URL });
  const { page } = b;
  await loginAsRoot(page);
  const options = await rootApi<{ key: string; value: string }[]>(page, 'GET', '/api/option/');
  originalGroupRatio = options.data.find((o) => o.key === 'GroupRatio')?.value ?? null;
  const set = await rootApi(page, 'PUT', '/api/option/', { key: 'GroupRatio', value: JSON.stringify(GROUP_RATIO) });
  expect(set.success).toBe(true);
  const created = await rootApi<{ id: number }>(page, 'POST', '/api/channel/', {
    mode: 'single',
    channel: {
      name: CHANNEL_NAME,
      type: 1,
      key: 'sk-e2e-pricing',
      base_url: 'http://127.0.0.1:9',
      models: MODELS.join(','),
      group: 'default,vip',
    },
  });
  expect(created.success, created.message).toBe(true);
  createdChannel = created.data.id;
  await logout(page);
});

afterAll(async () => {
  if (b && (createdChannel || originalGroupRatio !== null)) {
    const { page } = b;
    if (!(await loggedIn(page))) await loginAsRoot(page);
    if (createdChannel) {
      const removed = await rootApi(page, 'DELETE', `/api/channel/${createdChannel}`);
      expect(removed, removed.message).toMatchObject({ success: true });
    }
    if (originalGroupRatio !== null)
      await rootApi(page, 'PUT', '/api/option/', { key: 'GroupRatio', value: originalGroupRatio });
  }
  await b?.close();
});

describe('pricing page', () => {
  it('shows the models of the channel to a guest with the default group prices', async () => {
    const { page } = b;
    await page.goto(`${BASE_URL}/pricing`);
    await page.getByTestId('pricing-page').waitFor();
    expect(new URL(page.url()).pathname).toBe('/pricing');
    await page.getByTestId('pricing-guest-banner').getByText('您还未登陆，显示的价格为默认分组倍率: 1').waitFor();
    await page
      .getByTestId('pricing-formula')
      .getByText(/按量计费费用 = 分组倍率 × 模型倍率/)
      .waitFor();
    await page.getByTestId('model-gpt-3.5-turbo').waitFor();
    // gpt first, then per-token before per-call.
    const order = await page.locator('[data-testid^="model-"]').allTextContents();
    expect(order).toEqual(['gpt-3.5-turbo', 'claude-3-haiku-20240307', 'mj_imagine']);
    expect(await page.getByTestId('price-gpt-3.5-turbo').innerText()).toBe(
      '提示 $0.5 / 1M tokens\n补全 $1.5 / 1M tokens',
    );
    expect(await page.getByTestId('price-mj_imagine').innerText()).toBe('模型价格：$0.1');
    expect(await page.getByTestId('ratio-mj_imagine').innerText()).toBe('模型倍率：无\n补全倍率：无\n分组倍率：1');
    await page.getByTestId('available-gpt-3.5-turbo').waitFor();
    // The ratio help.
    await page.locator('thead').getByTestId('ratio-help-icon').hover();
    await page.getByTestId('ratio-help').getByText('倍率是为了方便换算不同价格的模型。').waitFor();
    await page.waitForTimeout(400); // let the popover finish fading in for the screenshot
    await shot(page, 'pricing-01-guest');
    await page.mouse.move(0, 0);
  });

  it('searches, copies and switches the viewed group (light toast)', async () => {
    const { page } = b;
    const search = page.getByTestId('pricing-search');
    await search.fill('HAIKU');
    await expect
      .poll(() => page.locator('[data-testid^="model-"]').allTextContents())
      .toEqual(['claude-3-haiku-20240307']);
    await search.fill('');
    await expect.poll(() => page.locator('[data-testid^="model-"]').count()).toBe(3);

    await page.getByTestId('model-gpt-3.5-turbo').click();
    await page.locator('.ant-message').getByText('已复制：gpt-3.5-turbo').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe('gpt-3.5-turbo');

    const copySelected = page.getByTestId('pricing-copy-selected');
    expect(await copySelected.isDisabled()).toBe(true);
    for (const m of ['gpt-3.5-turbo', 'mj_imagine']) {
      await page
        .locator('tr', { has: page.getByTestId(`model-${m}`) })
        .locator('input[type=checkbox]')
        .check();
    }
    await copySelected.click();
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe('gpt-3.5-turbo,mj_imagine');

    await page.getByTestId('group-gpt-3.5-turbo-vip').click();
    expect(await toastBackground(page, '当前查看的分组为：vip，倍率为：2')).toBe('rgb(255, 255, 255)');
    expect(await page.getByTestId('price-gpt-3.5-turbo').innerText()).toBe('提示 $1 / 1M tokens\n补全 $3 / 1M tokens');
    expect(await page.getByTestId('price-mj_imagine').innerText()).toBe('模型价格：$0.2');
  });

  it('renders the page and its toasts in the dark theme', async () => {
    const { page } = b;
    await page.getByTestId('theme-switch').click();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await page.getByTestId('group-gpt-3.5-turbo-default').click();
    // antd's dark algorithm: colorBgElevated #1f1f1f. The static message would stay white.
    expect(await toastBackground(page, '当前查看的分组为：default，倍率为：1')).toBe('rgb(31, 31, 31)');
    expect(await page.getByTestId('price-gpt-3.5-turbo').innerText()).toBe(
      '提示 $0.5 / 1M tokens\n补全 $1.5 / 1M tokens',
    );
    await shot(page, 'pricing-02-dark');
    await page.getByTestId('theme-switch').click();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('light');
  });

  it('shows the default group banner to a logged-in user', async () => {
    const { page } = b;
    await loginAsRoot(page);
    await page.goto(`${BASE_URL}/pricing`);
    await page.getByTestId('pricing-user-banner').getByText('您的默认分组为：default，分组倍率为：1').waitFor();
    await page.getByTestId('model-gpt-3.5-turbo').waitFor();
    expect(b.pageErrors).toEqual([]);
  });
});
