// Shared helpers for the e2e specs: Chromium launch, screenshots, root login.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const BASE_URL = process.env.E2E_BASE_URL ?? 'http://127.0.0.1:3000';
export const ROOT_USERNAME = 'root';
export const ROOT_PASSWORD = '12345678';
export const RESULTS_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'test-results');

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Errors thrown in the page (uncaught exceptions); specs assert this stays empty. */
  pageErrors: string[];
  close(): Promise<void>;
}

export interface LaunchOptions {
  /** Window size; desktop by default. The phone specs use 390×844. */
  viewport?: { width: number; height: number };
}

export async function launchBrowser({ viewport = { width: 1366, height: 860 } }: LaunchOptions = {}): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'gw-e2e-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    viewport,
    // The console picks its language from the browser when none is stored; the specs expect Chinese first.
    locale: 'zh-CN',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors: string[] = [];
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (e) => pageErrors.push(e.message));
  return {
    context,
    page,
    pageErrors,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  await page.screenshot({ path: join(RESULTS_DIR, `${name}.png`), fullPage: false });
}

/** Logs in through the login page and waits for the redirect to /token. */
export async function loginAs(page: Page, username: string, password: string): Promise<void> {
  await page.goto(`${BASE_URL}/login`);
  await page.locator('input#username').fill(username);
  await page.locator('input#password').fill(password);
  await page.locator('form button[type=submit]').click();
  await page.waitForURL(/\/token$/, { timeout: 15_000 });
}

export function loginAsRoot(page: Page): Promise<void> {
  return loginAs(page, ROOT_USERNAME, ROOT_PASSWORD);
}

/**
 * Logs out from the header's avatar menu (a hover menu) and waits for /login. A hover menu can close between the
 * hover and the click on a loaded machine, so the menu is opened again when the page has not left after a try.
 */
export async function logOutFromAvatarMenu(page: Page, logoutLabel = '退出'): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    await page.getByTestId('avatar-menu').hover();
    const item = page.getByRole('menuitem', { name: logoutLabel });
    await item.waitFor({ state: 'visible' });
    await item.click();
    try {
      await page.waitForURL(/\/login$/, { timeout: 10_000 });
      return;
    } catch (e) {
      // the click took (the avatar is gone) and the logout call is slow: keep waiting rather than clicking again
      if (!(await page.getByTestId('avatar-menu').isVisible())) return page.waitForURL(/\/login$/);
      if (attempt === 3) throw e;
      await page.mouse.move(0, 0);
    }
  }
}

/** Waits for a toast; on timeout the error names the toasts that did show, which is what one needs to debug. */
export async function toast(page: Page, text: string | RegExp, timeout = 10_000): Promise<void> {
  try {
    await page.locator('.ant-message').getByText(text).first().waitFor({ timeout });
  } catch (e) {
    const shown = await page.locator('.ant-message-notice').allTextContents();
    throw new Error(
      `toast ${String(text)} not shown; visible toasts: ${JSON.stringify(shown)} (${(e as Error).message})`,
    );
  }
}

/** Console API call from inside the logged-in page (session cookie + New-Api-User header). */
export async function consoleGet<T>(page: Page, path: string): Promise<T> {
  return page.evaluate(async (p) => {
    const user = JSON.parse(localStorage.getItem('user') ?? '{}') as { id?: number };
    const res = await fetch(p, { headers: { 'New-Api-User': String(user.id ?? -1) } });
    return (await res.json()) as unknown;
  }, path) as Promise<T>;
}

/** A console API call other than a read (DELETE, POST…) from inside the logged-in page; its JSON answer. */
export async function consoleCall<T>(page: Page, method: string, path: string, body?: unknown): Promise<T> {
  return page.evaluate(
    async ([m, p, b]) => {
      const user = JSON.parse(localStorage.getItem('user') ?? '{}') as { id?: number };
      const res = await fetch(p as string, {
        method: m as string,
        headers: { 'New-Api-User': String(user.id ?? -1), 'Content-Type': 'application/json' },
        body: b === undefined ? undefined : JSON.stringify(b),
      });
      return (await res.json()) as unknown;
    },
    [method, path, body] as const,
  ) as Promise<T>;
}

/** console.e2e.ts normally runs the setup wizard first; a spec run on its own initialises the same root here. */
export async function ensureRootSetup(): Promise<void> {
  const setup = (await (await fetch(`${BASE_URL}/api/setup`)).json()) as { data?: { status?: boolean } };
  if (setup.data?.status) return;
  await fetch(`${BASE_URL}/api/setup`, {
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
}
