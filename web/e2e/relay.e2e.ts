// Relay walk-through through the console UI against a local mock OpenAI upstream:
// channel created on the channels page → channel test → token created on the tokens page → token used on /v1
// (non-stream) → streamed chat in the playground → both calls on the usage logs page with the exact quota.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BASE_URL,
  launchBrowser,
  loginAsRoot,
  shot,
  type Browser,
  toast,
  consoleGet,
  ensureRootSetup,
} from './browser.js';

// Mock usage and the expected bill: gpt-4o-mini model ratio 0.075, completion ratio 4, group ratio 1 (default)
// → quota = round((prompt + completion × 4) × 0.075).
const STREAM_USAGE = { prompt_tokens: 1000, completion_tokens: 200 };
const PLAIN_USAGE = { prompt_tokens: 400, completion_tokens: 50 };
const quotaOf = (u: { prompt_tokens: number; completion_tokens: number }) =>
  Math.round((u.prompt_tokens + u.completion_tokens * 4) * 0.075);
const STREAM_PIECES = ['Hello', ' from', ' the', ' mock', ' upstream.'];

interface SeenRequest {
  path: string;
  auth: string | undefined;
  body: Record<string, unknown>;
}

let upstream: Server;
let upstreamUrl = '';
const seen: SeenRequest[] = [];
let b: Browser;

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (data += c));
    req.on('end', () => resolve(data));
    req.on('error', reject);
  });
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const raw = await readBody(req);
  const url = new URL(req.url ?? '/', 'http://mock');
  let body: Record<string, unknown> = {};
  try {
    body = raw ? (JSON.parse(raw) as Record<string, unknown>) : {};
  } catch {
    /* keep empty */
  }
  seen.push({ path: url.pathname, auth: req.headers.authorization, body });
  if (url.pathname === '/v1/models') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', owned_by: 'mock' }] }));
    return;
  }
  if (url.pathname !== '/v1/chat/completions') {
    res.writeHead(404, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify({ error: { message: 'not found', type: 'invalid_request_error' } }));
    return;
  }
  const model = String(body.model ?? 'gpt-4o-mini');
  const created = Math.floor(Date.now() / 1000);
  if (body.stream) {
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
    const send = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
    send({
      id: 'chatcmpl-mock',
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta: { role: 'assistant', content: '' } }],
    });
    for (const piece of STREAM_PIECES) {
      await new Promise((r) => setTimeout(r, 60));
      send({
        id: 'chatcmpl-mock',
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [{ index: 0, delta: { content: piece } }],
      });
    }
    send({
      id: 'chatcmpl-mock',
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
    });
    send({
      id: 'chatcmpl-mock',
      object: 'chat.completion.chunk',
      created,
      model,
      choices: [],
      usage: { ...STREAM_USAGE, total_tokens: STREAM_USAGE.prompt_tokens + STREAM_USAGE.completion_tokens },
    });
    res.end('data: [DONE]\n\n');
    return;
  }
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.end(
    JSON.stringify({
      id: 'chatcmpl-mock-plain',
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'plain reply' }, finish_reason: 'stop' }],
      usage: { ...PLAIN_USAGE, total_tokens: PLAIN_USAGE.prompt_tokens + PLAIN_USAGE.completion_tokens },
    }),
  );
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      res.writeHead(500);
      res.end(String(e));
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  await ensureRootSetup();
  b = await launchBrowser();
  await loginAsRoot(b.page);
});

afterAll(async () => {
  await b?.close();
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
});

describe('relay through the console', () => {
  let channelId = 0;
  let tokenKey = '';

  it('creates a channel pointing at the mock upstream on the channels page', async () => {
    const { page } = b;
    await page.goto(`${BASE_URL}/channel`);
    await page.getByTestId('channel-page').waitFor();
    await page.getByTestId('channel-add').click();
    await page.waitForURL(/\/channel\/add$/);
    const form = page.getByTestId('channel-form');
    await form.waitFor();

    // Form rules: name and key first, then at least one model.
    await page.getByTestId('channel-submit').click();
    await toast(page, '请填写渠道名称和渠道密钥！');
    await form.locator('input[name=name]').fill('mock-openai');
    await form.locator('textarea[name=key]').fill('sk-mock-upstream-key');
    await page.getByTestId('channel-submit').click();
    await toast(page, '请至少选择一个模型！');

    // Trailing slash is stripped on blur.
    await form.locator('input[name=base_url]').fill(`${upstreamUrl}/`);
    await form.locator('input[name=name]').click();
    expect(await form.locator('input[name=base_url]').inputValue()).toBe(upstreamUrl);

    await form.locator('input[name=custom_model]').fill('gpt-4o-mini');
    await page.getByTestId('channel-add-model').click();
    await form.locator('.ant-select-selection-item', { hasText: 'gpt-4o-mini' }).first().waitFor();
    await form.locator('input[name=custom_model]').fill('gpt-4o-mini');
    await page.getByTestId('channel-add-model').click();
    await toast(page, '某些模型已存在！');
    await shot(page, 'relay-01-channel-form');

    await page.getByTestId('channel-submit').click();
    await toast(page, '渠道创建成功！');
    await page.waitForURL(/\/channel$/);
    const name = page.locator('[data-testid^=channel-name-]', { hasText: 'mock-openai' });
    await name.waitFor();
    channelId = Number((await name.getAttribute('data-testid'))!.replace('channel-name-', ''));
    expect(channelId).toBeGreaterThan(0);

    const list = await consoleGet<{
      success: boolean;
      data: { id: number; base_url: string; models: string; group: string }[];
    }>(page, '/api/channel/?p=0&page_size=10');
    const created = list.data.find((c) => c.id === channelId);
    expect(created).toMatchObject({ base_url: upstreamUrl, models: 'gpt-4o-mini', group: 'default' });
  });

  it('tests the channel from its row and shows the time', async () => {
    const { page } = b;
    const row = page.locator('tr', { has: page.getByTestId(`channel-name-${channelId}`) });
    await row.getByRole('button', { name: /测\s*试/ }).click();
    await toast(page, /渠道 mock-openai 测试成功，耗时 [\d.]+ 秒。/, 20_000);
    expect(seen.some((r) => r.path === '/v1/chat/completions' && r.auth === 'Bearer sk-mock-upstream-key')).toBe(true);
    await shot(page, 'relay-02-channels');
  });

  it('creates a token on the tokens page', async () => {
    const { page } = b;
    await page.goto(`${BASE_URL}/token`);
    await page.getByTestId('token-page').waitFor();
    await page.getByText('令牌仅供个人使用').waitFor();
    await page.getByTestId('token-add').click();
    const drawer = page.getByTestId('token-form');
    await drawer.locator('input[name=name]').fill('e2e-token');
    // expiry: a date-time picker with the shortcuts; clearing it (or "never") means never
    await drawer.getByRole('button', { name: /^一\s*天$/ }).click();
    expect(await drawer.locator('input[name=expired_time]').inputValue()).toMatch(
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/,
    );
    await drawer.getByRole('button', { name: '永不过期' }).click();
    expect(await drawer.locator('input[name=expired_time]').inputValue()).toBe('');
    // the quota is typed in dollars, the quota units shown beside
    await drawer.locator('[data-testid=token-quota] input, input[data-testid=token-quota]').first().fill('1.5');
    await drawer.getByTestId('token-quota-units').getByText('= 750,000 额度').waitFor();
    await drawer.locator('[data-testid=token-quota] input, input[data-testid=token-quota]').first().fill('1');
    await drawer.getByTestId('token-quota-units').getByText('= 500,000 额度').waitFor();
    await shot(page, 'relay-03-token-form');
    await page.getByTestId('token-submit').click();
    await toast(page, '令牌创建成功（1 个）');
    // the new key is shown once in a dialog, whole, with its copy button
    const dialogKey = page.getByTestId('created-key');
    await dialogKey.waitFor();
    expect(await dialogKey.textContent()).toMatch(/^sk-\w{48}$/);
    await shot(page, 'relay-03b-token-created');
    await page.getByTestId('created-keys-close').click();
    await dialogKey.waitFor({ state: 'hidden' });
    const keyCell = page.locator('[data-testid^=token-key-]').first();
    await keyCell.waitFor();
    expect(await keyCell.textContent()).toMatch(/^sk-\w{4}…\w{4}$/);
    await shot(page, 'relay-04-tokens');

    const tokens = await consoleGet<{
      data: { name: string; key: string; expired_time: number; remain_quota: number }[];
    }>(page, '/api/token/?p=0&size=10');
    const tok = tokens.data.find((x) => x.name === 'e2e-token');
    expect(tok).toMatchObject({ expired_time: -1, remain_quota: 500000 });
    tokenKey = tok!.key.startsWith('sk-') ? tok!.key : `sk-${tok!.key}`;
  });

  it('relays a non-stream call made with the new token', async () => {
    const res = await fetch(`${BASE_URL}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${tokenKey}` },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'ping' }] }),
    });
    expect(res.status).toBe(200);
    const json = (await res.json()) as {
      choices: { message: { content: string } }[];
      usage: { prompt_tokens: number };
    };
    expect(json.choices[0]!.message.content).toBe('plain reply');
    expect(json.usage.prompt_tokens).toBe(PLAIN_USAGE.prompt_tokens);
  });

  it('streams a reply in the playground', async () => {
    const { page } = b;
    await page.goto(`${BASE_URL}/playground`);
    await page.getByTestId('playground-page').waitFor();
    await page.getByText('你好，请问有什么可以帮助您的吗？').waitFor();
    await page.getByTestId('playground-model').getByText('gpt-4o-mini').waitFor();
    const before = seen.length;
    await page.getByTestId('playground-input').fill('Say hello');
    await page.getByTestId('playground-send').click();
    const reply = page.locator('[data-role=assistant]').last();
    // The reply grows piece by piece (incomplete) and ends complete.
    await page.locator('[data-role=assistant][data-status=incomplete]').first().waitFor({ timeout: 15_000 });
    await page
      .locator('[data-role=assistant][data-status=complete]', { hasText: STREAM_PIECES.join('') })
      .waitFor({ timeout: 15_000 });
    expect(await reply.textContent()).toContain(STREAM_PIECES.join(''));
    await shot(page, 'relay-05-playground');

    const sent = seen.slice(before).find((r) => r.path === '/v1/chat/completions');
    expect(sent?.body.stream).toBe(true);
    expect(sent?.body.model).toBe('gpt-4o-mini');
    const msgs = sent?.body.messages as { role: string; content: string }[];
    expect(msgs[0]!.role).toBe('system');
    expect(msgs[msgs.length - 1]).toEqual({ role: 'user', content: 'Say hello' });

    await page.getByTestId('playground-clear').click();
    expect(await page.locator('[data-role=user]').count()).toBe(0);
  });

  it('shows both calls on the usage logs page with the exact quota', async () => {
    const { page } = b;
    await page.goto(`${BASE_URL}/log`);
    await page.getByTestId('log-page').waitFor();
    const cells = page.locator('[data-testid^=log-quota-]');
    const shownQuotas = () => cells.evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-quota'))));
    // The channel test's row can carry the same quota as the plain call, so the plain call is found by its token name.
    const plainCallRows = page
      .locator('tr', { has: page.locator(`[data-quota="${quotaOf(PLAIN_USAGE)}"]`) })
      .filter({ hasText: 'e2e-token' });
    const bothShown = async () =>
      (await shownQuotas()).includes(quotaOf(STREAM_USAGE)) && (await plainCallRows.count()) > 0;
    // Logs are written in batches after the response, and the channel test's own row ('模型测试') is also there:
    // poll with the query button until both calls' rows are shown.
    for (let i = 0; i < 30 && !(await bothShown()); i++) {
      await page.waitForTimeout(500);
      await page.getByRole('button', { name: /查\s*询/ }).click();
    }
    const quotas = await shownQuotas();
    expect(quotas).toContain(quotaOf(STREAM_USAGE));
    expect(quotas).toContain(quotaOf(PLAIN_USAGE));

    const streamRow = page.locator('tr', { has: page.locator(`[data-quota="${quotaOf(STREAM_USAGE)}"]`) }).first();
    await streamRow.getByText('gpt-4o-mini').waitFor();
    await streamRow.getByText('流', { exact: true }).waitFor();
    expect(await streamRow.textContent()).toContain(String(STREAM_USAGE.prompt_tokens));
    expect(await streamRow.textContent()).toContain(String(STREAM_USAGE.completion_tokens));
    const plainRow = plainCallRows.first();
    await plainRow.getByText('e2e-token').waitFor();
    await plainRow.getByText('非流').waitFor();
    await page.getByTestId('log-stat').waitFor();
    await shot(page, 'relay-06-logs');

    // Admin user popup from the username cell.
    await page.locator('[data-testid^=log-user-]').first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText('用户信息').waitFor();
    await dialog.getByText('root').first().waitFor();
    await shot(page, 'relay-07-user-info');
  });

  it('shows both calls on the dashboard before any quota_data flush', async () => {
    const { page } = b;
    await page.keyboard.press('Escape');
    await page.goto(`${BASE_URL}/detail`);
    await page.getByTestId('detail-page').waitFor();
    await page.getByText('消耗额度').first().waitFor();
    await page.getByText('请求次数').first().waitFor();
    await page.getByText('小时', { exact: true }).waitFor();
    // quota_data is written every DataExportInterval minutes; the dashboard adds what is not written yet, so the two
    // relay calls of this spec (the only ones of the run) are there at once, with their exact quota
    const value = async (id: string) => Number(await page.getByTestId(id).getAttribute('data-value'));
    expect(await value('detail-total-count')).toBe(2);
    expect(await value('detail-total-quota')).toBe(quotaOf(STREAM_USAGE) + quotaOf(PLAIN_USAGE));
    expect(await value('detail-total-tokens')).toBe(
      STREAM_USAGE.prompt_tokens +
        STREAM_USAGE.completion_tokens +
        PLAIN_USAGE.prompt_tokens +
        PLAIN_USAGE.completion_tokens,
    );
    // $0.00036 at 500,000 quota per dollar: small sums keep two significant digits instead of showing $0.00
    expect(await page.getByTestId('detail-total-quota').textContent()).toContain(
      `$${((quotaOf(STREAM_USAGE) + quotaOf(PLAIN_USAGE)) / 500000).toFixed(5)}`,
    );
    await page.locator('.recharts-surface').first().waitFor();
    await shot(page, 'relay-08-dashboard');
    expect(b.pageErrors).toEqual([]);
  });
});
