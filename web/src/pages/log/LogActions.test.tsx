// Usage logs: the cleanup sends the exact DELETE only after its confirmation, with the chosen time; quota and the
// stat line are checked as the user reads them; the details text is rendered in full (expandable) in its column.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import dayjs from 'dayjs';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import LogPage from './index.js';

const log = {
  id: 9,
  created_at: 1700000000,
  type: 2,
  content: '模型倍率 1.00，分组倍率 1.00',
  username: 'alice',
  token_name: 'tok',
  model_name: 'gpt-4o',
  quota: 1250,
  prompt_tokens: 10,
  completion_tokens: 20,
  use_time: 1,
  is_stream: false,
  channel: 5,
  group: 'default',
  other: '',
};

let calls: Call[];

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem('quota_per_unit', '500000');
  localStorage.setItem('display_in_currency', 'true');
  localStorage.setItem(
    'user',
    JSON.stringify({ id: 1, role: 100, username: 'root', display_name: 'root', status: 1, group: 'default' }),
  );
  calls = recordFetch(({ method, path }) => {
    if (path === '/api/log/' && method === 'GET') return { items: [log], total: 1, page: 1, page_size: 10 };
    if (path === '/api/log/stat') return { quota: 2500000, rpm: 3, tpm: 40 };
    if (path === '/api/log/' && method === 'DELETE') return 12;
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const renderPage = async () => {
  renderWithApp([{ path: '/log', element: <LogPage /> }], '/log');
  await screen.findByTestId('log-details-9', {}, { timeout: 5000 });
};

describe('usage logs', () => {
  it('shows the quota and the period sum as dollars, and the details text', async () => {
    await renderPage();
    expect(screen.getByTestId('log-quota-9').textContent).toBe('$0.002500');
    expect(screen.getByTestId('log-stat').textContent).toContain('$5.00');
    expect(screen.getByTestId('log-details-9').textContent).toContain('模型倍率 1.00，分组倍率 1.00');
  });

  it('cleanup sends DELETE /api/log/?target_timestamp= the chosen time, only after the confirmation', async () => {
    await renderPage();
    const writesBefore = calls.filter((c) => c.method !== 'GET').length;
    const expected = dayjs().subtract(1, 'month').unix();
    fireEvent.click(screen.getByTestId('log-clean'));
    await screen.findByText(/之前的消费和错误日志吗？充值、管理和系统日志保留/);
    expect(calls.filter((c) => c.method !== 'GET').length).toBe(writesBefore);
    await act(async () => {
      fireEvent.click(screen.getByTestId('log-clean-confirm'));
    });
    const deletes = calls.filter((c) => c.method === 'DELETE');
    expect(deletes).toHaveLength(1);
    const m = /^\/api\/log\/\?target_timestamp=(\d+)$/.exec(deletes[0]!.url);
    expect(m).not.toBeNull();
    // the default "one month ago", taken when the page opened
    expect(Math.abs(Number(m![1]) - expected)).toBeLessThanOrEqual(10);
    expect(await screen.findByText('12 条日志已清理！')).toBeTruthy();
  });
});
