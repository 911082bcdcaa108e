// Tokens page in the DOM: the status switch works only for enabled (1) and disabled (2) tokens (spec §4).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import TokenPage from './index.js';

const token = (id: number, status: number) => ({
  id,
  key: `key${id}abcdefghijklmnopqrstuvwxyz`,
  status,
  name: `tok${id}`,
  created_time: 1700000000,
  expired_time: -1,
  remain_quota: 500000,
  unlimited_quota: false,
  model_limits_enabled: false,
  model_limits: '',
  allow_ips: '',
  used_quota: 0,
  group: '',
});

let calls: Call[];

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  calls = recordFetch(({ url }) =>
    url.startsWith('/api/token/?p=') ? [token(1, 1), token(2, 2), token(3, 3), token(4, 4)] : null,
  );
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

function renderPage() {
  renderWithApp([{ path: '/token', element: <TokenPage /> }], '/token');
}

const statusSwitch = (id: number) => screen.getByRole('switch', { name: `token-status-${id}` }) as HTMLButtonElement;

describe('token status switch', () => {
  it('is usable for enabled and disabled tokens, disabled for expired and exhausted ones', async () => {
    renderPage();
    await screen.findByText('tok4', {}, { timeout: 5000 });
    expect(statusSwitch(1).disabled).toBe(false);
    expect(statusSwitch(2).disabled).toBe(false);
    expect(statusSwitch(3).disabled).toBe(true);
    expect(statusSwitch(4).disabled).toBe(true);
    expect(screen.getByText('已过期')).toBeTruthy();
    expect(screen.getByText('已耗尽')).toBeTruthy();
  });

  it('clicking an expired token sends nothing; a disabled token is re-enabled via status_only', async () => {
    renderPage();
    await screen.findByText('tok4', {}, { timeout: 5000 });
    fireEvent.click(statusSwitch(3));
    fireEvent.click(statusSwitch(4));
    expect(calls.filter((c) => c.method === 'PUT')).toEqual([]);
    await act(async () => {
      fireEvent.click(statusSwitch(2));
    });
    expect(calls.filter((c) => c.method === 'PUT')).toEqual([
      { method: 'PUT', url: '/api/token/?status_only=true', body: { id: 2, status: 1 } },
    ]);
  });
});
