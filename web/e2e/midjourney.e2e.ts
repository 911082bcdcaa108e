// Midjourney from submit to image (issue 42): root turns drawing on in the settings and creates a Midjourney Proxy
// channel (type 2) on the channels page, pointing at the strict midjourney-proxy mock of the server's tests (it
// refuses a request without the channel's mj-api-secret, or one carrying the client's Authorization); a user submits
// /mj/submit/imagine through the gateway with a token, sees the task in the drawing log, the mock moves it to
// IN_PROGRESS and then SUCCESS, the poller (every second in the e2e run: TASK_POLL_INTERVAL) reads it, and the log
// shows the status and the image, forwarded through the gateway's /mj/image/{id} (MjForwardUrlEnabled). The mock's
// image port is let through the SSRF guard by the e2e harness only (e2e/loopback-images.mjs). Desktop in Chinese,
// phone 390 in English. Runs after every other spec (vitest.e2e.config.ts): its bill must not reach relay.e2e.ts.
import { rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Page } from 'playwright-core';
import { MjProxyMock } from '../../server/test/helpers/mj-proxy-mock.js';
import {
  BASE_URL,
  ensureRootSetup,
  launchBrowser,
  loginAs,
  loginAsRoot,
  shot,
  toast,
  type Browser,
} from './browser.js';

const SECRET = 'mj-e2e-proxy-secret';
const USERNAME = 'mj_drawer';
const PASSWORD = 'mj-drawer-pass-1';
const PROMPT = 'a lighthouse at dawn';
/** mj_imagine's default price, $0.1 at 500,000 quota per dollar */
const IMAGINE_QUOTA = 50_000;
const USER_QUOTA = 500_000;
const RESTORED_OPTIONS = ['DrawingEnabled', 'MjForwardUrlEnabled', 'ServerAddress'];

const allowFile = process.env.E2E_LOOPBACK_ALLOW_FILE ?? '';
let mock: MjProxyMock;
let root: Browser;
let user: Browser;
let phone: Browser | undefined;
let saved: Record<string, string> = {};

/** A console call from inside the logged-in page (session cookie + New-Api-User header). */
async function call<T>(page: Page, method: string, path: string, body?: unknown): Promise<T> {
  return page.evaluate(
    async ([m, p, data]) => {
      const me = JSON.parse(localStorage.getItem('user') ?? '{}') as { id?: number };
      const res = await fetch(p as string, {
        method: m as string,
        headers: { 'New-Api-User': String(me.id ?? -1), 'Content-Type': 'application/json' },
        body: data === undefined ? undefined : JSON.stringify(data),
      });
      return (await res.json()) as unknown;
    },
    [method, path, body] as const,
  ) as Promise<T>;
}

async function setOption(page: Page, key: string, value: string): Promise<void> {
  const res = await call<{ success: boolean; message: string }>(page, 'PUT', '/api/option/', { key, value });
  expect(res, `${key}: ${res.message}`).toMatchObject({ success: true });
}

async function options(page: Page): Promise<Record<string, string>> {
  const res = await call<{ data: { key: string; value: string }[] }>(page, 'GET', '/api/option/');
  return Object.fromEntries(res.data.map((o) => [o.key, o.value]));
}

/**
 * Presses the drawing log's query button until the task's status tag reads `label` (the page does not refresh by
 * itself; the poller moves the row once a second).
 */
async function queryUntilStatus(page: Page, id: string, label: string): Promise<void> {
  const tag = page.getByTestId(`status-${id}`);
  await vi.waitFor(
    async () => {
      await page.getByTestId('tasklog-query').click();
      await expect(tag.textContent({ timeout: 2_000 })).resolves.toBe(label);
    },
    { timeout: 20_000, interval: 250 },
  );
}

/** Waits until the row's image has loaded from `src` (a 1×1 PNG). */
async function imageLoaded(page: Page, id: string, src: string): Promise<void> {
  // antd's Image puts the test id on its wrapper
  const img = page.locator(`[data-testid="image-${id}"] img`);
  await img.scrollIntoViewIfNeeded();
  expect(await img.getAttribute('src')).toBe(src);
  await vi.waitFor(
    async () => {
      const size = await img.evaluate((e: HTMLImageElement) => (e.complete ? e.naturalWidth : 0));
      expect(size).toBe(1);
    },
    { timeout: 10_000, interval: 100 },
  );
}

beforeAll(async () => {
  mock = await MjProxyMock.start({ secret: SECRET });
  // the mock stamps its tasks with this clock and the poller copies submitTime over the row's: a task of 2023 would
  // fall out of the log's last 30 days, and fail as an hour overdue
  mock.now = Date.now();
  // the forwarded image is fetched by the gateway from the mock on 127.0.0.1: the harness lets this one port through
  if (allowFile) writeFileSync(allowFile, `${new URL(mock.url).port}\n`);
  await ensureRootSetup();
  root = await launchBrowser({ viewport: { width: 1440, height: 900 } });
  await loginAsRoot(root.page);
  const before = await options(root.page);
  saved = Object.fromEntries(RESTORED_OPTIONS.map((k) => [k, before[k] ?? '']));
});

afterAll(async () => {
  if (root) for (const [k, v] of Object.entries(saved)) await setOption(root.page, k, v).catch(() => undefined);
  await phone?.close();
  await user?.close();
  await root?.close();
  await mock?.close();
  if (allowFile) rmSync(allowFile, { force: true });
});

describe('Midjourney: submit through the API, progress and image in the drawing log', () => {
  let mjId = '';
  let tokenKey = '';

  it('root turns drawing on in the settings and the drawing log joins the menu', async () => {
    const { page } = root;
    await setOption(page, 'DrawingEnabled', 'false');
    await page.goto(`${BASE_URL}/setting`);
    const section = page.getByTestId('section-drawing');
    await section.waitFor();
    expect(await page.locator('.ant-menu-item', { hasText: '绘图日志' }).count()).toBe(0);
    const drawing = section.getByRole('switch', { name: '启用绘图功能' });
    expect(await drawing.getAttribute('aria-checked')).toBe('false');
    await drawing.click();
    const forward = section.getByRole('switch', { name: '开启之后将上游地址替换为服务器地址' });
    if ((await forward.getAttribute('aria-checked')) !== 'true') await forward.click();
    await page.getByTestId('save-drawing').click();
    await toast(page, '保存成功');
    const now = await options(page);
    expect([now.DrawingEnabled, now.MjForwardUrlEnabled]).toEqual(['true', 'true']);
    // the forwarded image URL is built on the server address
    await setOption(page, 'ServerAddress', BASE_URL);
    await page.reload();
    await page.locator('.ant-menu-item', { hasText: '绘图日志' }).first().waitFor();
    await shot(page, 'mj-01-drawing-settings');

    // the drawing user, made by root (whatever the registration settings earlier specs left), with a balance
    const made = await call<{ success: boolean; message: string }>(page, 'POST', '/api/user/', {
      username: USERNAME,
      password: PASSWORD,
      display_name: USERNAME,
    });
    expect(made, made.message).toMatchObject({ success: true });
    const found = await call<{ data: { items?: { id: number; username: string }[] } | { id: number }[] }>(
      page,
      'GET',
      `/api/user/search?keyword=${USERNAME}`,
    );
    const list = Array.isArray(found.data) ? found.data : (found.data.items ?? []);
    const target = (list as { id: number; username: string }[]).find((u) => u.username === USERNAME);
    expect(target).toBeTruthy();
    const upd = await call<{ success: boolean; message: string }>(page, 'PUT', '/api/user/', {
      id: target!.id,
      username: USERNAME,
      display_name: USERNAME,
      group: 'default',
      quota: USER_QUOTA,
    });
    expect(upd, upd.message).toMatchObject({ success: true });
  });

  it('root creates a Midjourney Proxy channel pointing at the mock', async () => {
    const { page } = root;
    await page.goto(`${BASE_URL}/channel`);
    await page.getByTestId('channel-page').waitFor();
    await page.getByTestId('channel-add').click();
    await page.waitForURL(/\/channel\/add$/);
    const form = page.getByTestId('channel-form');
    await form.waitFor();
    await page.getByTestId('channel-type').click();
    await page.keyboard.type('Midjourney Proxy');
    await page
      .locator('.ant-select-dropdown:not(.ant-select-dropdown-hidden) .ant-select-item-option', {
        hasText: /^Midjourney Proxy$/,
      })
      .click();
    await form.locator('input[name=name]').fill('mj-e2e');
    await form.locator('textarea[name=key]').fill(SECRET);
    await form.locator('input[name=base_url]').fill(mock.url);
    await form.getByRole('button', { name: '清除所有模型' }).click();
    await form.locator('input[name=custom_model]').fill('mj_imagine');
    await page.getByTestId('channel-add-model').click();
    await form.locator('.ant-select-selection-item', { hasText: 'mj_imagine' }).first().waitFor();
    await shot(page, 'mj-02-channel-form');
    await page.getByTestId('channel-submit').click();
    await toast(page, '渠道创建成功！');
    await page.waitForURL(/\/channel$/);
    await page.locator('[data-testid^=channel-name-]', { hasText: 'mj-e2e' }).waitFor();
    const channels = await call<{
      data: { name: string; type: number; status: number; group: string; base_url: string; models: string }[];
    }>(page, 'GET', '/api/channel/?p=0&page_size=50');
    expect(channels.data.find((c) => c.name === 'mj-e2e')).toMatchObject({
      type: 2,
      base_url: mock.url,
      models: 'mj_imagine',
    });
    // the drawing must reach this channel: no channel an earlier spec left may serve mj_imagine to the default group
    const others = channels.data.filter(
      (c) => c.name !== 'mj-e2e' && c.status === 1 && c.models.split(',').includes('mj_imagine'),
    );
    expect(others.map((c) => `${c.name} (${c.group})`)).toEqual([]);
  });

  it('the user submits an imagine with a token and sees it in the drawing log', async () => {
    user = await launchBrowser({ viewport: { width: 1440, height: 900 } });
    const { page } = user;
    await loginAs(page, USERNAME, PASSWORD);
    const made = await call<{ success: boolean; message: string }>(page, 'POST', '/api/token/', {
      name: 'mj-token',
      remain_quota: 0,
      expired_time: -1,
      unlimited_quota: true,
    });
    expect(made, made.message).toMatchObject({ success: true });
    const tokens = await call<{ data: { name: string; key: string }[] }>(page, 'GET', '/api/token/?p=0&size=10');
    const key = tokens.data.find((t) => t.name === 'mj-token')!.key;
    tokenKey = key.startsWith('sk-') ? key : `sk-${key}`;

    const res = await fetch(`${BASE_URL}/mj/submit/imagine`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${tokenKey}` },
      body: JSON.stringify({ prompt: PROMPT }),
    });
    const text = await res.text();
    expect(res.status, text).toBe(200);
    const body = JSON.parse(text) as { code: number; description: string; result: string };
    expect(body).toMatchObject({ code: 1, description: '提交成功', result: expect.stringMatching(/^\d+$/) });
    mjId = body.result;
    const sent = mock.requests.filter((r) => r.path === '/mj/submit/imagine');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers['mj-api-secret']).toBe(SECRET);
    expect(sent[0]!.headers.authorization).toBeUndefined();
    expect(mock.violations).toEqual([]);

    await page.goto(`${BASE_URL}/midjourney`);
    await page.getByText('绘图日志').first().waitFor();
    await page.getByTestId(`mjid-${mjId}`).waitFor();
    await page.getByTestId(`prompt-${mjId}`).getByText(PROMPT).waitFor();
    // the mock starts it: queued, then running at 50%; the poller reads it within a second or two
    mock.advance(mjId);
    mock.advance(mjId);
    await queryUntilStatus(page, mjId, '执行中');
    await page.getByTestId(`progress-${mjId}`).getByText('50%').waitFor();
    await shot(page, 'mj-03-in-progress');
    const self = await call<{ data: { quota: number } }>(page, 'GET', '/api/user/self');
    expect(self.data.quota).toBe(USER_QUOTA - IMAGINE_QUOTA);
  });

  it('the task reaches SUCCESS and its image shows, forwarded through /mj/image', async () => {
    const { page } = user;
    mock.advance(mjId);
    await queryUntilStatus(page, mjId, '成功');
    await page.getByTestId(`progress-${mjId}`).locator('.ant-progress-status-success').waitFor();
    await imageLoaded(page, mjId, `${BASE_URL}/mj/image/${mjId}`);
    // the gateway fetched it from the mock's image host, without the channel's secret
    const fetched = mock.requests.filter((r) => r.path === `/image/${mjId}.png`);
    expect(fetched.length).toBeGreaterThan(0);
    expect(fetched.every((r) => r.headers['mj-api-secret'] === undefined)).toBe(true);
    await shot(page, 'mj-04-success');
    // the full record on the detail button
    await page.getByTestId(`detail-${mjId}`).click();
    const record = JSON.parse((await page.getByTestId('tasklog-text').textContent()) ?? '{}') as {
      status: string;
      progress: string;
      image_url: string;
    };
    expect(record).toMatchObject({ status: 'SUCCESS', progress: '100%', image_url: `${BASE_URL}/mj/image/${mjId}` });
    await page.keyboard.press('Escape');
    // a failure would refund: success keeps the one charge
    const self = await call<{ data: { quota: number } }>(page, 'GET', '/api/user/self');
    expect(self.data.quota).toBe(USER_QUOTA - IMAGINE_QUOTA);
    expect(user.pageErrors).toEqual([]);
  });

  it('shows the same on a phone in English', async () => {
    phone = await launchBrowser({ viewport: { width: 390, height: 844 } });
    const { page, context } = phone;
    await context.addInitScript(() => localStorage.setItem('i18nextLng', 'en'));
    await loginAs(page, USERNAME, PASSWORD);
    await page.goto(`${BASE_URL}/midjourney`);
    await page.getByText('Drawing log').first().waitFor();
    await expect(page.getByTestId(`status-${mjId}`).textContent()).resolves.toBe('Success');
    await imageLoaded(page, mjId, `${BASE_URL}/mj/image/${mjId}`);
    await shot(page, 'mj-05-phone-en');
    // the page itself does not scroll sideways: the table does, inside its card
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    expect(phone.pageErrors).toEqual([]);
    expect(root.pageErrors).toEqual([]);
  });
});
