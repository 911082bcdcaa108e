// The wallet's Stripe top-up: offered only when /api/status has it on, with Stripe's own minimum; paying opens the
// Checkout link the server answers, and a refusal shows the server's message.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import TopUpPage from './index.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  localStorage.clear();
});

const LINK = 'https://checkout.stripe.com/c/pay/cs_test_1';
const payAnswer = (body: unknown) => new Response(JSON.stringify(body));

function serve(pay: unknown = { message: 'success', data: { pay_link: LINK } }): Call[] {
  return recordFetch(({ path, body }) => {
    if (path === '/api/user/self') return { quota: 100 };
    if (path === '/api/user/checkin') return new Response(JSON.stringify({ success: false, message: '' }));
    if (path === '/api/user/stripe/amount') {
      const amount = (body as { amount: number }).amount;
      return payAnswer({ message: 'success', data: (amount * 8).toFixed(2) });
    }
    if (path === '/api/user/stripe/pay') return payAnswer(pay);
    return null;
  });
}

describe('Stripe top-up on the wallet', () => {
  it('is not offered while /api/status has it off', async () => {
    await i18n.changeLanguage('zh');
    const calls = serve();
    renderWithApp([{ path: '/topup', element: <TopUpPage /> }], '/topup', {
      setup: true,
      enable_stripe_topup: false,
      stripe_min_topup: 3,
    });
    expect(await screen.findByTestId('wallet-balance')).toBeTruthy();
    await waitFor(() => expect(calls.some((c) => c.url === '/api/user/self')).toBe(true));
    expect(screen.queryByTestId('stripe-section')).toBeNull();
    expect(calls.some((c) => c.url.startsWith('/api/user/stripe/'))).toBe(false);
  });

  it('shows its minimum and price, and paying opens the returned Checkout link', async () => {
    await i18n.changeLanguage('zh');
    const open = vi.spyOn(window, 'open').mockImplementation(() => null);
    const calls = serve();
    renderWithApp([{ path: '/topup', element: <TopUpPage /> }], '/topup', {
      setup: true,
      enable_stripe_topup: true,
      stripe_min_topup: 3,
      stripe_unit_price: 8,
      min_topup: 1,
      display_in_currency: true,
    });
    expect((await screen.findByTestId('stripe-min')).textContent).toContain('最低 3');
    expect(((await screen.findByTestId('stripe-amount')) as HTMLInputElement).value).toBe('3');
    expect((await screen.findByTestId('stripe-price')).textContent).toContain('24.00');
    await act(async () => {
      fireEvent.click(screen.getByTestId('pay-stripe'));
    });
    await waitFor(() => expect(open).toHaveBeenCalledWith(LINK, '_blank'));
    expect(calls.filter((c) => c.url === '/api/user/stripe/pay')).toEqual([
      { method: 'POST', url: '/api/user/stripe/pay', body: { amount: 3, payment_method: 'stripe' } },
    ]);
  });

  it("shows the server's refusal and opens nothing", async () => {
    await i18n.changeLanguage('en');
    const open = vi.spyOn(window, 'open').mockImplementation(() => null);
    serve({ message: 'error', data: 'Stripe 支付未启用' });
    renderWithApp([{ path: '/topup', element: <TopUpPage /> }], '/topup', {
      setup: true,
      enable_stripe_topup: true,
      stripe_min_topup: 1,
    });
    await act(async () => {
      fireEvent.click(await screen.findByTestId('pay-stripe'));
    });
    expect(await screen.findByText('Stripe payment is not enabled')).toBeTruthy();
    expect(open).not.toHaveBeenCalled();
  });
});
