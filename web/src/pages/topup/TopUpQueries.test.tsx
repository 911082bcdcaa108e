// The wallet through TanStack Query (issue 46): a redeemed code reloads the balance by invalidating the caller's
// own user (the key the personal page shares), and the price is asked once per amount.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import TopUpPage from './index.js';

let calls: Call[];
const count = (path: string) => calls.filter((c) => c.url.split('?')[0] === path).length;

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  calls = recordFetch(({ path }) => {
    if (path === '/api/user/self') return { quota: 1250000 };
    if (path === '/api/user/topup') return 500000;
    if (path === '/api/user/amount') return new Response(JSON.stringify({ message: 'success', data: '7.30' }));
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe('wallet through queries', () => {
  it('a redeemed code reloads the balance', async () => {
    renderWithApp([{ path: '/topup', element: <TopUpPage /> }], '/topup', { setup: true });
    await waitFor(() => expect(count('/api/user/self')).toBe(1), { timeout: 5000 });
    fireEvent.change(screen.getByTestId('redeem-code'), { target: { value: 'code-1' } });
    await act(async () => {
      fireEvent.click(screen.getByTestId('redeem-submit'));
    });
    await waitFor(() => expect(count('/api/user/topup')).toBe(1));
    await waitFor(() => expect(count('/api/user/self')).toBe(2));
  });

  it('asks the price of the starting amount once', async () => {
    renderWithApp([{ path: '/topup', element: <TopUpPage /> }], '/topup', {
      setup: true,
      enable_online_topup: true,
      min_topup: 1,
    });
    await waitFor(() => expect(count('/api/user/amount')).toBe(1), { timeout: 5000 });
    expect(await screen.findByText(/7\.30/)).toBeTruthy();
    expect(count('/api/user/amount')).toBe(1);
  });
});
