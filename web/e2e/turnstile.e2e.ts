// Login with Cloudflare Turnstile switched on. This spec runs its own gateway (the built server, in this process) so
// the other specs keep logging in without a widget: its Turnstile secret is checked against a local fake of
// Cloudflare's siteverify endpoint (the app context's test-only URL), and the browser gets a local fake of
// Cloudflare's widget script in place of the real one. Every other request that is not for 127.0.0.1 is aborted and
// reported: nothing reaches Cloudflare.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { launchBrowser, toast, type Browser } from './browser.js';

const SCRIPT_URL = 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit';
const SITE_KEY = 'site-key-e2e';
const SECRET = 'secret-key-e2e';
const PASSWORD = 'turnstile-pass-1';

// Cloudflare's widget as the console uses it: render() issues a token a moment later, reset() issues a new one.
const FAKE_WIDGET_SCRIPT = `
window.turnstile = (() => {
  let issued = 0;
  const widgets = {};
  const issue = (id) =>
    setTimeout(() => {
      if (!widgets[id]) return;
      widgets[id].callback('e2e-turnstile-' + (++issued));
      window.__turnstileIssued = issued;
    }, 150);
  return {
    render(el, o) {
      const id = 'w' + Object.keys(widgets).length;
      widgets[id] = o;
      el.setAttribute('data-fake-turnstile', o.sitekey);
      el.textContent = 'turnstile';
      issue(id);
      return id;
    },
    reset(id) { issue(id); },
    remove(id) { delete widgets[id]; },
  };
})();
`;

interface ServerModules {
  loadConfig(env: Record<string, string>): unknown;
  createContext(
    config: unknown,
    opts: { turnstileVerifyUrl: string },
  ): Promise<{ options: { set(k: string, v: string): Promise<void> } }>;
  buildApp(ctx: unknown): Promise<{ listen(o: { port: number; host: string }): Promise<string> }>;
  closeGracefully(app: unknown, ctx: unknown, drainMs: number): Promise<void>;
}

const rootDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const serverModule = (name: string) => import(pathToFileURL(join(rootDir, 'server', 'dist', `${name}.js`)).href);

let b: Browser;
let base: string;
let stopServer: () => Promise<void>;
let verifier: http.Server;
let dataDir: string;
/** the tokens the fake siteverify was asked about, and its answers */
const checks: Array<{ token: string; secret: string; success: boolean }> = [];
const spent = new Set<string>();
const scriptLoads: string[] = [];
const blocked: string[] = [];

beforeAll(async () => {
  verifier = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const form = new URLSearchParams(raw);
      const token = form.get('response') ?? '';
      const secret = form.get('secret') ?? '';
      // single-use, as Cloudflare's: a token is good once
      const success = secret === SECRET && token.startsWith('e2e-turnstile-') && !spent.has(token);
      spent.add(token);
      checks.push({ token, secret, success });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success }));
    });
  });
  await new Promise<void>((r) => verifier.listen(0, '127.0.0.1', () => r()));
  const verifyUrl = `http://127.0.0.1:${(verifier.address() as AddressInfo).port}/turnstile/v0/siteverify`;

  const [{ loadConfig }, { createContext }, { buildApp }, { closeGracefully }] = (await Promise.all([
    serverModule('config'),
    serverModule('context'),
    serverModule('app'),
    serverModule('shutdown'),
  ])) as ServerModules[];
  dataDir = mkdtempSync(join(tmpdir(), 'gw-e2e-turnstile-'));
  const config = loadConfig({
    PORT: '0',
    SQL_DSN: '',
    SQLITE_PATH: join(dataDir, 'turnstile.db'),
    WEB_DIST_DIR: join(rootDir, 'web', 'dist'),
    SESSION_SECRET: 'e2e-turnstile-session-secret-0123456789',
    GLOBAL_API_RATE_LIMIT_ENABLE: 'false',
    GLOBAL_WEB_RATE_LIMIT_ENABLE: 'false',
    CRITICAL_RATE_LIMIT_ENABLE: 'false',
    LOG_LEVEL: 'warn',
  });
  const ctx = await createContext(config, { turnstileVerifyUrl: verifyUrl });
  const app = await buildApp(ctx);
  base = await app.listen({ port: 0, host: '127.0.0.1' });
  stopServer = () => closeGracefully(app, ctx, 0);

  const setup = await fetch(`${base}/api/setup`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      username: 'root',
      password: PASSWORD,
      confirmPassword: PASSWORD,
      SelfUseModeEnabled: false,
      DemoSiteEnabled: false,
    }),
  });
  expect(((await setup.json()) as { success: boolean }).success).toBe(true);
  await ctx.options.set('TurnstileSiteKey', SITE_KEY);
  await ctx.options.set('TurnstileSecretKey', SECRET);
  await ctx.options.set('TurnstileCheckEnabled', 'true');

  b = await launchBrowser();
  await b.context.route('**/*', async (route) => {
    const url = route.request().url();
    if (url === SCRIPT_URL) {
      scriptLoads.push(url);
      return route.fulfill({ status: 200, contentType: 'application/javascript', body: FAKE_WIDGET_SCRIPT });
    }
    if (new URL(url).hostname === '127.0.0.1') return route.continue();
    blocked.push(url);
    return route.abort();
  });
});

afterAll(async () => {
  await b?.close();
  await stopServer?.();
  await new Promise((r) => verifier?.close(r));
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe('Turnstile on the console', () => {
  it('the login page shows the widget, sends its token, takes a fresh one after a failed attempt and logs in', async () => {
    const { page } = b;
    const status = (await (await fetch(`${base}/api/status`)).json()) as {
      data: { turnstile_check: boolean; turnstile_site_key: string };
    };
    expect(status.data).toMatchObject({ turnstile_check: true, turnstile_site_key: SITE_KEY });

    await page.goto(`${base}/login`);
    await page.locator(`[data-fake-turnstile="${SITE_KEY}"]`).waitFor();
    const submit = page.locator('form button[type=submit]');
    await page.locator('input#username').fill('root');
    await page.locator('input#password').fill('wrong-password');
    // the button stays enabled while the check runs (a click then says 请稍后几秒重试…): wait for the widget's token
    const issued = () => page.evaluate(() => (window as { __turnstileIssued?: number }).__turnstileIssued ?? 0);
    await expect.poll(issued, { timeout: 10_000 }).toBe(1);
    await submit.click();
    await toast(page, /用户名或密码错误|密码/);
    expect(checks).toHaveLength(1);
    expect(checks[0]).toMatchObject({ secret: SECRET, success: true });

    // the spent token is not sent again: the widget is reset and the next attempt carries a new one; the server,
    // which saw this browser pass a moment ago, does not ask Cloudflare again (once per session, as new-api)
    await page.locator('input#password').fill(PASSWORD);
    await expect.poll(issued, { timeout: 10_000 }).toBe(2);
    const second = page.waitForRequest((r) => r.url().includes('/api/user/login'));
    await submit.click();
    const sentToken = new URL((await second).url()).searchParams.get('turnstile');
    expect(sentToken).toMatch(/^e2e-turnstile-\d+$/);
    expect(sentToken).not.toBe(checks[0]!.token);
    await page.waitForURL(/\/token$/, { timeout: 15_000 });
    expect(checks).toHaveLength(1);

    expect(scriptLoads.length).toBeGreaterThan(0);
    expect(blocked).toEqual([]);
    expect(b.pageErrors).toEqual([]);
  });
});
