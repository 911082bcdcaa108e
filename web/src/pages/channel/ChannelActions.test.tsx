// Destructive channel actions: the exact request each sends, only after its confirmation (delete, batch delete,
// delete disabled) or at once (disable, reversible); the balances report lists failed channels; the balance is
// checked as rendered.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import ChannelPage from './index.js';

const channel = (id: number, name: string, status: number, balance: number) => ({
  id,
  type: 1,
  name,
  base_url: '',
  other: '',
  models: 'gpt-4o',
  group: 'default',
  model_mapping: '',
  status_code_mapping: '',
  param_override: '',
  setting: '',
  test_model: '',
  auto_ban: 1,
  priority: 0,
  weight: 0,
  tag: 'blue',
  status,
  response_time: 0,
  balance,
  used_quota: 0,
  other_info: '',
  created_time: 1700000000,
});

let calls: Call[];
let balanceAnswer: unknown;

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  balanceAnswer = { updated: 1, failed: [] };
  localStorage.setItem(
    'user',
    JSON.stringify({ id: 1, role: 100, username: 'root', display_name: 'root', status: 1, group: 'default' }),
  );
  calls = recordFetch(({ method, path }) => {
    if (path === '/api/channel/' && method === 'GET') return [channel(5, 'alpha', 1, 12.5), channel(6, 'beta', 2, 0)];
    if (path === '/api/channel/update_balance') return balanceAnswer;
    if (path === '/api/group/') return ['default'];
    if (path === '/api/channel/types') return [];
    if (path === '/api/channel/batch') return 1;
    if (path === '/api/channel/disabled') return 1;
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const renderList = async () => {
  renderWithApp([{ path: '/channel', element: <ChannelPage /> }], '/channel');
  await screen.findByTestId('channel-name-6', {}, { timeout: 5000 });
};
const writes = () => calls.filter((c) => c.method !== 'GET');
const sentGets = (path: string) => calls.filter((c) => c.method === 'GET' && c.url === path);

async function confirmIn(title: string | RegExp) {
  const pop = (await screen.findByText(title)).closest('.ant-popover') as HTMLElement;
  await act(async () => {
    fireEvent.click(within(pop).getByRole('button', { name: /OK|确\s*定/ }));
  });
}

describe('channel actions', () => {
  it('shows the balance as dollars', async () => {
    await renderList();
    const row = within(screen.getByTestId('channel-name-5').closest('tr')!);
    expect(row.getByText('$12.50')).toBeTruthy();
  });

  it('disable sends PUT /api/channel/ with status 2 at once; enable status 1', async () => {
    await renderList();
    await act(async () => {
      fireEvent.click(screen.getByTestId('channel-disable-5'));
    });
    await act(async () => {
      fireEvent.click(screen.getByTestId('channel-enable-6'));
    });
    expect(writes()).toEqual([
      { method: 'PUT', url: '/api/channel/', body: { id: 5, status: 2 } },
      { method: 'PUT', url: '/api/channel/', body: { id: 6, status: 1 } },
    ]);
  });

  it('delete sends DELETE /api/channel/:id only after the confirmation', async () => {
    await renderList();
    fireEvent.click(screen.getByTestId('channel-delete-6'));
    await screen.findByText(/beta/, { selector: '.ant-popconfirm-title' });
    expect(writes()).toEqual([]);
    await act(async () => {
      fireEvent.click(screen.getByTestId('channel-delete-confirm-6'));
    });
    await vi.waitFor(() => expect(writes()).toEqual([{ method: 'DELETE', url: '/api/channel/6', body: undefined }]));
  });

  it('batch delete sends the selected ids to POST /api/channel/batch after the confirmation', async () => {
    await renderList();
    const row = screen.getByTestId('channel-name-5').closest('tr')!;
    fireEvent.click(within(row).getByRole('checkbox'));
    fireEvent.click(screen.getByTestId('channel-batch-delete'));
    expect(writes()).toEqual([]);
    await confirmIn(/确定是否要删除所选的 1 个通道/);
    await vi.waitFor(() =>
      expect(writes()).toEqual([{ method: 'POST', url: '/api/channel/batch', body: { ids: [5] } }]),
    );
  });

  it('delete disabled sends DELETE /api/channel/disabled after the confirmation', async () => {
    await renderList();
    fireEvent.click(screen.getByText('删除禁用渠道'));
    expect(writes()).toEqual([]);
    await confirmIn('确定是否要删除所有已禁用渠道？');
    await vi.waitFor(() =>
      expect(writes()).toEqual([{ method: 'DELETE', url: '/api/channel/disabled', body: undefined }]),
    );
  });
});

describe('update all balances', () => {
  it('lists each failed channel with its reason instead of a blanket success', async () => {
    balanceAnswer = {
      updated: 1,
      failed: [
        { id: 6, name: 'beta', message: 'status code: 401' },
        { id: 7, name: 'gamma', message: '尚未实现' },
      ],
    };
    await renderList();
    fireEvent.click(screen.getByTestId('channel-update-balances'));
    await confirmIn('确定要更新所有已启用通道余额吗？');
    expect(sentGets('/api/channel/update_balance')).toHaveLength(1);
    const list = await screen.findByTestId('balance-failures');
    expect(list.textContent).toContain('beta (#6)status code: 401');
    expect(list.textContent).toContain('gamma (#7)尚未实现');
    expect(screen.getAllByText('2 个通道的余额更新失败').length).toBeGreaterThan(0);
    expect(screen.getByText('已更新 1 个，失败 2 个：')).toBeTruthy();
    expect(screen.queryByText('已更新完毕所有已启用通道余额！')).toBeNull();
  });

  it('in English, names the count', async () => {
    await i18n.changeLanguage('en');
    balanceAnswer = { updated: 0, failed: [{ id: 6, name: 'beta', message: 'status code: 401' }] };
    await renderList();
    fireEvent.click(screen.getByTestId('channel-update-balances'));
    await confirmIn(/update the balances of all enabled channels/i);
    expect((await screen.findAllByText('The balance of 1 channel could not be updated')).length).toBeGreaterThan(0);
  });
});
