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

export async function launchBrowser(): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'gw-e2e-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1366, height: 860 },
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
