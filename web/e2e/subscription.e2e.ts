// Subscription plans through the console (docs/decisions/0015-subscription-plans.md step 8): root creates a plan with
// a daily window on /subscription; a user with enough balance buys it on the wallet page with the balance and sees
// the plan with its window (nothing used yet, the reset time shown), the balance lowered by the plan's price; on
// subscription_only, relay calls use the day up and the next is refused with the reset time, the bar full; root
// invalidates the subscription in the user editor.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BASE_URL,
  consoleCall,
  consoleGet,
  ensureRootSetup,
  launchBrowser,
  loginAs,
  loginAsRoot,
  shot,
  toast,
  type Browser,
} from './browser.js';

// short: its rows are in the logs table that wide-tables.e2e.ts measures at 1280 px
const USERNAME = 'plan1';
const PASSWORD = 'sub-e2e-pass-1';
const TITLE = 'E2E 每日套餐';
// $10 of quota at new-api's default 500 000 per dollar
const USER_QUOTA = 5_000_000;

// each mocked completion costs 400 000 prompt tokens × gpt-4o's ratio 1.25 = 500 000 quota: two fill the $2 day
const MOCK_USAGE = { prompt_tokens: 400_000, completion_tokens: 0, total_tokens: 400_000 };

let upstream: Server;
let upstreamUrl = '';
let root: Browser;
let user: Browser;
let planId = 0;
let userId = 0;
let channelId = 0;

beforeAll(async () => {
  // the channel's upstream: every chat completion answers with the usage above
  upstream = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(
        JSON.stringify({
          id: 'chatcmpl-sub-e2e',
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: 'gpt-4o',
          choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
          usage: MOCK_USAGE,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  await ensureRootSetup();
  root = await launchBrowser();
  await loginAsRoot(root.page);
});

afterAll(async () => {
  await user?.close();
  await root?.close();
  await new Promise<void>((resolve) => (upstream ? upstream.close(() => resolve()) : resolve()));
});

describe('subscription plans', () => {
  it('root creates a plan with a daily window on the plans page', async () => {
    const { page } = root;
    await page.goto(`${BASE_URL}/token`);
    await page.getByTestId('sidebar').getByText('订阅管理').click();
    await page.waitForURL(/\/subscription$/);
    await page.getByTestId('subscription-page').waitFor();

    await page.getByTestId('plan-add').click();
    const form = page.getByTestId('plan-form');
    await form.waitFor();
    // checked before any request
    await page.getByTestId('plan-submit').click();
    await toast(page, '请输入套餐标题');
    await form.locator('input[name=title]').fill(TITLE);
    await form.locator('input[name=price_amount]').fill('3');
    await form.locator('input[name=duration_value]').fill('7');
    // $2 a day: 1 000 000 quota units
    await form.locator('input[data-testid=plan-daily_amount]').fill('2');
    await form.getByText('= 1,000,000 额度').waitFor();
    await shot(page, 'subscription-00-plan-form');
    await page.getByTestId('plan-submit').click();
    await toast(page, '套餐已创建');

    const listed = await consoleGet<{
      data: { plan: { id: number; title: string; price_amount: number; duration_value: number }; limits: unknown }[];
    }>(page, '/api/subscription/admin/plans');
    const created = listed.data.find((v) => v.plan.title === TITLE);
    expect(created?.plan).toMatchObject({ price_amount: 3, duration_value: 7 });
    expect(created?.limits).toMatchObject({ daily_amount: 1_000_000, rolling_amount: 0, models: [], groups: [] });
    planId = created!.plan.id;
    await page.getByTestId(`plan-window-${planId}-daily`).getByText('每日 $2.00').waitFor();
    await shot(page, 'subscription-01-plans');

    // the buyer, made by root with a balance
    const made = await consoleCall<{ success: boolean; message: string }>(page, 'POST', '/api/user/', {
      username: USERNAME,
      password: PASSWORD,
      display_name: USERNAME,
    });
    expect(made, made.message).toMatchObject({ success: true });
    const found = await consoleGet<{ data: { items?: { id: number; username: string }[] } }>(
      page,
      `/api/user/search?keyword=${USERNAME}`,
    );
    const target = (found.data.items ?? []).find((u) => u.username === USERNAME)!;
    userId = target.id;
    const upd = await consoleCall<{ success: boolean; message: string }>(page, 'PUT', '/api/user/', {
      id: target.id,
      username: USERNAME,
      display_name: USERNAME,
      group: 'default',
      quota: USER_QUOTA,
    });
    expect(upd, upd.message).toMatchObject({ success: true });
  });

  it('a user buys it with the balance and sees its daily window', async () => {
    user = await launchBrowser();
    const { page } = user;
    await loginAs(page, USERNAME, PASSWORD);
    await page.goto(`${BASE_URL}/topup`);
    await page.getByTestId('wallet-balance').getByText('$10.00').waitFor();
    const card = page.getByTestId(`plan-card-${planId}`);
    await card.getByText(TITLE).waitFor();
    await card.getByText('每日 $2.00').waitFor();
    await page.getByText('暂无生效中的套餐').waitFor();

    await card.getByTestId(`plan-buy-${planId}`).click();
    await page.getByText(`使用余额购买「${TITLE}」，将从余额中扣除 $3.00。`).waitFor();
    await page.getByTestId('plan-buy-confirm').click();
    await toast(page, '购买成功');

    const self = await consoleGet<{
      data: { subscriptions: { subscription: { id: number; plan_id: number }; windows: { slot: string }[] }[] };
    }>(page, '/api/subscription/self');
    expect(self.data.subscriptions).toHaveLength(1);
    const sub = self.data.subscriptions[0]!;
    expect(sub.subscription.plan_id).toBe(planId);
    const id = sub.subscription.id;
    await page.getByTestId(`my-plan-${id}-state`).getByText('生效中').waitFor();
    const daily = page.getByTestId(`my-plan-${id}-daily`);
    await daily.waitFor();
    expect(await page.getByTestId(`my-plan-${id}-daily-used`).textContent()).toBe('已用 $0.00 / $2.00');
    expect(await page.getByTestId(`my-plan-${id}-daily-left`).textContent()).toBe('剩余 $2.00');
    // the next local midnight, with the time left before it
    expect(await page.getByTestId(`my-plan-${id}-daily-reset`).textContent()).toMatch(
      /^重置于 \d{4}-\d\d-\d\d 00:00:00 \(.+后\)$/,
    );
    // the plan's total is unlimited (0): no bar that never fills beside the daily one
    expect(await page.getByTestId(`my-plan-${id}-main`).count()).toBe(0);
    // the price taken from the balance: $10 − $3
    await page.getByTestId('wallet-balance').getByText('$7.00').waitFor();
    await shot(page, 'subscription-02-wallet');

    // the preference is saved and read back
    await page.getByTestId('pref-subscription_only').click();
    await toast(page, '扣费方式已保存');
    const after = await consoleGet<{ data: { billing_preference: string } }>(page, '/api/subscription/self');
    expect(after.data.billing_preference).toBe('subscription_only');
    expect(user.pageErrors).toEqual([]);
    expect(root.pageErrors).toEqual([]);
  });

  it("the wallet's plans fit a phone", async () => {
    const { page } = user;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByTestId(`plan-card-${planId}`).waitFor();
    await page.getByTestId('my-plans').locator('.ant-progress').first().waitFor();
    await page.waitForLoadState('networkidle');
    await shot(page, 'subscription-03-wallet-phone');
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
  });

  it('on subscription_only, calls use up the daily window: refused with its reset time, the bar full', async () => {
    const channel = await consoleCall<{ success: boolean; message: string }>(root.page, 'POST', '/api/channel/', {
      mode: 'single',
      channel: {
        type: 1,
        name: 'sub-e2e-upstream',
        key: 'sk-sub-e2e',
        base_url: upstreamUrl,
        models: 'gpt-4o',
        group: 'default',
      },
    });
    expect(channel, channel.message).toMatchObject({ success: true });
    const found = await consoleGet<{
      data: { id: number; name: string }[] | { items?: { id: number; name: string }[] };
    }>(root.page, '/api/channel/search?keyword=sub-e2e-upstream');
    const channels = Array.isArray(found.data) ? found.data : (found.data.items ?? []);
    channelId = channels.find((c) => c.name === 'sub-e2e-upstream')!.id;
    const { page } = user;
    const made = await consoleCall<{ success: boolean; message: string }>(page, 'POST', '/api/token/', {
      name: 'sub-e2e',
      remain_quota: 0,
      unlimited_quota: true,
      expired_time: -1,
    });
    expect(made, made.message).toMatchObject({ success: true });
    const tokens = await consoleGet<{ data: { items?: { key: string }[] } | { key: string }[] }>(
      page,
      '/api/token/?p=0&size=10',
    );
    const list = Array.isArray(tokens.data) ? tokens.data : (tokens.data.items ?? []);
    const key = list[0]!.key.startsWith('sk-') ? list[0]!.key : `sk-${list[0]!.key}`;

    const call = async () => {
      const res = await fetch(`${BASE_URL}/v1/chat/completions`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'ping' }] }),
      });
      return { status: res.status, body: (await res.json()) as { error?: { message: string; code?: string } } };
    };
    // two calls fill the day (their settlements are written by the next flush, which the wallet's read shows)
    expect((await call()).status).toBe(200);
    expect((await call()).status).toBe(200);
    const daily = async () =>
      (
        await consoleGet<{ data: { subscriptions: { windows: { slot: string; used: number }[] }[] } }>(
          page,
          '/api/subscription/self',
        )
      ).data.subscriptions[0]!.windows.find((w) => w.slot === 'daily')!.used;
    await expect.poll(daily, { timeout: 10_000 }).toBe(1_000_000);
    // the plan alone pays (subscription_only): the next call is refused, naming the window and its reset
    const refused = await call();
    expect(refused.status).toBe(403);
    expect(refused.body.error?.message).toMatch(/^订阅额度不足：每日额度已用完，将于 \d{4}-\d\d-\d\d 00:00 重置/);
    // the wallet was never charged
    expect((await consoleGet<{ data: { quota: number } }>(page, '/api/user/self')).data.quota).toBe(3_500_000);

    await page.reload();
    const self = await consoleGet<{ data: { subscriptions: { subscription: { id: number } }[] } }>(
      page,
      '/api/subscription/self',
    );
    const id = self.data.subscriptions[0]!.subscription.id;
    await page.getByTestId(`my-plan-${id}-daily-used`).getByText('已用 $2.00 / $2.00').waitFor();
    expect(await page.getByTestId(`my-plan-${id}-daily-left`).textContent()).toBe('剩余 $0.00');
    expect(await page.getByTestId(`my-plan-${id}-daily-reset`).textContent()).toMatch(/^重置于 .+ 00:00:00 \(.+后\)$/);
    expect(await page.getByTestId(`my-plan-${id}-daily`).locator('.ant-progress').getAttribute('aria-valuenow')).toBe(
      '100',
    );
    await shot(page, 'subscription-05-window-used');
  });

  it("root sees the user's subscription in the user editor and invalidates it", async () => {
    const { page } = root;
    await page.goto(`${BASE_URL}/user/edit/${userId}`);
    const section = page.getByTestId('user-subscriptions');
    try {
      // the users list, the user and the plans load first; a loaded machine was seen to need more than 10 s
      await section.getByText(TITLE).waitFor({ timeout: 30_000 });
    } catch (e) {
      await shot(page, 'subscription-04-user-editor-failed');
      throw e;
    }
    await section.getByText('生效中').waitFor();
    const self = await consoleGet<{ data: { subscription: { id: number } }[] }>(
      page,
      `/api/subscription/admin/users/${userId}/subscriptions`,
    );
    const id = self.data[0]!.subscription.id;
    await shot(page, 'subscription-04-user-editor');
    await section.getByTestId(`user-sub-invalidate-${id}`).click();
    await page.getByText(`确定作废订阅 #${id}？它将立即结束，剩余额度失效。`).waitFor();
    await page.getByTestId(`user-sub-invalidate-ok-${id}`).click();
    await toast(page, '操作成功');
    await section.getByText('已作废').waitFor();
    // ended: no invalidate button any more, and the user's running plans are none
    expect(await section.getByTestId(`user-sub-invalidate-${id}`).count()).toBe(0);
    const mine = await consoleGet<{ data: { subscriptions: unknown[] } }>(user.page, '/api/subscription/self');
    expect(mine.data.subscriptions).toEqual([]);
    expect(root.pageErrors).toEqual([]);
  });

  it('leaves later specs neither the channel (its upstream closes; they route gpt-4o too) nor a plan on sale', async () => {
    const { page } = root;
    expect(await consoleCall(page, 'DELETE', `/api/channel/${channelId}`)).toMatchObject({ success: true });
    expect(
      await consoleCall(page, 'PATCH', `/api/subscription/admin/plans/${planId}`, { enabled: false }),
    ).toMatchObject({ success: true });
    expect((await consoleGet<{ data: unknown[] }>(page, '/api/subscription/plans')).data).toEqual([]);
  });
});
