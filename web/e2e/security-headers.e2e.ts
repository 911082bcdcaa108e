// The console under its Content-Security-Policy (issue 39 point 8; server/src/lib/security-headers.ts): log in, open
// the main pages — the dashboard with its charts, a table, the settings, the playground and a chat link's iframe —
// and find no policy violation anywhere (every frame reports through an init script) and every page drawn.
// Its relayed call (the charts need data) comes after relay.e2e.ts's in a full run, which counts the run's only calls:
// the file name sorts it there (vitest.e2e.config.ts runs the specs in name order).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_URL, consoleCall, ensureRootSetup, launchBrowser, loginAsRoot, type Browser } from './browser.js';

let b: Browser;
let upstream: Server;
const violations: string[] = [];
let chatsBefore = '';
let aboutBefore = '';
let tokenId = 0;
let channelId = 0;

/** Console API call from inside the logged-in page. */
const call = consoleCall;

beforeAll(async () => {
  // an OpenAI upstream answering one chat completion: the relayed call gives the dashboard something to chart
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-csp',
          object: 'chat.completion',
          model: 'gpt-4o-mini',
          choices: [{ index: 0, message: { role: 'assistant', content: 'pong' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  await ensureRootSetup();
  b = await launchBrowser();
  // every document, frames included, reports its violations here; Chromium's console line is the second witness
  await b.context.exposeBinding('reportCspViolation', (_source, text: string) => void violations.push(text));
  await b.context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const report = (window as unknown as { reportCspViolation(text: string): void }).reportCspViolation;
      report(`${e.effectiveDirective} blocked ${e.blockedURI || 'inline'} on ${e.documentURI}`);
    });
  });
  b.page.on('console', (m) => {
    if (m.text().includes('Content Security Policy')) violations.push(m.text());
  });
});

afterAll(async () => {
  if (b) {
    if (chatsBefore) await call(b.page, 'PUT', '/api/option/', { key: 'Chats', value: chatsBefore });
    await call(b.page, 'PUT', '/api/option/', { key: 'About', value: aboutBefore });
    if (tokenId) await call(b.page, 'DELETE', `/api/token/${tokenId}`);
    if (channelId) await call(b.page, 'DELETE', `/api/channel/${channelId}`);
    await b.close();
  }
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
});

describe('the console under its Content-Security-Policy', () => {
  it('logs in, draws the main pages and breaks no rule of the policy', async () => {
    const { page } = b;
    const first = await page.goto(`${BASE_URL}/login`);
    const csp = first!.headers()['content-security-policy'] ?? '';
    expect(csp).toMatch(/script-src 'self' 'sha256-[A-Za-z0-9+/]+=*' /);
    expect(csp).toContain("frame-ancestors 'self'");
    // the boot script in index.html is allowed by its hash: it applies the stored theme before the app loads
    await page.evaluate(() => localStorage.setItem('theme-mode', 'dark'));
    await page.reload();
    await page.locator('input#username').waitFor();
    expect(violations).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await page.evaluate(() => localStorage.removeItem('theme-mode'));
    await loginAsRoot(page);

    // a channel to the local upstream, a token, one relayed call: the dashboard then has data to chart
    const port = (upstream.address() as AddressInfo).port;
    const channel = await call<{ success: boolean; message: string; data: { id: number } }>(
      page,
      'POST',
      '/api/channel/',
      {
        type: 1,
        name: 'csp-upstream',
        key: 'sk-csp-upstream',
        base_url: `http://127.0.0.1:${port}`,
        models: 'gpt-4o-mini',
        group: 'default',
      },
    );
    expect(channel, channel.message).toMatchObject({ success: true });
    channelId = channel.data.id;
    const made = await call<{ success: boolean; message: string }>(page, 'POST', '/api/token/', {
      name: 'csp-e2e',
      remain_quota: 0,
      unlimited_quota: true,
      expired_time: -1,
    });
    expect(made, made.message).toMatchObject({ success: true });
    const tokens = await call<{ data: Array<{ id: number; key: string; name: string }> }>(
      page,
      'GET',
      '/api/token/?p=0&size=100',
    );
    const token = tokens.data.find((t) => t.name === 'csp-e2e')!;
    tokenId = token.id;
    const relayed = await fetch(`${BASE_URL}/v1/chat/completions`, {
      method: 'POST',
      // pinned to this channel (root's key, `-<channel id>`): the channels earlier files made point at upstreams gone now
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Bearer sk-${token.key.replace(/^sk-/, '')}-${channelId}`,
      },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] }),
    });
    expect(relayed.status).toBe(200);

    // a chat link to this server (its not-found page): the iframe is framed under frame-src
    const options = await call<{ data: Array<{ key: string; value: string }> }>(page, 'GET', '/api/option/');
    chatsBefore = options.data.find((o) => o.key === 'Chats')?.value ?? '[]';
    // operator HTML as new-api's consoles carry it: inline styles and a data: image
    aboutBefore = options.data.find((o) => o.key === 'About')?.value ?? '';
    await call(page, 'PUT', '/api/option/', {
      key: 'About',
      value:
        '<p style="color: rgb(200, 0, 0)" data-testid="csp-about">CSP about</p><img alt="dot" src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">',
    });
    await call(page, 'PUT', '/api/option/', {
      key: 'Chats',
      value: JSON.stringify([{ 'CSP Chat': `${BASE_URL}/csp-chat?key={key}&url={address}` }]),
    });

    await page.goto(`${BASE_URL}/detail`);
    await page.locator('.recharts-surface').first().waitFor();
    for (const [path, ready] of [
      ['/token', 'token-page'],
      ['/log', 'log-page'],
      ['/channel', 'channel-page'],
      ['/setting', 'setting-page'],
      ['/playground', 'playground-page'],
    ] as const) {
      await page.goto(`${BASE_URL}${path}`);
      await page.getByTestId(ready).waitFor();
    }
    await page.goto(`${BASE_URL}/about`);
    const about = page.getByTestId('csp-about');
    await about.waitFor();
    expect(await about.evaluate((el) => getComputedStyle(el).color)).toBe('rgb(200, 0, 0)');
    await page.goto(`${BASE_URL}/chat/0`);
    await page.frameLocator('[data-testid=chat-frame]').getByText('页面不存在').waitFor();
    // antd's CSS-in-JS styles were applied, not refused: its buttons are styled
    expect(await page.evaluate(() => document.querySelectorAll('style').length)).toBeGreaterThan(1);

    expect(violations).toEqual([]);
    expect(b.pageErrors).toEqual([]);
  });
});
