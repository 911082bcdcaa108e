// The tokens page through TanStack Query (issue 46): a change reloads the list by invalidation, a repeated search
// asks again; and its phone layout (issue 46 point 12): each token is one stacked cell with its status, quota,
// expiry, key and actions, where the wide table showed only the name and the actions.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import { restoreScreen, screenWidth } from '../../test/screen.js';
import TokenPage from './index.js';

const token = {
  id: 1,
  key: 'key1abcdefghijklmnopqrstuvwxyz',
  status: 2,
  name: 'phone-tok',
  created_time: 1700000000,
  expired_time: -1,
  remain_quota: 2500000,
  unlimited_quota: false,
  model_limits_enabled: false,
  model_limits: '',
  allow_ips: '',
  used_quota: 125000,
  group: '',
};

let calls: Call[];
const gets = (prefix: string) => calls.filter((c) => c.method === 'GET' && c.url.startsWith(prefix)).length;
beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem('quota_per_unit', '500000');
  localStorage.setItem('display_in_currency', 'true');
  calls = recordFetch(({ method, path }) => {
    if (path === '/api/token/' && method === 'GET') return [token];
    if (path === '/api/token/search') return [token];
    if (path === '/api/token/limits') return {};
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  restoreScreen();
  localStorage.clear();
});

const renderPage = async () => {
  renderWithApp([{ path: '/token', element: <TokenPage /> }], '/token');
  await screen.findByText('phone-tok', {}, { timeout: 5000 });
};

describe('tokens through queries', () => {
  it('enabling a token reloads the list', async () => {
    await renderPage();
    expect(gets('/api/token/?p=')).toBe(1);
    await act(async () => {
      fireEvent.click(screen.getByRole('switch', { name: 'token-status-1' }));
    });
    await waitFor(() => expect(gets('/api/token/?p=')).toBe(2));
  });

  it('the same search twice asks the server twice', async () => {
    await renderPage();
    fireEvent.change(screen.getByPlaceholderText('搜索令牌的名称 ...'), { target: { value: 'phone' } });
    const submit = screen.getByRole('button', { name: /查\s*询/ });
    fireEvent.click(submit);
    await waitFor(() => expect(gets('/api/token/search')).toBe(1));
    fireEvent.click(submit);
    await waitFor(() => expect(gets('/api/token/search')).toBe(2));
  });
});

describe('tokens on a phone', () => {
  it('at 390 px each token is one cell with status, quota, expiry, key and actions', async () => {
    screenWidth(390);
    await renderPage();
    const card = within(screen.getByTestId('token-card-1'));
    expect(card.getByText('已禁用')).toBeTruthy();
    const text = screen.getByTestId('token-card-1').textContent;
    expect(text).toContain('$5.00');
    expect(text).toContain('$0.25');
    expect(text).toContain('永不过期');
    expect(card.getByTestId('token-key-1')).toBeTruthy();
    expect(card.getByTestId('token-edit-1')).toBeTruthy();
    expect(card.getByTestId('token-delete-1')).toBeTruthy();
  });

  it('at 1280 px the tokens are a table with one column per field', async () => {
    screenWidth(1280);
    await renderPage();
    expect(screen.queryByTestId('token-card-1')).toBeNull();
    expect(screen.getAllByRole('columnheader').length).toBeGreaterThan(5);
  });
});
