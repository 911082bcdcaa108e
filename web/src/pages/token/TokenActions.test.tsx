// Tokens page: the delete request after its confirmation, money as the user reads it, and the drawer's expiry picker
// and dollar quota field turned into the body new-api expects.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import TokenPage from './index.js';

const token = (id: number, remain: number, used: number) => ({
  id,
  key: `key${id}abcdefghijklmnopqrstuvwxyz`,
  status: 1,
  name: `tok${id}`,
  created_time: 1700000000,
  expired_time: -1,
  remain_quota: remain,
  unlimited_quota: false,
  model_limits_enabled: false,
  model_limits: '',
  allow_ips: '',
  used_quota: used,
  group: '',
});

let calls: Call[];

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem('quota_per_unit', '500000');
  localStorage.setItem('display_in_currency', 'true');
  calls = recordFetch(({ method, path }) => {
    if (path === '/api/token/' && method === 'GET') return [token(1, 2500000, 125000), token(2, 0, 0)];
    if (path === '/api/token/1' && method === 'GET') return token(1, 2500000, 125000);
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const renderPage = async () => {
  renderWithApp([{ path: '/token', element: <TokenPage /> }], '/token');
  await screen.findByText('tok2', {}, { timeout: 5000 });
};
const writes = () => calls.filter((c) => c.method !== 'GET');

describe('tokens page', () => {
  it('shows remaining and used quota as dollars', async () => {
    await renderPage();
    const row = within(screen.getByText('tok1').closest('tr')!);
    expect(row.getByText('$5.00')).toBeTruthy();
    expect(row.getByText('$0.25')).toBeTruthy();
  });

  it('deletes with DELETE /api/token/:id only after the confirmation', async () => {
    await renderPage();
    fireEvent.click(screen.getByTestId('token-delete-1'));
    await screen.findByText('确定是否要删除此令牌「tok1」？');
    expect(writes()).toEqual([]);
    await act(async () => {
      fireEvent.click(screen.getByTestId('token-delete-confirm-1'));
    });
    await waitFor(() => expect(writes()).toEqual([{ method: 'DELETE', url: '/api/token/1', body: undefined }]));
  });

  it('creates a token from a dollar quota and the "one day" expiry shortcut', async () => {
    await renderPage();
    fireEvent.click(screen.getByTestId('token-add'));
    const form = within(await screen.findByTestId('token-form'));
    fireEvent.change(form.getByPlaceholderText('请输入名称'), { target: { value: 'mine' } });
    const quota = screen.getByTestId('token-quota') as HTMLInputElement;
    expect(quota.value).toBe('1'); // the default 500 000 quota, typed as dollars
    fireEvent.change(quota, { target: { value: '2.5' } });
    expect(screen.getByTestId('token-quota-units').textContent).toBe('= 1,250,000 额度');
    const before = Math.floor(Date.now() / 1000);
    fireEvent.click(form.getByText(/^一\s*天$/));
    expect((screen.getByTestId('token-expiry') as HTMLInputElement).value).toMatch(
      /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/,
    );
    await act(async () => {
      fireEvent.click(screen.getByTestId('token-submit'));
    });
    await waitFor(() => expect(writes()).toHaveLength(1));
    const [post] = writes();
    expect(post).toMatchObject({
      method: 'POST',
      url: '/api/token/',
      body: { name: 'mine', remain_quota: 1250000, unlimited_quota: false },
    });
    const expiry = (post!.body as { expired_time: number }).expired_time;
    expect(expiry - before).toBeGreaterThanOrEqual(86400 - 1);
    expect(expiry - before).toBeLessThanOrEqual(86400 + 5);
  });

  it('"never" clears the picker and sends expired_time -1', async () => {
    await renderPage();
    fireEvent.click(screen.getByTestId('token-edit-1'));
    const form = within(await screen.findByTestId('token-form'));
    await waitFor(() => expect((screen.getByTestId('token-quota') as HTMLInputElement).value).toBe('5'));
    fireEvent.click(form.getByText(/^一\s*天$/));
    fireEvent.click(form.getAllByText('永不过期')[0]!);
    expect((screen.getByTestId('token-expiry') as HTMLInputElement).value).toBe('');
    await act(async () => {
      fireEvent.click(screen.getByTestId('token-submit'));
    });
    await waitFor(() => expect(writes()).toHaveLength(1));
    expect(writes()[0]).toMatchObject({
      method: 'PUT',
      url: '/api/token/',
      body: { id: 1, expired_time: -1, remain_quota: 2500000 },
    });
  });
});
