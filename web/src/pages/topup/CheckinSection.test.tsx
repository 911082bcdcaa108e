// The wallet's daily check-in: hidden while the server has it off, a check-in credits and reloads the balance and
// spends the button for the day; a refusal shows the server's message.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import TopUpPage from './index.js';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const stats = (today: boolean) => ({
  enabled: true,
  min_quota: 1000,
  max_quota: 10000,
  stats: {
    total_quota: today ? 5000 : 0,
    total_checkins: today ? 1 : 0,
    checkin_count: today ? 1 : 0,
    checked_in_today: today,
  },
});

describe('daily check-in on the wallet', () => {
  it('stays hidden while the server has it off', async () => {
    await i18n.changeLanguage('zh');
    const calls: Call[] = recordFetch(({ path }) => {
      if (path === '/api/user/self') return { quota: 100 };
      if (path === '/api/user/checkin')
        return new Response(JSON.stringify({ success: false, message: '签到功能未启用' }));
      return null;
    });
    renderWithApp([{ path: '/topup', element: <TopUpPage /> }], '/topup', { setup: true });
    await waitFor(() => expect(calls.some((c) => c.url.startsWith('/api/user/checkin'))).toBe(true));
    expect(await screen.findByTestId('wallet-balance')).toBeTruthy();
    expect(screen.queryByTestId('checkin-section')).toBeNull();
  });

  it('checks in, reloads the balance and the status, and spends the button for the day', async () => {
    await i18n.changeLanguage('zh');
    let checkedIn = false;
    const calls: Call[] = recordFetch(({ path, method }) => {
      if (path === '/api/user/self') return { quota: checkedIn ? 5100 : 100 };
      if (path === '/api/user/checkin' && method === 'POST') {
        checkedIn = true;
        return { quota_awarded: 5000, checkin_date: '2026-12-06' };
      }
      if (path === '/api/user/checkin') return stats(checkedIn);
      return null;
    });
    renderWithApp([{ path: '/topup', element: <TopUpPage /> }], '/topup', { setup: true, quota_per_unit: 500000 });
    const button = await screen.findByTestId('checkin-submit');
    expect(button.textContent).toContain('立即签到');
    expect(screen.getByTestId('checkin-stats').textContent).toContain('本月已签到 0 天');
    await act(async () => {
      fireEvent.click(button);
    });
    await waitFor(() => expect(screen.getByTestId('checkin-submit').textContent).toContain('今日已签到'));
    expect((screen.getByTestId('checkin-submit') as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId('checkin-stats').textContent).toContain('本月已签到 1 天');
    expect(calls.filter((c) => c.url === '/api/user/checkin' && c.method === 'POST')).toHaveLength(1);
    await waitFor(() => expect(calls.filter((c) => c.url === '/api/user/self').length).toBe(2));
  });

  it("shows the server's refusal in English", async () => {
    await i18n.changeLanguage('en');
    recordFetch(({ path, method }) => {
      if (path === '/api/user/self') return { quota: 100 };
      if (path === '/api/user/checkin' && method === 'POST')
        return new Response(JSON.stringify({ success: false, message: '今日已签到' }));
      if (path === '/api/user/checkin') return stats(false);
      return null;
    });
    renderWithApp([{ path: '/topup', element: <TopUpPage /> }], '/topup', { setup: true });
    const button = await screen.findByTestId('checkin-submit');
    expect(button.textContent).toContain('Check in');
    await act(async () => {
      fireEvent.click(button);
    });
    expect(await screen.findByText('Already checked in today')).toBeTruthy();
  });
});
