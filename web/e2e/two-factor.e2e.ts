// Two-factor sign-in in a real browser: a new user enables it from personal settings (the code is computed here from
// the secret the page shows, as an authenticator app would), logs out, logs in with the password, enters a code and
// lands on /token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from 'otplib';
import {
  BASE_URL,
  ensureRootSetup,
  launchBrowser,
  loginAs,
  logOutFromAvatarMenu,
  shot,
  toast,
  type Browser,
} from './browser.js';

const USERNAME = `tfa${Date.now() % 100000}`;
const PASSWORD = 'twofactor-pass1';
const PERIOD_MS = 30_000;

let b: Browser;
let secret = '';

/** A code for the next time step when the current one has already been used (the server refuses a replay). */
async function freshCode(after?: string): Promise<string> {
  for (;;) {
    const code = await generate({ secret });
    if (code !== after) return code;
    await new Promise((r) => setTimeout(r, PERIOD_MS - (Date.now() % PERIOD_MS) + 200));
  }
}

beforeAll(async () => {
  await ensureRootSetup();
  const res = await fetch(`${BASE_URL}/api/user/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: USERNAME, password: PASSWORD, password2: PASSWORD }),
  });
  expect(((await res.json()) as { success: boolean }).success).toBe(true);
  b = await launchBrowser();
});

afterAll(async () => {
  await b?.close();
});

describe('two-factor sign-in', () => {
  let enableCode = '';

  it('enables two-factor from personal settings with the QR code, the secret and a first code', async () => {
    const { page } = b;
    await loginAs(page, USERNAME, PASSWORD);
    await page.goto(`${BASE_URL}/personal`);
    const card = page.getByTestId('twofa-card');
    await expect(card.getByTestId('twofa-state').textContent()).resolves.toBe('未启用');
    await card.getByTestId('twofa-enable').click();
    await page.getByTestId('twofa-qrcode').waitFor();
    secret = ((await page.getByTestId('twofa-secret').textContent()) ?? '').trim();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(await page.getByTestId('backup-codes').locator('code').count()).toBe(10);
    await shot(page, 'two-factor-setup');
    enableCode = await freshCode();
    await page.getByTestId('twofa-first-code').fill(enableCode);
    await page.getByTestId('twofa-first-code').press('Enter');
    await toast(page, '两步验证启用成功');
    await expect.poll(() => card.getByTestId('twofa-state').textContent()).toBe('已启用');
    expect(b.pageErrors).toEqual([]);
  });

  it('logs out, then logs in with the password and a code, landing on /token', async () => {
    const { page } = b;
    await logOutFromAvatarMenu(page);

    await page.locator('input#username').fill(USERNAME);
    await page.locator('input#password').fill(PASSWORD);
    await page.locator('form button[type=submit]').click();
    const input = page.getByTestId('login-2fa-code');
    await input.waitFor();
    // the password alone started no session
    expect(await page.evaluate(() => localStorage.getItem('user'))).toBeNull();
    await shot(page, 'two-factor-login-step');
    await input.fill(await freshCode(enableCode));
    await page.getByTestId('login-2fa-submit').click();
    await page.waitForURL(/\/token$/, { timeout: 15_000 });
    const self = await page.evaluate(async () => {
      const user = JSON.parse(localStorage.getItem('user') ?? '{}') as { id?: number };
      const res = await fetch('/api/user/self', { headers: { 'New-Api-User': String(user.id ?? -1) } });
      return (await res.json()) as { data?: { username?: string } };
    });
    expect(self.data?.username).toBe(USERNAME);
    expect(b.pageErrors).toEqual([]);
  });
});
