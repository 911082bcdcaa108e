// Redemption codes through TanStack Query (issue 46): disabling a code reloads the list by invalidation, and the
// same search twice asks the server twice.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import RedemptionPageView from './index.js';

const code = { id: 3, name: 'gift', status: 1, quota: 500000, created_time: 1700000000, used_user_id: 0, key: 'k3' };
let calls: Call[];
const gets = (path: string) => calls.filter((c) => c.method === 'GET' && c.url.split('?')[0] === path).length;

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  calls = recordFetch(({ method, path }) => {
    if (method === 'GET' && (path === '/api/redemption/' || path === '/api/redemption/search'))
      return { items: [code], total: 1, page: 1, page_size: 10 };
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe('redemption codes through queries', () => {
  it('disabling a code reloads the list', async () => {
    renderWithApp([{ path: '/redemption', element: <RedemptionPageView /> }], '/redemption');
    await screen.findByTestId('redemption-toggle-3', {}, { timeout: 5000 });
    expect(gets('/api/redemption/')).toBe(1);
    await act(async () => {
      fireEvent.click(screen.getByTestId('redemption-toggle-3'));
    });
    await waitFor(() =>
      expect(calls.filter((c) => c.method === 'PUT')).toEqual([
        { method: 'PUT', url: '/api/redemption/?status_only=true', body: { id: 3, status: 2 } },
      ]),
    );
    await waitFor(() => expect(gets('/api/redemption/')).toBe(2));
  });

  it('the same search twice asks twice', async () => {
    renderWithApp([{ path: '/redemption', element: <RedemptionPageView /> }], '/redemption');
    await screen.findByTestId('redemption-toggle-3', {}, { timeout: 5000 });
    fireEvent.change(screen.getByRole('textbox'), { target: { value: 'gift' } });
    const submit = screen.getByRole('button', { name: /查\s*询|搜\s*索/ });
    fireEvent.click(submit);
    await waitFor(() => expect(gets('/api/redemption/search')).toBe(1));
    fireEvent.click(submit);
    await waitFor(() => expect(gets('/api/redemption/search')).toBe(2));
  });
});
