// The key manager dialog: each key's status with its reason and time from get_key_status, the exact manage request of
// each action (one key, all keys, the automatically disabled ones after their confirmation), one key's test, the
// status filter, and both languages.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import MultiKeyManager from './MultiKeyManager.js';
import type { Channel } from './logic.js';
import type { KeyStatusPage } from './multi-key.js';

const channel = {
  id: 7,
  type: 1,
  name: 'pool',
  models: 'gpt-4o',
  group: 'default',
  status: 1,
  response_time: 0,
  balance: 0,
  used_quota: 0,
  created_time: 1700000000,
  channel_info: {
    is_multi_key: true,
    multi_key_size: 3,
    multi_key_status_list: { '1': 3, '2': 2 },
    multi_key_polling_index: 0,
    multi_key_mode: 'polling',
  },
} satisfies Channel;

const page: KeyStatusPage = {
  keys: [
    { index: 0, status: 1, key_preview: 'sk-aaa…1111' },
    {
      index: 1,
      status: 3,
      key_preview: 'sk-bbb…2222',
      reason: 'Incorrect API key provided',
      disabled_time: 1700000000,
    },
    { index: 2, status: 2, key_preview: 'sk-ccc…3333', disabled_time: 1700000100 },
  ],
  total: 3,
  page: 1,
  page_size: 10,
  total_pages: 1,
  enabled_count: 1,
  manual_disabled_count: 1,
  auto_disabled_count: 1,
};

let calls: Call[];
let changed: number;

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  changed = 0;
  localStorage.setItem(
    'user',
    JSON.stringify({ id: 1, role: 100, username: 'root', display_name: 'root', status: 1, group: 'default' }),
  );
  calls = recordFetch(({ method, path, body }) => {
    if (path === '/api/channel/multi_key/manage') {
      const b = body as { action: string };
      if (b.action === 'get_key_status') return page;
      return new Response(JSON.stringify({ success: true, message: '密钥已禁用' }), { status: 200 });
    }
    if (method === 'GET' && path === '/api/channel/test/7')
      return new Response(JSON.stringify({ success: true, message: '', time: 0.42 }), { status: 200 });
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const manageCalls = () =>
  calls.filter((c) => c.url === '/api/channel/multi_key/manage').map((c) => c.body as Record<string, unknown>);

async function open() {
  renderWithApp(
    [
      {
        path: '/channel',
        element: <MultiKeyManager channel={channel} onClose={() => undefined} onChanged={() => changed++} />,
      },
    ],
    '/channel',
  );
  await screen.findByTestId('key-status-1', {}, { timeout: 5000 });
}

describe('multi-key manager', () => {
  it('shows each key as its preview, with status, reason and the counts', async () => {
    await open();
    expect(manageCalls()[0]).toEqual({ channel_id: 7, action: 'get_key_status', page: 1, page_size: 10 });
    expect(screen.getByText('sk-bbb…2222')).toBeTruthy();
    expect(screen.getByTestId('key-status-0').textContent).toBe('已启用');
    expect(screen.getByTestId('key-status-1').textContent).toBe('自动禁用');
    expect(screen.getByTestId('key-status-2').textContent).toBe('手动禁用');
    expect(screen.getByText('Incorrect API key provided')).toBeTruthy();
    expect(screen.getByTestId('key-counts').textContent).toBe('启用 1 · 手动禁用 1 · 自动禁用 1');
  });

  it('disables and enables one key, then reads the list and the channel page again', async () => {
    await open();
    await act(async () => {
      fireEvent.click(screen.getByTestId('key-disable-0'));
    });
    await act(async () => {
      fireEvent.click(screen.getByTestId('key-enable-1'));
    });
    const writes = manageCalls().filter((b) => b.action !== 'get_key_status');
    expect(writes).toEqual([
      { channel_id: 7, action: 'disable_key', key_index: 0 },
      { channel_id: 7, action: 'enable_key', key_index: 1 },
    ]);
    expect(manageCalls().filter((b) => b.action === 'get_key_status').length).toBe(3);
    expect(changed).toBe(2);
    expect((await screen.findAllByText('密钥已禁用')).length).toBeGreaterThan(0);
  });

  it('deletes a key and the automatically disabled keys only after confirming', async () => {
    await open();
    await act(async () => {
      fireEvent.click(screen.getByTestId('key-delete-2'));
    });
    expect(manageCalls().some((b) => b.action === 'delete_key')).toBe(false);
    await act(async () => {
      fireEvent.click(await screen.findByTestId('key-delete-confirm-2'));
    });
    await act(async () => {
      fireEvent.click(screen.getByTestId('key-delete-auto'));
    });
    const pop = (await screen.findByText('确定删除所有自动禁用的密钥？')).closest('.ant-popover') as HTMLElement;
    await act(async () => {
      fireEvent.click(within(pop).getByRole('button', { name: /OK|确\s*定/ }));
    });
    await act(async () => {
      fireEvent.click(screen.getByTestId('key-enable-all'));
    });
    expect(manageCalls().filter((b) => b.action !== 'get_key_status')).toEqual([
      { channel_id: 7, action: 'delete_key', key_index: 2 },
      { channel_id: 7, action: 'delete_disabled_keys' },
      { channel_id: 7, action: 'enable_all_keys' },
    ]);
  });

  it('tests one key by its index', async () => {
    await open();
    await act(async () => {
      fireEvent.click(screen.getByTestId('key-test-1'));
    });
    expect(calls.some((c) => c.method === 'GET' && c.url === '/api/channel/test/7?key_index=1')).toBe(true);
    expect(await screen.findByText('密钥 #1 测试成功，耗时 0.42 秒')).toBeTruthy();
  });

  it('speaks English', async () => {
    await i18n.changeLanguage('en');
    await open();
    expect(screen.getByTestId('key-status-1').textContent).toBe('Disabled automatically');
    expect(screen.getByText('Keys of pool')).toBeTruthy();
    expect(screen.getByTestId('key-counts').textContent).toBe(
      'Enabled 1 · disabled by hand 1 · disabled automatically 1',
    );
  });
});
