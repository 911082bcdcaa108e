// Subscription plans through the console (docs/decisions/0015-subscription-plans.md step 8): root creates a plan with
// a daily window on /subscription; a user with enough balance buys it on the wallet page with the balance and sees
// the plan with its window (nothing used yet, the reset time shown), the balance lowered by the plan's price.
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

const USERNAME = 'sub_e2e_user';
const PASSWORD = 'sub-e2e-pass-1';
const TITLE = 'E2E 每日套餐';
// $10 of quota at new-api's default 500 000 per dollar
const USER_QUOTA = 5_000_000;

let root: Browser;
let user: Browser;
let planId = 0;
let userId = 0;

beforeAll(async () => {
  await ensureRootSetup();
  root = await launchBrowser();
  await loginAsRoot(root.page);
});

afterAll(async () => {
  await user?.close();
  await root?.close();
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

  it("root sees the user's subscription in the user editor and invalidates it", async () => {
    const { page } = root;
    await page.goto(`${BASE_URL}/user/edit/${userId}`);
    const section = page.getByTestId('user-subscriptions');
    await section.getByText(TITLE).waitFor();
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
});
