// Redemption codes: the exact request of delete (after its confirmation) and disable, the quota as the user reads
// it, and a code created from a dollar amount.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import RedemptionPage from './index.js';

const code = (id: number, name: string, status: number, quota: number) => ({
  id,
  key: `k${id}`.padEnd(32, '0'),
  status,
  name,
  quota,
  created_time: 1700000000,
  redeemed_time: 0,
  used_user_id: 0,
});

let calls: Call[];

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem('quota_per_unit', '500000');
  localStorage.setItem('display_in_currency', 'true');
  calls = recordFetch(({ method, path }) => {
    if (path === '/api/redemption/' && method === 'GET')
      return { items: [code(3, 'gift', 1, 2500000), code(4, 'spent', 2, 50000)], total: 2, page: 1, page_size: 10 };
    if (path === '/api/redemption/' && method === 'POST') return ['newkey'];
    if (path === '/api/redemption/3' && method === 'GET') return code(3, 'gift', 1, 2500000);
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const renderList = async () => {
  renderWithApp([{ path: '/redemption', element: <RedemptionPage /> }], '/redemption');
  await screen.findByText('spent', {}, { timeout: 5000 });
};
const writes = () => calls.filter((c) => c.method !== 'GET');

describe('redemption codes', () => {
  it('shows quotas as dollars', async () => {
    await renderList();
    expect(within(screen.getByText('gift').closest('tr')!).getByText('$5.00')).toBeTruthy();
    expect(within(screen.getByText('spent').closest('tr')!).getByText('$0.10')).toBeTruthy();
  });

  it('delete sends DELETE /api/redemption/:id/ only after the confirmation', async () => {
    await renderList();
    fireEvent.click(screen.getByTestId('redemption-delete-3'));
    await screen.findByText('确定是否要删除此兑换码「gift」？');
    expect(writes()).toEqual([]);
    await act(async () => {
      fireEvent.click(screen.getByTestId('redemption-delete-confirm-3'));
    });
    await vi.waitFor(() =>
      expect(writes()).toEqual([{ method: 'DELETE', url: '/api/redemption/3/', body: undefined }]),
    );
  });

  it('disable and enable send status_only updates', async () => {
    await renderList();
    await act(async () => {
      fireEvent.click(screen.getByTestId('redemption-toggle-3'));
    });
    await act(async () => {
      fireEvent.click(screen.getByTestId('redemption-toggle-4'));
    });
    expect(writes()).toEqual([
      { method: 'PUT', url: '/api/redemption/?status_only=true', body: { id: 3, status: 2 } },
      { method: 'PUT', url: '/api/redemption/?status_only=true', body: { id: 4, status: 1 } },
    ]);
  });

  it('creates codes from a dollar quota', async () => {
    await renderList();
    fireEvent.click(screen.getByTestId('redemption-add'));
    const quota = (await screen.findByTestId('redemption-quota')) as HTMLInputElement;
    fireEvent.change(quota, { target: { value: '3' } });
    expect(screen.getByTestId('redemption-quota-units').textContent).toBe('= 1,500,000 额度');
    fireEvent.change(screen.getByPlaceholderText('留空则使用额度作为名称'), { target: { value: 'promo' } });
    await act(async () => {
      fireEvent.click(screen.getByTestId('redemption-submit'));
    });
    await vi.waitFor(() =>
      expect(writes()).toEqual([
        { method: 'POST', url: '/api/redemption/', body: { name: 'promo', quota: 1500000, count: 1 } },
      ]),
    );
  });

  it('edits a code: its stored values in the drawer, PUT with its id, the list read again', async () => {
    await renderList();
    const listReads = () => calls.filter((c) => c.method === 'GET' && c.url.startsWith('/api/redemption/?')).length;
    const row = screen.getByText('gift').closest('tr')!;
    fireEvent.click(within(row).getByRole('button', { name: /编\s*辑/ }));
    const name = (await screen.findByDisplayValue('gift')) as HTMLInputElement;
    expect(calls.some((c) => c.method === 'GET' && c.url === '/api/redemption/3')).toBe(true);
    fireEvent.change(name, { target: { value: 'gift-2' } });
    const before = listReads();
    await act(async () => {
      fireEvent.click(screen.getByTestId('redemption-submit'));
    });
    expect(await screen.findByText('兑换码更新成功！')).toBeTruthy();
    expect(writes()).toEqual([
      { method: 'PUT', url: '/api/redemption/', body: { id: 3, name: 'gift-2', quota: 2500000 } },
    ]);
    await vi.waitFor(() => expect(listReads()).toBeGreaterThan(before));
  });
});
