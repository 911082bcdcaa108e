// Third-party sign-in in a real browser against the local identity provider the runner starts (mock-idp.mjs): an OIDC
// sign-up from the login page through the provider's authorize page back to /token, then binding GitHub from
// personal settings. GitHub's own authorize page is replaced, in the browser only, by the mock's: nothing leaves
// 127.0.0.1.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { BASE_URL, ensureRootSetup, launchBrowser, loginAsRoot, toast, type Browser } from './browser.js';

const IDP = process.env.E2E_IDP_URL ?? '';
const CLIENTS = JSON.parse(process.env.E2E_IDP_CLIENTS ?? '{}') as Record<
  'github' | 'oidc',
  { id: string; secret: string }
>;
const suffix = Date.now().toString(36).slice(-5);
const OIDC_LOGIN = `alice${suffix}`;
const GITHUB_LOGIN = `alice-gh-${suffix}`;

/** A console call from inside the logged-in page (session cookie + New-Api-User header). */
async function consoleCall(page: Page, method: string, path: string, body?: unknown) {
  return page.evaluate(
    async ([m, p, b]) => {
      const user = JSON.parse(localStorage.getItem('user') ?? '{}') as { id?: number };
      const res = await fetch(p as string, {
        method: m as string,
        headers: { 'New-Api-User': String(user.id ?? -1), 'Content-Type': 'application/json' },
        body: b === undefined ? undefined : JSON.stringify(b),
      });
      return (await res.json()) as { success: boolean; message: string; data?: Record<string, unknown> };
    },
    [method, path, body] as const,
  );
}

async function setOptions(page: Page, options: Record<string, string>) {
  for (const [key, value] of Object.entries(options)) {
    const res = await consoleCall(page, 'PUT', '/api/option/', { key, value });
    expect(res, `${key}: ${res.message}`).toMatchObject({ success: true });
  }
}

let admin: Browser;
let visitor: Browser;

describe.skipIf(!IDP)('third-party sign-in in the browser', () => {
  beforeAll(async () => {
    await ensureRootSetup();
    admin = await launchBrowser();
    await loginAsRoot(admin.page);
    await setOptions(admin.page, {
      ServerAddress: BASE_URL,
      RegisterEnabled: 'true',
      'oidc.well_known': `${IDP}/oidc/.well-known/openid-configuration`,
      'oidc.authorization_endpoint': `${IDP}/oidc/authorize`,
      // the provider listens on loopback, where discovery is never fetched (SSRF rule): its endpoints typed in, as an
      // operator of an identity provider on a private network does
      'oidc.token_endpoint': `${IDP}/oidc/token`,
      'oidc.user_info_endpoint': `${IDP}/oidc/userinfo`,
      'oidc.client_id': CLIENTS.oidc.id,
      'oidc.client_secret': CLIENTS.oidc.secret,
      'oidc.enabled': 'true',
      GitHubClientId: CLIENTS.github.id,
      GitHubClientSecret: CLIENTS.github.secret,
      GitHubOAuthEnabled: 'true',
    });
    visitor = await launchBrowser();
    // GitHub's authorize page stands in the mock's place; any other address off this machine is refused
    await visitor.context.route('https://github.com/login/oauth/authorize**', (route) => {
      const query = new URL(route.request().url()).search;
      return route.fulfill({ status: 302, headers: { location: `${IDP}/github/authorize${query}` } });
    });
  }, 60_000);

  afterAll(async () => {
    // the other specs expect a login page without provider buttons
    if (admin) await setOptions(admin.page, { 'oidc.enabled': 'false', GitHubOAuthEnabled: 'false' });
    await visitor?.close();
    await admin?.close();
  });

  it('signs up with OIDC from the login page, through the provider, to /token', async () => {
    const { page } = visitor;
    await page.goto(`${BASE_URL}/login`);
    await page.getByTestId('oauth-oidc').click();
    await page.waitForURL(`${IDP}/oidc/authorize**`);
    const authorize = new URL(page.url());
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${BASE_URL}/oauth/oidc`);
    expect(authorize.searchParams.get('state')).toMatch(/^[A-Za-z0-9]{12}$/);
    await page.locator('#login').fill(OIDC_LOGIN);
    await page.locator('#email').fill(`${OIDC_LOGIN}@example.com`);
    await page.locator('#name').fill('Alice OIDC');
    await page.locator('#approve').click();
    await page.waitForURL(/\/token$/, { timeout: 15_000 });
    await toast(page, '登录成功！');

    const self = await consoleCall(page, 'GET', '/api/user/self');
    expect(self.data).toMatchObject({
      username: OIDC_LOGIN,
      display_name: 'Alice OIDC',
      email: `${OIDC_LOGIN}@example.com`,
      oidc_id: `sub-${OIDC_LOGIN}`,
      github_id: '',
    });
    expect(visitor.pageErrors).toEqual([]);
  });

  it('binds GitHub from personal settings and shows the bound account', async () => {
    const { page } = visitor;
    await page.goto(`${BASE_URL}/personal`);
    await page.getByTestId('bind-github').click();
    await page.waitForURL(`${IDP}/github/authorize**`);
    await page.locator('#login').fill(GITHUB_LOGIN);
    await page.locator('#approve').click();
    await toast(page, '绑定成功！');
    await page.waitForURL(/\/personal$/, { timeout: 15_000 });
    await expect.poll(() => page.getByTestId('bind-github').textContent()).toContain('已绑定');

    // the binding is GitHub's numeric user id (new-api-compat.md §9.4), shown as stored
    const self = await consoleCall(page, 'GET', '/api/user/self');
    expect(self.data).toMatchObject({ username: OIDC_LOGIN, github_id: expect.stringMatching(/^id:\d+$/) });
    await page.getByText(String(self.data?.github_id)).first().waitFor();
    expect(visitor.pageErrors).toEqual([]);
  });
});
