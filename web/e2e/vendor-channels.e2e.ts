// Anthropic and Gemini channels through the console, against the vendor-faithful mocks of the server's tests (they
// refuse a request without x-api-key / anthropic-version or x-goog-api-key, as the vendors do): the type select
// offers only the types the relay serves, the drawer words and checks the vendor's key, the row's test button goes
// through the relay's provider code, and the playground chats with the Claude model through the Anthropic provider.
// Named to run after relay.e2e.ts, whose dashboard counts only its own relay calls.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { ANTHROPIC_MOCK_KEY, MockAnthropic } from '../../server/test/helpers/mock-anthropic.js';
import { GEMINI_MOCK_KEY, MockGemini } from '../../server/test/helpers/mock-gemini.js';
import {
  BASE_URL,
  consoleGet,
  ensureRootSetup,
  launchBrowser,
  loginAsRoot,
  shot,
  toast,
  type Browser,
} from './browser.js';
import {
  chooseType,
  createdChannelId,
  openNewChannelDrawer,
  searchTypes,
  setOnlyModel,
  testChannelRow,
} from './channel-drawer.js';

const CLAUDE_MODEL = 'claude-3-5-sonnet-20241022';
const GEMINI_MODEL = 'gemini-2.0-flash';
const CLAUDE_ANSWER = 'Bonjour from the Anthropic mock.';

interface CatalogueEntry {
  value: number;
  label: string;
  relayable: boolean;
}

let anthropic: MockAnthropic;
let gemini: MockGemini;
let b: Browser;

beforeAll(async () => {
  anthropic = await MockAnthropic.start();
  gemini = await MockGemini.start();
  // a fixed answer, so the playground's text is known; the mock still streams it in Anthropic's event order
  anthropic.behave = () => ({ kind: 'answer', content: [{ type: 'text', text: CLAUDE_ANSWER }] });
  await ensureRootSetup();
  b = await launchBrowser();
  await loginAsRoot(b.page);
});

afterAll(async () => {
  await b?.close();
  await anthropic?.close();
  await gemini?.close();
});

const rootQuota = async (page: Page) =>
  (await consoleGet<{ data: { quota: number } }>(page, '/api/user/self')).data.quota;

describe('vendor channels in the console', () => {
  let claudeId = 0;
  let geminiId = 0;

  it('offers only the relayable types of the server catalogue', async () => {
    const { page } = b;
    await openNewChannelDrawer(page);
    const catalogue = await consoleGet<{ success: boolean; data: CatalogueEntry[] }>(page, '/api/channel/types');
    expect(catalogue.success).toBe(true);
    const refused = catalogue.data.filter((e) => !e.relayable).map((e) => e.label);
    // every type of the spec relays but 21, which new-api cannot relay either (issue 43)
    expect(refused).toEqual(['知识库：AI Proxy']);
    expect(await searchTypes(page, 'AI Proxy')).toEqual([]);
    // Baidu's v1 (signed) and Qianfan v2 are both offered, as is Tencent's Hunyuan
    expect((await searchTypes(page, '百度文心千帆')).sort()).toEqual(['百度文心千帆', '百度文心千帆V2']);
    expect(await searchTypes(page, '腾讯混元')).toEqual(['腾讯混元']);
    // the task platforms' channels can be created (issue 42)
    expect(refused).not.toContain('Suno API');
    expect(await searchTypes(page, 'Suno')).toEqual(['Suno API']);
    expect(await searchTypes(page, 'Midjourney')).toEqual(['Midjourney Proxy', 'Midjourney Proxy Plus']);
    expect(await searchTypes(page, 'Claude')).toEqual(['Anthropic Claude', 'AWS Claude']);
    expect((await searchTypes(page, 'Google')).sort()).toEqual(['Google Gemini', 'Google PaLM2']);
    await page.keyboard.press('Escape');
  });

  it('creates an Anthropic channel: key format hint, sk-ant- check, mock base URL', async () => {
    const { page } = b;
    const form = await openNewChannelDrawer(page);
    await chooseType(page, 'Anthropic Claude');
    const key = form.locator('textarea[name=key]');
    const base = form.locator('input[name=base_url]');
    expect(await key.getAttribute('placeholder')).toContain('sk-ant-');
    expect(await base.getAttribute('placeholder')).toContain('https://api.anthropic.com');

    await form.locator('input[name=name]').fill('claude-e2e');
    await key.fill('sk-proj-not-an-anthropic-key');
    await setOnlyModel(page, CLAUDE_MODEL);
    await page.getByTestId('channel-submit').click();
    await toast(page, /Anthropic 密钥应以 sk-ant- 开头！/);

    await key.fill(ANTHROPIC_MOCK_KEY);
    await base.fill(anthropic.url);
    await shot(page, 'vendor-01-anthropic-form');
    await page.getByTestId('channel-submit').click();
    claudeId = await createdChannelId(page, 'claude-e2e');
    expect(claudeId).toBeGreaterThan(0);
  });

  it('creates a Gemini channel with its AIza key', async () => {
    const { page } = b;
    const form = await openNewChannelDrawer(page);
    await chooseType(page, 'Google Gemini');
    const key = form.locator('textarea[name=key]');
    expect(await key.getAttribute('placeholder')).toContain('AIza');
    expect(await form.locator('input[name=base_url]').getAttribute('placeholder')).toContain(
      'https://generativelanguage.googleapis.com',
    );
    await form.locator('input[name=name]').fill('gemini-e2e');
    await key.fill(GEMINI_MOCK_KEY);
    await form.locator('input[name=base_url]').fill(gemini.url);
    await setOnlyModel(page, GEMINI_MODEL);
    await page.getByTestId('channel-submit').click();
    geminiId = await createdChannelId(page, 'gemini-e2e');
    expect(geminiId).toBeGreaterThan(0);

    const list = await consoleGet<{ data: { id: number; type: number; base_url: string; models: string }[] }>(
      page,
      '/api/channel/?p=0&page_size=50',
    );
    expect(list.data.find((c) => c.id === claudeId)).toMatchObject({
      type: 14,
      base_url: anthropic.url,
      models: CLAUDE_MODEL,
    });
    expect(list.data.find((c) => c.id === geminiId)).toMatchObject({
      type: 24,
      base_url: gemini.url,
      models: GEMINI_MODEL,
    });
  });

  it('tests both channels through the relay providers and shows the response time', async () => {
    const { page } = b;
    await testChannelRow(page, claudeId, 'claude-e2e');
    const toClaude = anthropic.requests.find((r) => r.path.startsWith('/v1/messages'));
    expect(toClaude?.headers['x-api-key']).toBe(ANTHROPIC_MOCK_KEY);
    expect(toClaude?.headers['anthropic-version']).toBeTruthy();
    expect(toClaude?.body.model).toBe(CLAUDE_MODEL);

    await testChannelRow(page, geminiId, 'gemini-e2e');
    const toGemini = gemini.requests.find((r) => r.path.includes(`/models/${GEMINI_MODEL}:`));
    expect(toGemini).toBeTruthy();
    expect(toGemini!.headers['x-goog-api-key'] ?? new URL(toGemini!.path, 'http://m').searchParams.get('key')).toBe(
      GEMINI_MOCK_KEY,
    );

    // the list, reloaded, shows each channel's measured response time
    await page.getByRole('button', { name: /刷\s*新/ }).click();
    for (const id of [claudeId, geminiId]) {
      const row = page.locator('tr', { has: page.getByTestId(`channel-name-${id}`) });
      await row.getByText(/[\d.]+ 秒/).waitFor();
    }
    await shot(page, 'vendor-02-channels-tested');
  });

  it('chats with the Claude model in the playground', async () => {
    const { page } = b;
    await page.goto(`${BASE_URL}/playground`);
    await page.getByTestId('playground-page').waitFor();
    await page.getByTestId('playground-model').click();
    await page.keyboard.type(CLAUDE_MODEL);
    await page
      .locator('.ant-select-dropdown:not(.ant-select-dropdown-hidden) .ant-select-item-option', {
        hasText: CLAUDE_MODEL,
      })
      .click();
    await page.getByTestId('playground-model').getByText(CLAUDE_MODEL).waitFor();
    const before = anthropic.requests.length;
    const quotaBefore = await rootQuota(page);
    await page.getByTestId('playground-input').fill('Say hello in French');
    await page.getByTestId('playground-send').click();
    await page
      .locator('[data-role=assistant][data-status=complete]', { hasText: CLAUDE_ANSWER })
      .waitFor({ timeout: 20_000 });
    await shot(page, 'vendor-03-playground-claude');

    const sent = anthropic.requests.slice(before).find((r) => r.path.startsWith('/v1/messages'));
    expect(sent?.body).toMatchObject({ model: CLAUDE_MODEL, stream: true });
    expect(sent?.body.messages.at(-1)).toMatchObject({ role: 'user' });
    expect(JSON.stringify(sent?.body.messages.at(-1))).toContain('Say hello in French');

    // the chat is billed; wait until the bill is settled so later specs see a quiet balance
    await expect.poll(() => rootQuota(page), { timeout: 10_000 }).toBeLessThan(quotaBefore);
    let settled = await rootQuota(page);
    await expect
      .poll(
        async () => {
          const now = await rootQuota(page);
          const same = now === settled;
          settled = now;
          return same;
        },
        { timeout: 10_000, interval: 500 },
      )
      .toBe(true);
    expect(b.pageErrors).toEqual([]);
  });
});
