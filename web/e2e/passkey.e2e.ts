// Passkeys in a real Chromium with a virtual authenticator (DevTools WebAuthn domain): root switches passkeys on,
// adds one in personal settings, signs out, signs in with it from the login page without typing a name, and removes
// it. WebAuthn refuses IP addresses as relying parties, so the console is opened at localhost, which ServerAddress
// names for the time of the spec (restored afterwards). Sets up root itself when run alone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { BASE_URL, ROOT_PASSWORD, ROOT_USERNAME, launchBrowser, shot, toast, type Browser } from './browser.js';

const LOCAL_URL = BASE_URL.replace('127.0.0.1', 'localhost');

let b: Browser;
let savedServerAddress = '';

/** PUT /api/option/ from inside the logged-in page. */
async function setOption(page: Page, key: string, value: string): Promise<void> {
  const res = await page.evaluate(
    async ([k, v]) => {
      const user = JSON.parse(localStorage.getItem('user') ?? '{}') as { id?: number };
      const r = await fetch('/api/option/', {
        method: 'PUT',
        headers: { 'Content-Type': 'application/json', 'New-Api-User': String(user.id ?? -1) },
        body: JSON.stringify({ key: k, value: v }),
      });
      return (await r.json()) as { success: boolean; message: string };
    },
    [key, value] as const,
  );
  expect(res, `${key}: ${res.message}`).toMatchObject({ success: true });
}

async function ensureSetup(): Promise<void> {
  const status = (await (await fetch(`${BASE_URL}/api/setup`)).json()) as { data: { status: boolean } };
  if (status.data.status) return;
  const res = await fetch(`${BASE_URL}/api/setup`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      username: ROOT_USERNAME,
      password: ROOT_PASSWORD,
      confirmPassword: ROOT_PASSWORD,
      SelfUseModeEnabled: false,
      DemoSiteEnabled: false,
    }),
  });
  expect(((await res.json()) as { success: boolean }).success).toBe(true);
}

beforeAll(async () => {
  await ensureSetup();
  b = await launchBrowser();
  const cdp = await b.context.newCDPSession(b.page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
});

afterAll(async () => {
  if (b) {
    await setOption(b.page, 'passkey.enabled', 'false').catch(() => undefined);
    if (savedServerAddress) await setOption(b.page, 'ServerAddress', savedServerAddress).catch(() => undefined);
    await b.close();
  }
});

/** The password login at localhost, so that the session cookie belongs to the passkey's site. */
async function signInWithPassword(page: Page): Promise<void> {
  await page.goto(`${LOCAL_URL}/login`);
  await page.locator('input#username').fill(ROOT_USERNAME);
  await page.locator('input#password').fill(ROOT_PASSWORD);
  await page.locator('form button[type=submit]').click();
  await page.waitForURL(/\/token$/, { timeout: 15_000 });
}

describe('passkeys', () => {
  it('adds a passkey, signs in with it without a user name, and removes it', async () => {
    const page = b.page;
    await signInWithPassword(page);
    savedServerAddress = await page.evaluate(async () => {
      const res = await fetch('/api/status');
      return ((await res.json()) as { data: { server_address: string } }).data.server_address;
    });
    await setOption(page, 'ServerAddress', LOCAL_URL);
    await setOption(page, 'passkey.enabled', 'true');

    await page.goto(`${LOCAL_URL}/personal`);
    const card = page.getByTestId('passkey-card');
    await card.waitFor();
    await page.getByTestId('passkey-name').fill('E2E key');
    await page.getByTestId('passkey-add').click();
    await toast(page, 'Passkey 注册成功');
    await card.getByText('E2E key').waitFor();
    await expect(card.getByText('从未使用').count()).resolves.toBe(1);
    await shot(page, 'passkey-card');

    // sign out: the session ends; the authenticator keeps the passkey
    await page.evaluate(async () => {
      await fetch('/api/user/logout');
      localStorage.removeItem('user');
    });
    await page.goto(`${LOCAL_URL}/login`);
    await page.getByTestId('passkey-login').click();
    await page.waitForURL(/\/token$/, { timeout: 15_000 });
    const me = await page.evaluate(async () => {
      const user = JSON.parse(localStorage.getItem('user') ?? '{}') as { id?: number };
      const res = await fetch('/api/user/self', { headers: { 'New-Api-User': String(user.id ?? -1) } });
      return ((await res.json()) as { data: { username: string } }).data.username;
    });
    expect(me).toBe(ROOT_USERNAME);

    await page.goto(`${LOCAL_URL}/personal`);
    await card.getByText('E2E key').waitFor();
    await expect(card.getByText('从未使用').count()).resolves.toBe(0);
    await card.locator('[data-testid^="passkey-remove-"]').first().click();
    await page.getByTestId('passkey-remove-confirm').click();
    await toast(page, 'Passkey 已删除');
    await card.getByText('尚未添加 Passkey').waitFor();
    expect(b.pageErrors).toEqual([]);
  });
});
