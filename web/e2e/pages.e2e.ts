// Issue 34 pages in Chromium: the announcement after login (shown once, then remembered; also on the dashboard) and a
// chat link opened from the sidebar with the user's key in the iframe. Options are set as root through the API and
// restored afterwards.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { BASE_URL, consoleCall, ensureRootSetup, launchBrowser, loginAsRoot, shot, type Browser } from './browser.js';

let b: Browser;
const original: Record<string, string> = {};
let tokenId = 0;

/** Console API call from inside the logged-in page. */
const call = consoleCall;

async function setOption(page: Page, key: string, value: string): Promise<void> {
  const res = await call<{ success: boolean; message: string }>(page, 'PUT', '/api/option/', { key, value });
  expect(res, `saving ${key}: ${res.message}`).toMatchObject({ success: true });
}

beforeAll(async () => {
  await ensureRootSetup();
  b = await launchBrowser();
  await loginAsRoot(b.page);
  const options = await call<{ data: Array<{ key: string; value: string }> }>(b.page, 'GET', '/api/option/');
  for (const o of options.data) if (o.key === 'Notice' || o.key === 'Chats') original[o.key] = o.value;
});

afterAll(async () => {
  if (b) {
    for (const [key, value] of Object.entries(original)) await setOption(b.page, key, value);
    if (tokenId) await call(b.page, 'DELETE', `/api/token/${tokenId}`);
    await b.close();
  }
});

describe('announcement', () => {
  it('shows after login once, is remembered when closed, and stays on the dashboard', async () => {
    const { page } = b;
    const text = `E2E 公告 ${Date.now()}`;
    await setOption(page, 'Notice', `**${text}**`);
    // sign in again: the announcement greets the user on the page they land on. Leave the tokens page first: once
    // the session ends, its next refresh would answer 401 and send the page to /login?expired while we log in
    await page.goto(`${BASE_URL}/about`);
    await call(page, 'GET', '/api/user/logout');
    await page.evaluate(() => localStorage.removeItem('user'));
    await loginAsRoot(page);
    const dialog = page.locator('.ant-modal').filter({ hasText: '系统公告' });
    await dialog.getByText(text).waitFor();
    await shot(page, 'pages-01-notice');
    await dialog.getByRole('button', { name: '关闭公告' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.evaluate(() => localStorage.getItem('notice'))).toBe(`**${text}**`);

    await page.reload();
    await page.getByTestId('sidebar').waitFor();
    await page.waitForTimeout(1000);
    expect(await page.locator('.ant-modal').filter({ hasText: '系统公告' }).count()).toBe(0);

    await page.goto(`${BASE_URL}/detail`);
    await page.getByTestId('overview-notice').getByText(text).waitFor();
    await page.getByTestId('overview-base-url').waitFor();
    expect(await page.getByTestId('overview-base-url').textContent()).toMatch(/\/v1$/);
    await shot(page, 'pages-02-dashboard');
  });
});

describe('chat links', () => {
  it('opens a saved chat link from the sidebar with the user key filled in', async () => {
    const { page } = b;
    const created = await call<{ success: boolean; message: string }>(page, 'POST', '/api/token/', {
      name: 'e2e-chat',
      remain_quota: 0,
      unlimited_quota: true,
      expired_time: -1,
    });
    expect(created).toMatchObject({ success: true });
    const list = await call<{ data: Array<{ id: number; key: string; name: string }> }>(
      page,
      'GET',
      '/api/token/?p=0&size=100',
    );
    const token = list.data.find((t) => t.name === 'e2e-chat')!;
    tokenId = token.id;
    // the target is this server's not-found page: harmless, and its address is what the test reads
    await setOption(page, 'Chats', JSON.stringify([{ 'E2E Chat': `${BASE_URL}/e2e-chat?key={key}&url={address}` }]));

    await page.goto(`${BASE_URL}/token`);
    await page.getByTestId('sidebar').getByText('E2E Chat').click();
    await page.waitForURL(/\/chat\/0$/);
    const frame = page.getByTestId('chat-frame');
    await expect
      .poll(async () => frame.getAttribute('src'), { timeout: 10_000 })
      .toContain(`${BASE_URL}/e2e-chat?key=sk-${token.key}`);
    // {address} is ServerAddress when set (new-api's default is http://localhost:3000), else the page's origin
    const status = await call<{ data: { server_address?: string } }>(page, 'GET', '/api/status');
    const address = (status.data.server_address || BASE_URL).replace(/\/+$/, '');
    expect(await frame.getAttribute('src')).toContain(`url=${encodeURIComponent(address)}`);
    await page.frameLocator('[data-testid=chat-frame]').getByText('页面不存在').waitFor();
    await shot(page, 'pages-03-chat');

    // a link index that does not exist says so
    await page.goto(`${BASE_URL}/chat/3`);
    await page.getByText('请联系管理员配置聊天链接').waitFor();
    expect(b.pageErrors).toEqual([]);
  });
});
