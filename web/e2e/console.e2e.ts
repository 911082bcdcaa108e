// Console walk-through on a fresh server: setup redirect → setup wizard → login → personal page → users page
// (add a user, disable it) → theme and language switches → logout. Runs first (see vitest.e2e.config.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BASE_URL,
  ROOT_PASSWORD,
  ROOT_USERNAME,
  launchBrowser,
  loginAsRoot,
  logOutFromAvatarMenu,
  shot,
  type Browser,
} from './browser.js';

let b: Browser;

beforeAll(async () => {
  b = await launchBrowser();
});

afterAll(async () => {
  await b?.close();
});

describe('console', () => {
  it('redirects every route to /setup before setup and completes the wizard', async () => {
    const { page } = b;
    await page.goto(`${BASE_URL}/login`);
    await page.waitForURL(/\/setup$/);
    await page.getByTestId('setup-card').waitFor();
    // SQLite warning and the default usage mode.
    await page.getByText('数据库警告').waitFor();
    expect(await page.locator('input[type=radio][value=external]').isChecked()).toBe(true);

    // Validation texts.
    await page.locator('input#password').fill('short');
    await page.locator('input#confirmPassword').fill('other');
    await page.locator('button[type=submit]').click();
    await page.getByText('请输入管理员用户名').first().waitFor();
    await page.getByText('密码长度至少为8个字符').waitFor();
    await page.getByText('两次输入的密码不一致').waitFor();

    // Usage-mode help dialog.
    await page.getByRole('button', { name: '使用模式说明' }).click();
    await page.getByText('自用模式：适用于个人使用的场景。').waitFor();
    await shot(page, '01-setup');
    await page.keyboard.press('Escape');

    await page.locator('input#username').fill(ROOT_USERNAME);
    await page.locator('input#password').fill(ROOT_PASSWORD);
    await page.locator('input#confirmPassword').fill(ROOT_PASSWORD);
    await page.locator('button[type=submit]').click();
    await page.getByText('系统初始化成功，正在跳转...').waitFor();
    // The page reloads after 1.5 s and, now set up, leaves /setup for the home page.
    await page.waitForURL((u) => u.pathname === '/', { timeout: 15_000 });
    const status = (await (await fetch(`${BASE_URL}/api/status`)).json()) as { data: { setup: boolean } };
    expect(status.data.setup).toBe(true);
    // /setup now goes home.
    await page.goto(`${BASE_URL}/setup`);
    await page.waitForURL((u) => u.pathname === '/');
  });

  it('guards pages, validates and logs in as root', async () => {
    const { page } = b;
    await page.goto(`${BASE_URL}/personal`);
    await page.waitForURL(/\/login$/);
    await page.goto(`${BASE_URL}/login?expired=true`);
    await page.getByText('未登录或登录已过期，请重新登录').waitFor();
    await page.locator('form button[type=submit]').click();
    await page.getByText('请输入用户名和密码！').waitFor();
    await shot(page, '02-login');
    await loginAsRoot(page);
    const stored = await page.evaluate(
      () => JSON.parse(localStorage.getItem('user') ?? 'null') as { role: number } | null,
    );
    expect(stored?.role).toBe(100);
  });

  it('shows the personal page with balance and invite link', async () => {
    const { page } = b;
    await page.getByTestId('sidebar').getByText('个人设置').click();
    await page.waitForURL(/\/personal$/);
    await page.getByTestId('personal-page').waitFor();
    // Root starts with 100000000 quota = $200.00 at the default 500000 per unit.
    await page.getByTestId('balance').getByText('$200.00').waitFor();
    await expect
      .poll(() => page.locator('input[data-testid=invite-link], [data-testid=invite-link] input').first().inputValue())
      .toMatch(/\/register\?aff=\w+/);
    await shot(page, '03-personal');
  });

  it('adds a user and disables it on the users page', async () => {
    const { page } = b;
    await page.getByTestId('sidebar').getByText('用户管理').click();
    await page.waitForURL(/\/user$/);
    await page.getByTestId('users-page').waitFor();
    await page.getByTestId('add-user').click();
    await page.getByTestId('add-user-submit').click();
    await page.getByText('用户名和密码不能为空！').waitFor();
    await page.getByPlaceholder('请输入用户名').fill('e2e_user');
    await page.getByPlaceholder('请输入显示名称').fill('E2E 用户');
    await page.getByPlaceholder('请输入密码').fill('e2e_password');
    await page.getByTestId('add-user-submit').click();
    await page.getByText('用户账户创建成功！').waitFor();
    const row = page.locator('tr', { hasText: 'e2e_user' });
    await row.waitFor();
    await row.getByText('已激活').waitFor();
    await row.getByRole('button', { name: /禁\s*用/ }).click();
    await page.getByText('操作成功完成！').first().waitFor();
    await row.getByText('已封禁').waitFor();
    // The root row offers no actions on itself (peer/superior rule).
    const rootRow = page.locator('tr', { hasText: '超级管理员' });
    expect(await rootRow.getByRole('button').count()).toBe(0);
    await shot(page, '04-users');

    const list = (await page.evaluate(async () => {
      const id = (JSON.parse(localStorage.getItem('user') ?? '{}') as { id: number }).id;
      const res = await fetch('/api/user/search?keyword=e2e_user', { headers: { 'New-Api-User': String(id) } });
      return res.json();
    })) as { data: { items: { username: string; status: number }[] } };
    expect(list.data.items.find((u) => u.username === 'e2e_user')?.status).toBe(2);
  });

  it('switches theme and language', async () => {
    const { page } = b;
    await page.getByTestId('theme-switch').click();
    expect(await page.evaluate(() => localStorage.getItem('theme-mode'))).toBe('dark');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await shot(page, '05-users-dark');

    await page.getByTestId('language-menu').hover();
    await page.getByRole('menuitem', { name: 'English' }).click();
    await page.getByTestId('sidebar').getByText('Users').waitFor();
    await page.getByText('Manage users').waitFor();
    expect(await page.evaluate(() => localStorage.getItem('i18nextLng'))).toBe('en');
    await shot(page, '06-users-dark-en');

    // Both choices survive a reload.
    await page.reload();
    await page.getByText('Manage users').waitFor();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');

    await page.getByTestId('language-menu').hover();
    await page.getByRole('menuitem', { name: '简体中文' }).click();
    // exact: the sidebar group text ('兑换码管理用户管理') contains the words too.
    await page.getByText('管理用户', { exact: true }).waitFor();
    await page.getByTestId('theme-switch').click();
    expect(await page.evaluate(() => localStorage.getItem('theme-mode'))).toBe('light');
  });

  it('logs out from the avatar menu', async () => {
    const { page } = b;
    await logOutFromAvatarMenu(page);
    expect(await page.evaluate(() => localStorage.getItem('user'))).toBeNull();
    const self = await page.evaluate(
      async () => (await fetch('/api/user/self', { headers: { 'New-Api-User': '1' } })).status,
    );
    expect(self).toBe(401);
    expect(b.pageErrors).toEqual([]);
  });
});
