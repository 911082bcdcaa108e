// Wallet page in the DOM: top-up buttons that can only fail are disabled with the reason shown; the balance is checked
// as the user reads it.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import TopUpPage from './index.js';

let calls: Call[];

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem('quota_per_unit', '500000');
  localStorage.setItem('display_in_currency', 'true');
  calls = recordFetch(({ path }) => {
    if (path === '/api/user/self') return { quota: 1250000 };
    if (path === '/api/user/amount') return new Response(JSON.stringify({ message: 'success', data: '7.30' }));
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const page = (status: Record<string, unknown>) =>
  renderWithApp([{ path: '/topup', element: <TopUpPage /> }], '/topup', { setup: true, ...status });

const button = (testId: string) => screen.getByTestId(testId) as HTMLButtonElement;

describe('wallet top-up buttons', () => {
  it('are disabled with the reason while online top-up is off and no top-up link is set', async () => {
    page({ enable_online_topup: false, top_up_link: '' });
    // the balance as the user reads it: 1 250 000 quota at 500 000 per dollar
    expect(await screen.findByText('$2.50')).toBeTruthy();
    expect(button('pay-alipay').disabled).toBe(true);
    expect(button('pay-wechat').disabled).toBe(true);
    expect(button('topup-link').disabled).toBe(true);
    expect(screen.getByText('管理员未开启在线充值，可使用兑换码充值。')).toBeTruthy();
    expect(screen.getByTestId('topup-link-reason').textContent).toBe('管理员未设置充值链接');
    fireEvent.click(button('pay-alipay'));
    // the page's own reads only (the balance, the check-in status, the plans, the top-up history): no payment call
    expect(calls.map((c) => c.url).sort()).toEqual([
      '/api/subscription/plans',
      '/api/subscription/self',
      '/api/user/checkin',
      '/api/user/self',
      '/api/user/topup/self?p=1&page_size=10',
    ]);
  });

  it('are enabled, without a reason, when online top-up is on and a link is set', async () => {
    const open = vi.fn();
    vi.stubGlobal('open', open);
    page({ enable_online_topup: true, top_up_link: 'https://shop.example/buy', min_topup: 1 });
    await screen.findByText('$2.50');
    expect(button('pay-alipay').disabled).toBe(false);
    expect(button('pay-wechat').disabled).toBe(false);
    expect(screen.queryByTestId('online-topup-reason')).toBeNull();
    expect(screen.queryByTestId('topup-link-reason')).toBeNull();
    fireEvent.click(button('topup-link'));
    expect(open).toHaveBeenCalledWith('https://shop.example/buy', '_blank');
  });
});
