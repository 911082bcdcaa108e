// Wide tables at 1440 px (issue 34): the tokens' edit/delete stay in view, the channels' tag and weight are not
// covered by the fixed actions column, the logs' details are readable; money read as rendered text.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { BASE_URL, ensureRootSetup, launchBrowser, loginAsRoot, shot, type Browser } from './browser.js';

let b: Browser;

async function consoleSend(page: Page, method: string, path: string, body: unknown) {
  return page.evaluate(
    async ([m, p, data]) => {
      const user = JSON.parse(localStorage.getItem('user') ?? '{}') as { id?: number };
      const res = await fetch(p as string, {
        method: m as string,
        headers: { 'New-Api-User': String(user.id ?? -1), 'Content-Type': 'application/json' },
        body: JSON.stringify(data),
      });
      return (await res.json()) as { success: boolean; message: string };
    },
    [method, path, body] as const,
  );
}

async function box(l: Locator) {
  const r = await l.boundingBox();
  if (!r) throw new Error('element not laid out');
  return r;
}

const overlaps = (a: { x: number; width: number }, c: { x: number; width: number }) =>
  a.x < c.x + c.width && c.x < a.x + a.width;

beforeAll(async () => {
  await ensureRootSetup();
  b = await launchBrowser();
  await b.page.setViewportSize({ width: 1440, height: 900 });
  await loginAsRoot(b.page);
});

afterAll(async () => {
  await b?.close();
});

describe('wide tables at 1440 px', () => {
  it('tokens: edit and delete are inside the viewport', async () => {
    const { page } = b;
    const name = 'wide-token-long-name-1440';
    expect(
      await consoleSend(page, 'POST', '/api/token/', {
        name,
        remain_quota: 1250000,
        expired_time: -1,
        unlimited_quota: false,
        model_limits_enabled: false,
        model_limits: '',
        allow_ips: '',
        group: '',
      }),
    ).toMatchObject({ success: true });
    await page.goto(`${BASE_URL}/token`);
    const row = page.locator('tr', { hasText: name });
    await row.waitFor();
    // 1 250 000 quota at 500 000 per dollar, as the user reads it
    await row.getByText('$2.50').waitFor();
    for (const button of [row.getByRole('button', { name: /编\s*辑/ }), row.getByRole('button', { name: /删\s*除/ })]) {
      const r = await box(button);
      expect(r.x + r.width).toBeLessThanOrEqual(1440);
      expect(r.x).toBeGreaterThan(0);
    }
    await shot(page, 'wide-01-tokens-1440');
  });

  it('channels: the tag and weight cells are not covered by the actions column', async () => {
    const { page } = b;
    expect(
      await consoleSend(page, 'POST', '/api/channel/', {
        mode: 'single',
        channel: {
          type: 1,
          name: 'wide-channel',
          key: 'sk-wide',
          base_url: 'http://127.0.0.1:9',
          models: 'gpt-4o-mini',
          group: 'default',
          tag: 'wide-tag',
        },
      }),
    ).toMatchObject({ success: true });
    await page.goto(`${BASE_URL}/channel`);
    const row = page.locator('tr', { hasText: 'wide-channel' });
    await row.waitFor();
    const actionsCell = row.locator('td').last();
    const actions = await box(actionsCell);
    const tag = await box(row.getByText('wide-tag'));
    const weight = await box(row.locator('input[aria-label^=weight-]'));
    expect(overlaps(tag, actions)).toBe(false);
    expect(overlaps(weight, actions)).toBe(false);
    // the actions are reached by scrolling the table, inside the page
    await actionsCell.scrollIntoViewIfNeeded();
    const reached = await box(actionsCell);
    expect(reached.x + reached.width).toBeLessThanOrEqual(1440);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1440);
    await shot(page, 'wide-02-channels-1440');
  });

  it('logs: the details column is in view and wide enough to read', async () => {
    const { page } = b;
    // a log row of its own (a top-up by redemption code), whatever ran before
    const created = await consoleSend(page, 'POST', '/api/redemption/', { name: 'wide-log', quota: 1000, count: 1 });
    expect(created).toMatchObject({ success: true });
    expect(
      await consoleSend(page, 'POST', '/api/user/topup', { key: (created as unknown as { data: string[] }).data[0] }),
    ).toMatchObject({
      success: true,
    });
    await page.goto(`${BASE_URL}/log`);
    const details = page.locator('[data-testid^=log-details-]').first();
    await details.waitFor();
    const r = await box(details);
    expect(r.width).toBeGreaterThanOrEqual(250);
    expect(r.x + r.width).toBeLessThanOrEqual(1440);
    await shot(page, 'wide-03-logs-1440');
  });
});
