// Multi-key channels on the channels page: the drawer's add mode sends new-api's wrapped body (and its check the mode),
// an edited multi-key channel sends its key choice and key_mode, and the list marks a multi-key channel and opens its
// key manager.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import { drawerInput } from '../../test/drawer.js';
import ChannelPage from './index.js';

const POOL = {
  id: 9,
  type: 1,
  name: 'pool',
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
  tag: '',
  status: 1,
  response_time: 0,
  balance: 0,
  used_quota: 0,
  other_info: '',
  created_time: 1700000000,
  channel_info: {
    is_multi_key: true,
    multi_key_size: 4,
    multi_key_status_list: {},
    multi_key_polling_index: 0,
    multi_key_mode: 'polling',
  },
};

let calls: Call[];

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  calls = recordFetch(({ method, path }) => {
    if (path === '/api/channel/' && method === 'GET') return [POOL];
    if (path === '/api/channel/9') return POOL;
    if (path === '/api/group/') return ['default'];
    if (path === '/api/channel/types') return [];
    if (path === '/api/channel/models_enabled') return [];
    if (path === '/api/channel/multi_key/manage')
      return {
        keys: [{ index: 0, status: 1, key_preview: 'sk-aaa…1111' }],
        total: 1,
        page: 1,
        page_size: 10,
        total_pages: 1,
        enabled_count: 1,
        manual_disabled_count: 0,
        auto_disabled_count: 0,
      };
    return null;
  });
  localStorage.setItem(
    'user',
    JSON.stringify({ id: 1, role: 100, username: 'root', display_name: 'root', status: 1, group: 'default' }),
  );
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const render = (path: string) =>
  renderWithApp(
    [
      { path: '/channel', element: <ChannelPage /> },
      { path: '/channel/add', element: <ChannelPage /> },
      { path: '/channel/edit/:id', element: <ChannelPage /> },
    ],
    path,
  );
const sent = (method: string, path: string) => calls.filter((c) => c.method === method && c.url.split('?')[0] === path);

describe('multi-key channels on the channels page', () => {
  it('adds one channel holding every key, sending the add mode', async () => {
    render('/channel/add');
    fireEvent.change(await drawerInput('name'), { target: { value: 'pool' } });
    fireEvent.click(await screen.findByText('多密钥聚合'));
    fireEvent.change(await drawerInput('key'), { target: { value: 'sk-one\nsk-two\n\nsk-three' } });
    expect(await screen.findByText('将创建 1 个渠道，包含 3 个密钥')).toBeTruthy();
    fireEvent.change(await drawerInput('custom_model'), { target: { value: 'gpt-4o' } });
    fireEvent.click(screen.getByTestId('channel-add-model'));
    await act(async () => {
      fireEvent.click(screen.getByTestId('channel-submit'));
    });
    await vi.waitFor(() => expect(sent('POST', '/api/channel/')).toHaveLength(1));
    expect(sent('POST', '/api/channel/check')[0]!.body).toMatchObject({ mode: 'multi_to_single' });
    expect(sent('POST', '/api/channel/')[0]!.body).toMatchObject({
      mode: 'multi_to_single',
      multi_key_mode: 'random',
      channel: { name: 'pool', key: 'sk-one\nsk-two\nsk-three', models: 'gpt-4o' },
    });
  });

  it('edits a multi-key channel: its key choice, and new keys appended by default', async () => {
    render('/channel/edit/9');
    const name = (await drawerInput('name')) as HTMLInputElement;
    await vi.waitFor(() => expect(name.value).toBe('pool'));
    expect(await screen.findByText('此渠道有 4 个密钥；留空则不更改')).toBeTruthy();
    expect(screen.getByTestId('channel-key-mode')).toBeTruthy();
    fireEvent.change(await drawerInput('key'), { target: { value: 'sk-five' } });
    await act(async () => {
      fireEvent.click(screen.getByTestId('channel-submit'));
    });
    await vi.waitFor(() => expect(sent('PUT', '/api/channel/')).toHaveLength(1));
    expect(sent('PUT', '/api/channel/')[0]!.body).toMatchObject({
      id: 9,
      key: 'sk-five',
      key_mode: 'append',
      multi_key_mode: 'polling',
    });
  });

  it('marks a multi-key channel in the list and opens its key manager', async () => {
    render('/channel');
    expect((await screen.findByTestId('channel-multi-key-9', {}, { timeout: 5000 })).textContent).toBe('多密钥 4');
    await act(async () => {
      fireEvent.click(screen.getByTestId('channel-keys-9'));
    });
    expect(await screen.findByText('密钥管理：pool')).toBeTruthy();
    await vi.waitFor(() =>
      expect(sent('POST', '/api/channel/multi_key/manage')[0]!.body).toMatchObject({
        channel_id: 9,
        action: 'get_key_status',
      }),
    );
  });
});
