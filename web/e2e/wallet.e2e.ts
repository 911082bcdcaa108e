// Redemption codes and the wallet through the console UI: root creates a code on /redemption, redeems it on /topup,
// the balance goes up by exactly the code's quota, and the code shows as used and cannot be re-enabled.
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
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

let b: Browser;
// A stand-in EPay gateway: records the form the wallet page posts to /submit.php.
let gateway: Server;
let gatewayUrl = '';
const submitted: Record<string, string>[] = [];
const EPAY_KEY = 'e2e-merchant-key';

/** Console API write from inside the logged-in page. */
async function consolePut(page: Page, path: string, body: unknown): Promise<{ success: boolean; message: string }> {
  return page.evaluate(
    async ([p, b]) => {
      const user = JSON.parse(localStorage.getItem('user') ?? '{}') as { id?: number };
      const res = await fetch(p as string, {
        method: 'PUT',
        headers: { 'New-Api-User': String(user.id ?? -1), 'Content-Type': 'application/json' },
        body: JSON.stringify(b),
      });
      return (await res.json()) as { success: boolean; message: string };
    },
    [path, body] as const,
  );
}

/** EPay signature: sorted non-empty params except sign/sign_type, k=v joined by &, key appended, md5 hex. */
function epaySign(params: Record<string, string>, key: string): string {
  const text = Object.keys(params)
    .filter((k) => k !== 'sign' && k !== 'sign_type' && params[k] !== '')
    .sort()
    .map((k) => `${k}=${params[k]}`)
    .join('&');
  return createHash('md5')
    .update(text + key)
    .digest('hex');
}

const selfQuota = async (page: Page) =>
  (await consoleGet<{ data: { quota: number } }>(page, '/api/user/self')).data.quota;

beforeAll(async () => {
  await ensureRootSetup();
  gateway = createServer((req, res) => {
    let data = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (data += c));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/submit.php')
        submitted.push(Object.fromEntries(new URLSearchParams(data)));
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end('<html><body>mock gateway</body></html>');
    });
  });
  await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
  gatewayUrl = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
  b = await launchBrowser();
  await loginAsRoot(b.page);
});

afterAll(async () => {
  if (b) {
    // leave the payment settings as they were for any later spec
    for (const key of ['PayAddress', 'EpayId', 'EpayKey'])
      await consolePut(b.page, '/api/option/', { key, value: '' }).catch(() => undefined);
  }
  await b?.close();
  await new Promise<void>((resolve) => (gateway ? gateway.close(() => resolve()) : resolve()));
});

describe('redemption codes and wallet', () => {
  let key = '';

  it('creates a code on the redemption page and shows its key', async () => {
    const { page } = b;
    await page.goto(`${BASE_URL}/token`);
    await page.getByTestId('sidebar').getByText('兑换码管理').click();
    await page.waitForURL(/\/redemption$/);
    await page.getByTestId('redemption-page').waitFor();

    await page.getByRole('button', { name: '复制所选兑换码到剪贴板' }).click();
    await toast(page, '请至少选择一个兑换码！');

    await page.getByTestId('redemption-add').click();
    const form = page.getByTestId('redemption-form');
    await form.waitFor();
    // the quota is typed in dollars (the site displays currency), its quota units shown beside
    const quota = form.locator('input[data-testid=redemption-quota]');
    await quota.fill('0');
    await page.getByTestId('redemption-submit').click();
    await toast(page, '额度必须是正整数');
    await form.locator('input[name=name]').fill('e2e-gift');
    await quota.fill('1');
    await form.getByTestId('redemption-quota-units').getByText('= 500,000 额度').waitFor();
    await shot(page, 'wallet-01-redemption-form');
    await page.getByTestId('redemption-submit').click();

    const keys = page.getByTestId('redemption-created-keys');
    await keys.waitFor();
    key = (await keys.inputValue()).trim();
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    await shot(page, 'wallet-02-created-keys');
    await page
      .getByRole('button', { name: '关 闭' })
      .or(page.getByRole('button', { name: '关闭' }))
      .first()
      .click();

    const row = page.locator('tr', { hasText: 'e2e-gift' });
    await row.getByText('未使用').waitFor();
    expect(await row.textContent()).toContain('$1.00');
  });

  it('redeems the code on the wallet page and the balance goes up by its quota', async () => {
    const { page } = b;
    await page.getByTestId('sidebar').getByText('钱包').click();
    await page.waitForURL(/\/topup$/);
    const balance = page.getByTestId('wallet-balance');
    await balance.getByText(/\$\d/).waitFor();
    const before = await selfQuota(page);
    const beforeText = `$${(before / 500000).toFixed(2)}`;
    expect(await balance.textContent()).toContain(beforeText);

    await page.getByTestId('redeem-submit').click();
    await toast(page, '请输入兑换码！');

    await page.getByTestId('redeem-code').fill(key);
    await page.getByTestId('redeem-submit').click();
    await toast(page, '兑换成功！');
    await page.locator('.ant-modal').getByText('成功兑换额度：$1.00').waitFor();
    const afterText = `$${((before + 500000) / 500000).toFixed(2)}`;
    await balance.getByText(afterText).waitFor();
    expect(await selfQuota(page)).toBe(before + 500000);
    await shot(page, 'wallet-03-redeemed');
    await page.locator('.ant-modal').getByRole('button').last().click();

    // the same code again is refused and the balance stays
    await page.getByTestId('redeem-code').fill(key);
    await page.getByTestId('redeem-submit').click();
    await toast(page, '该兑换码已被使用');
    expect(await selfQuota(page)).toBe(before + 500000);
  });

  it('disables online top-up and the missing top-up link, with the reason beside them', async () => {
    const { page } = b;
    expect(await page.getByTestId('pay-alipay').isDisabled()).toBe(true);
    expect(await page.getByTestId('pay-wechat').isDisabled()).toBe(true);
    await page.getByTestId('online-topup-reason').getByText('管理员未开启在线充值，可使用兑换码充值。').waitFor();
    expect(await page.getByRole('button', { name: '获取兑换码' }).isDisabled()).toBe(true);
    await page.getByTestId('topup-link-reason').getByText('管理员未设置充值链接').waitFor();
  });

  it('pays online: posts the signed form to the gateway, and the notify credits the balance', async () => {
    const { page } = b;
    for (const [key, value] of [
      ['PayAddress', gatewayUrl],
      ['EpayId', '1001'],
      ['EpayKey', EPAY_KEY],
      ['MinTopUp', '2'],
    ]) {
      expect(await consolePut(page, '/api/option/', { key, value })).toMatchObject({ success: true });
    }
    await page.goto(`${BASE_URL}/topup`);
    await page.getByTestId('wallet-balance').getByText(/\$\d/).waitFor();
    const before = await selfQuota(page);

    const amount = page.locator('input[data-testid=topup-amount], [data-testid=topup-amount] input').first();
    await amount.fill('1');
    await page.getByTestId('pay-alipay').click();
    await toast(page, '充值数量不能小于 2');
    await amount.fill('3');
    await page.getByTestId('topup-price').getByText('实付金额：21.90 元').waitFor();
    await page.getByTestId('pay-alipay').click();
    const confirm = page.locator('.ant-modal-confirm');
    await confirm.getByText('实付金额：21.90 元').waitFor();
    await shot(page, 'wallet-04-pay-confirm');
    const popup = page.context().waitForEvent('page');
    await confirm.getByRole('button', { name: /确\s*定/ }).click();
    const tab = await popup;
    await tab.waitForLoadState();
    expect(await tab.textContent('body')).toContain('mock gateway');
    await tab.close();

    expect(submitted).toHaveLength(1);
    const form = submitted[0];
    expect(form).toMatchObject({ pid: '1001', type: 'alipay', money: '21.90', name: 'TUC3', sign_type: 'MD5' });
    expect(form.sign).toBe(epaySign(form, EPAY_KEY));
    const user = await consoleGet<{ data: { id: number } }>(page, '/api/user/self');
    expect(form.out_trade_no).toMatch(new RegExp(`^USR${user.data.id}NO[0-9a-zA-Z]{6}\\d{10}$`));

    // the gateway's notify (signed with the merchant key) credits 3 × QuotaPerUnit
    const notify: Record<string, string> = {
      pid: '1001',
      trade_no: 'GW123',
      out_trade_no: form.out_trade_no,
      type: 'alipay',
      name: 'TUC3',
      money: '21.90',
      trade_status: 'TRADE_SUCCESS',
    };
    const qs = new URLSearchParams({ ...notify, sign: epaySign(notify, EPAY_KEY), sign_type: 'MD5' }).toString();
    expect(await (await fetch(`${BASE_URL}/api/user/epay/notify?${qs}`)).text()).toBe('success');
    expect(await selfQuota(page)).toBe(before + 3 * 500000);
    await page.reload();
    await page
      .getByTestId('wallet-balance')
      .getByText(`$${((before + 3 * 500000) / 500000).toFixed(2)}`)
      .waitFor();
  });

  it('shows the code as used, with enable and edit unavailable', async () => {
    const { page } = b;
    await page.goto(`${BASE_URL}/redemption`);
    const row = page.locator('tr', { hasText: 'e2e-gift' });
    await row.getByText('已使用').waitFor();
    await expect(row.getByRole('button', { name: /编\s*辑/ }).isDisabled()).resolves.toBe(true);
    await expect(row.getByRole('button', { name: /禁\s*用/ }).isDisabled()).resolves.toBe(true);
    expect(b.pageErrors).toEqual([]);
  });
});
