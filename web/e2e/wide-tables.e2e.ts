// Wide tables at 1440 px (issue 34): the tokens' edit/delete stay in view, the channels' tag and weight are not
// covered by the fixed actions column, the logs' details are readable; money read as rendered text.
// Every table at 1280 and 1440 px (issue 46): no column and no row action is hidden — each header cell and each
// button of the first row can be brought into the table's visible window by scrolling it, and is then neither
// covered by a pinned column nor cut by its own cell (tableVisibility below, measured from element positions).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BASE_URL, consoleGet, ensureRootSetup, launchBrowser, loginAsRoot, shot, type Browser } from './browser.js';

let b: Browser;
let upstream: Server | undefined;

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
  await new Promise((r) => (upstream ? upstream.close(r) : r(undefined)));
});

/** An OpenAI-compatible upstream answering every chat completion with a long reply and its usage. */
async function startUpstream(): Promise<string> {
  upstream = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions' || !req.headers.authorization) {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
        return;
      }
      const body = JSON.parse(raw) as { model: string };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-wide',
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 123456, completion_tokens: 654321, total_tokens: 777777 },
        }),
      );
    });
  });
  await new Promise<void>((r) => upstream!.listen(0, '127.0.0.1', () => r()));
  return `http://127.0.0.1:${(upstream!.address() as AddressInfo).port}`;
}

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

/**
 * What a table hides, measured in the page: every `.ant-table` is scrolled from start to end in steps; a header
 * cell or a first-row button counts as shown when, at some step, it lies inside the table's window, no pinned cell
 * of another column covers it, and (buttons) its own cell does not cut it. Returns the texts of what was never shown.
 */
async function hiddenInTables(page: Page): Promise<{ hidden: string[]; scrolls: number }> {
  return page.evaluate(() => {
    type R = { left: number; right: number };
    const rect = (el: Element): R => {
      const r = el.getBoundingClientRect();
      return { left: r.left, right: r.right };
    };
    const inside = (a: R, outer: R) => a.left >= outer.left - 1 && a.right <= outer.right + 1;
    const covered = (a: R, pins: R[]) => pins.some((p) => a.left < p.right - 1 && p.left < a.right - 1);
    const isPinned = (el: Element) => /ant-table-cell-fix-(left|right|start|end)/.test(el.className);
    const label = (el: Element) => (el.textContent ?? '').trim() || el.getAttribute('aria-label') || el.tagName;
    const hidden: string[] = [];
    let scrolls = 0;
    for (const table of Array.from(document.querySelectorAll<HTMLElement>('.ant-table'))) {
      if (!table.offsetParent) continue; // not on screen (another tab)
      const scroller =
        table.querySelector<HTMLElement>('.ant-table-body') ??
        table.querySelector<HTMLElement>('.ant-table-content') ??
        table;
      const header = table.querySelector<HTMLElement>('.ant-table-header');
      const heads = Array.from(table.querySelectorAll<HTMLElement>('thead th')).filter(
        (th) => !th.classList.contains('ant-table-cell-scrollbar') && th.offsetWidth > 0,
      );
      const firstRow = table.querySelector<HTMLElement>('tbody tr.ant-table-row');
      const buttons = firstRow ? Array.from(firstRow.querySelectorAll<HTMLElement>('button, a')) : [];
      const seen = new Set<Element>();
      const window = rect(table.querySelector('.ant-table-container') ?? table);
      // the table itself is not cut by the page: its window ends inside the viewport
      const view = { left: 0, right: document.documentElement.clientWidth };
      const max = scroller.scrollWidth - scroller.clientWidth;
      scrolls = Math.max(scrolls, max);
      const step = Math.max(40, scroller.clientWidth / 3);
      for (let x = 0; ; x = Math.min(max, x + step)) {
        scroller.scrollLeft = x;
        if (header) header.scrollLeft = x;
        const pinsHead = heads.filter(isPinned).map(rect);
        for (const th of heads) {
          const r = rect(th);
          if (inside(r, window) && inside(r, view) && (isPinned(th) || !covered(r, pinsHead))) seen.add(th);
        }
        const pinsRow = firstRow ? Array.from(firstRow.querySelectorAll('td')).filter(isPinned).map(rect) : [];
        for (const button of buttons) {
          const cell = button.closest('td');
          const r = rect(button);
          if (!cell || !inside(r, rect(cell)) || !inside(r, window) || !inside(r, view)) continue;
          if (isPinned(cell) || !covered(r, pinsRow)) seen.add(button);
        }
        if (x >= max) break;
      }
      scroller.scrollLeft = 0;
      if (header) header.scrollLeft = 0;
      for (const el of [...heads, ...buttons]) if (!seen.has(el)) hidden.push(label(el));
    }
    return { hidden, scrolls };
  });
}

/** The pages with a table, opened as root with rows made by the first block's specs. */
const TABLE_PAGES: { name: string; path: string; ready: string; fits?: boolean; skip?: string }[] = [
  { name: 'tokens', path: '/token', ready: 'tr.ant-table-row' },
  // the channels page is being reworked in another change (issue 46 point 2, its Copy and Delete); this checks it as
  // it stands, and the skip field stays for a page that must wait for such a change
  { name: 'channels', path: '/channel', ready: 'tr.ant-table-row' },
  // the logs fit without scrolling: a reader compares columns across a row (issue 46)
  { name: 'logs', path: '/log', ready: '[data-testid^=log-details-]', fits: true },
  { name: 'users', path: '/user', ready: 'tr.ant-table-row' },
  { name: 'redemptions', path: '/redemption', ready: 'tr.ant-table-row' },
  { name: 'pricing', path: '/pricing', ready: '.ant-table' },
  { name: 'tasks', path: '/task', ready: '.ant-table' },
  { name: 'midjourney', path: '/midjourney', ready: '.ant-table' },
  { name: 'model ratios', path: '/setting', ready: '[data-testid=section-ratio]' },
  { name: 'group limits', path: '/setting?tab=ratelimit', ready: '.ant-table' },
  { name: 'custom OAuth', path: '/setting?tab=system', ready: '.ant-table' },
];

describe('rows in every table', () => {
  it('a consume log with every column filled (channel, token, group, model, time, tokens, cost)', async () => {
    const { page } = b;
    const base = await startUpstream();
    expect(
      await consoleSend(page, 'POST', '/api/channel/', {
        mode: 'single',
        channel: {
          type: 1,
          name: 'wide-relay-channel-with-a-long-name',
          key: 'sk-wide-relay',
          base_url: base,
          models: 'gpt-4o',
          group: 'default',
        },
      }),
    ).toMatchObject({ success: true });
    const name = 'wide-relay-token-x';
    expect(
      await consoleSend(page, 'POST', '/api/token/', {
        name,
        remain_quota: 0,
        expired_time: -1,
        unlimited_quota: true,
        model_limits_enabled: false,
        model_limits: '',
        allow_ips: '',
        group: '',
      }),
    ).toMatchObject({ success: true });
    const tokens = await consoleGet<{
      data: { items?: { name: string; key: string }[] } | { name: string; key: string }[];
    }>(page, '/api/token/?p=0&size=100');
    const list = Array.isArray(tokens.data) ? tokens.data : (tokens.data.items ?? []);
    const key = list.find((x) => x.name === name)!.key;
    const res = await fetch(`${BASE_URL}/v1/chat/completions`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Bearer ${key.startsWith('sk-') ? key : `sk-${key}`}`,
      },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'ping' }] }),
    });
    expect(res.status).toBe(200);
    await page.goto(`${BASE_URL}/log`);
    await page.locator('tr.ant-table-row', { hasText: 'gpt-4o' }).first().waitFor();
  });
});

for (const width of [1280, 1440]) {
  describe(`no table hides a column or an action at ${width} px`, () => {
    for (const { name, path, ready, fits, skip } of TABLE_PAGES) {
      it.skipIf(!!skip)(`${name} (${path})`, async () => {
        const { page } = b;
        await page.setViewportSize({ width, height: 900 });
        await page.goto(`${BASE_URL}${path}`);
        await page.locator(ready).first().waitFor();
        await page.waitForLoadState('networkidle');
        const { hidden, scrolls } = await hiddenInTables(page);
        await shot(page, `wide-tables-${name.replace(/ /g, '-')}-${width}`);
        expect(hidden, `${name} at ${width} px`).toEqual([]);
        if (fits) expect(scrolls, `${name} at ${width} px scrolls sideways by`).toBeLessThanOrEqual(1);
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      });
    }
  });
}
