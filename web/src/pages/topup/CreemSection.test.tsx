// The wallet's Creem top-up: offered only when /api/status has it on, one card per product with its quota and
// price; buying confirms, then opens the checkout link the server answers, and a refusal shows the server's message.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import TopUpPage from './index.js';

const LINK = 'https://checkout.creem.io/ch_test_1';
const STARTER = { productId: 'prod_starter', name: 'Starter', price: 9.5, currency: 'USD', quota: 1_000_000 };
const PRO = { productId: 'prod_pro', name: 'Pro', price: 20, currency: 'EUR', quota: 2_500_000 };

function serve(pay: unknown = { message: 'success', data: { checkout_url: LINK, order_id: 'ref_1' } }): Call[] {
  return recordFetch(({ path }) => {
    if (path === '/api/user/self') return { quota: 100 };
    if (path === '/api/user/checkin') return new Response(JSON.stringify({ success: false, message: '' }));
    if (path === '/api/user/creem/pay') return new Response(JSON.stringify(pay));
    return null;
  });
}

const page = (status: Record<string, unknown>) =>
  renderWithApp([{ path: '/topup', element: <TopUpPage /> }], '/topup', { setup: true, ...status });

beforeEach(() => {
  localStorage.setItem('quota_per_unit', '500000');
  localStorage.setItem('display_in_currency', 'true');
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  localStorage.clear();
});

describe('Creem top-up on the wallet', () => {
  it('is not offered while /api/status has it off', async () => {
    await i18n.changeLanguage('zh');
    const calls = serve();
    page({ enable_creem_topup: false, creem_products: [STARTER] });
    expect(await screen.findByTestId('wallet-balance')).toBeTruthy();
    await waitFor(() => expect(calls.some((c) => c.url === '/api/user/self')).toBe(true));
    expect(screen.queryByTestId('creem-section')).toBeNull();
  });

  it('lists each product with its quota and price, and buying opens the checkout after confirming', async () => {
    await i18n.changeLanguage('zh');
    const open = vi.spyOn(window, 'open').mockImplementation(() => null);
    const calls = serve();
    page({ enable_creem_topup: true, creem_products: [STARTER, PRO] });
    const starter = await screen.findByTestId('creem-product-prod_starter');
    expect(within(starter).getByText('Starter')).toBeTruthy();
    expect(within(starter).getByText('充值额度：$2.00')).toBeTruthy();
    expect(within(starter).getByText('实付金额：9.50 USD')).toBeTruthy();
    const pro = screen.getByTestId('creem-product-prod_pro');
    expect(within(pro).getByText('充值额度：$5.00')).toBeTruthy();
    expect(within(pro).getByText('实付金额：20.00 EUR')).toBeTruthy();

    fireEvent.click(within(pro).getByTestId('creem-buy-prod_pro'));
    expect(await screen.findByText('产品：Pro')).toBeTruthy();
    expect(calls.some((c) => c.url === '/api/user/creem/pay')).toBe(false);
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: /确\s*定/ }));
    });
    await waitFor(() => expect(open).toHaveBeenCalledWith(LINK, '_blank'));
    expect(calls.filter((c) => c.url === '/api/user/creem/pay')).toEqual([
      { method: 'POST', url: '/api/user/creem/pay', body: { product_id: 'prod_pro', payment_method: 'creem' } },
    ]);
  });

  it("shows the server's refusal and opens nothing", async () => {
    await i18n.changeLanguage('en');
    const open = vi.spyOn(window, 'open').mockImplementation(() => null);
    serve({ message: 'error', data: '产品不存在' });
    page({ enable_creem_topup: true, creem_products: [STARTER] });
    fireEvent.click(await screen.findByTestId('creem-buy-prod_starter'));
    await act(async () => {
      fireEvent.click(await screen.findByRole('button', { name: 'OK' }));
    });
    expect(await screen.findByText('The product does not exist')).toBeTruthy();
    expect(open).not.toHaveBeenCalled();
  });
});
