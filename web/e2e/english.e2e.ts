// The console in English end to end (issue 34): `<html lang="en">`, three server errors (wrong password, SMTP not
// configured, invalid redemption code) and a consume-log line shown in English although the server sends new-api's
// Chinese texts.
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

let b: Browser;

/** Console API write from inside the logged-in page. */
async function consolePost<T>(page: Page, path: string, body: unknown): Promise<{ success: boolean; data: T }> {
  return page.evaluate(
    async ([p, payload]) => {
      const user = JSON.parse(localStorage.getItem('user') ?? '{}') as { id?: number };
      const res = await fetch(p as string, {
        method: 'POST',
        headers: { 'New-Api-User': String(user.id ?? -1), 'Content-Type': 'application/json' },
        body: JSON.stringify(payload),
      });
      return (await res.json()) as { success: boolean; data: T };
    },
    [path, body] as const,
  );
}

async function logIn(page: Page, password: string): Promise<void> {
  await page.goto(`${BASE_URL}/login`);
  await page.locator('input#username').fill(ROOT_USERNAME);
  await page.locator('input#password').fill(password);
  await page.locator('form button[type=submit]').click();
}

beforeAll(async () => {
  await ensureRootSetup();
  b = await launchBrowser();
  // the language a visitor chose earlier: English
  await b.context.addInitScript(() => localStorage.setItem('i18nextLng', 'en'));
});

afterAll(async () => {
  await b?.close();
});

describe('the console in English', () => {
  it('marks the page as English', async () => {
    await b.page.goto(`${BASE_URL}/login`);
    await b.page.locator('input#username').waitFor();
    expect(await b.page.evaluate(() => document.documentElement.lang)).toBe('en');
  });

  it('shows a wrong password in English', async () => {
    await logIn(b.page, 'not-the-password');
    await toast(b.page, 'Wrong username or password, or the user is banned');
    await shot(b.page, 'english-01-wrong-password');
  });

  it('shows "SMTP not configured" in English on the password reset page', async () => {
    await b.page.goto(`${BASE_URL}/reset`);
    await b.page.locator('form input').first().fill('someone@example.com');
    await b.page.locator('form button[type=submit]').click();
    await toast(b.page, 'The SMTP server is not configured');
  });

  it('shows an invalid redemption code and the top-up log line in English', async () => {
    const page = b.page;
    await logIn(page, ROOT_PASSWORD);
    await page.waitForURL(/\/token$/, { timeout: 15_000 });
    await page.goto(`${BASE_URL}/topup`);
    await page.getByTestId('redeem-code').fill('no-such-code-e2e');
    await page.getByTestId('redeem-submit').click();
    await toast(page, 'Invalid redemption code');
    await shot(page, 'english-02-invalid-code');

    const created = await consolePost<string[]>(page, '/api/redemption/', {
      name: 'e2e-en',
      quota: 500000,
      count: 1,
    });
    expect(created.success).toBe(true);
    expect((await consolePost(page, '/api/user/topup', { key: created.data[0] })).success).toBe(true);
    await page.goto(`${BASE_URL}/log`);
    await page
      .getByText(/Topped up .+ with a redemption code, code ID \d+/)
      .first()
      .waitFor();
    expect(await page.getByText('通过兑换码充值').count()).toBe(0);
    await shot(page, 'english-03-log');
    expect(b.pageErrors).toEqual([]);
  });
});
