// The channels page through TanStack Query (issue 46): the refresh button and a repeated search read the
// list again by invalidation; and its phone toolbar (issue 46 point 12): at 390 px the secondary actions and the two
// toggles are one More menu, which asks the same confirmations; at 1280 px the toolbar is the desktop one.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import { restoreScreen, screenWidth } from '../../test/screen.js';
import ChannelPage from './index.js';

const channel = {
  id: 5,
  type: 1,
  name: 'phone-channel',
  models: 'gpt-4o',
  group: 'default',
  tag: '',
  status: 1,
  response_time: 0,
  balance: 0,
  used_quota: 0,
  priority: 0,
  weight: 0,
  created_time: 1700000000,
};

let calls: Call[];
const gets = (path: string) => calls.filter((c) => c.method === 'GET' && c.url.split('?')[0] === path);
beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem(
    'user',
    JSON.stringify({ id: 1, role: 100, username: 'root', display_name: 'root', status: 1, group: 'default' }),
  );
  calls = recordFetch(({ method, path }) => {
    if ((path === '/api/channel/' && method === 'GET') || path === '/api/channel/search') return [channel];
    if (path === '/api/group/') return ['default'];
    if (path === '/api/channel/types') return [];
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
  renderWithApp([{ path: '/channel', element: <ChannelPage /> }], '/channel');
  await screen.findByTestId('channel-name-5', {}, { timeout: 5000 });
};

/** Opens the More menu and returns it. */
async function openMore() {
  await act(async () => {
    fireEvent.click(screen.getByTestId('channel-more'));
  });
  return (await screen.findByTestId('channel-more-test-all')).closest('.ant-dropdown') as HTMLElement;
}

describe('channels through queries', () => {
  it('the refresh button reads the list again', async () => {
    await renderPage();
    expect(gets('/api/channel/')).toHaveLength(1);
    fireEvent.click(screen.getByRole('button', { name: /刷\s*新/ }));
    await waitFor(() => expect(gets('/api/channel/')).toHaveLength(2));
  });

  it('the same search twice asks the server twice, and is not paged', async () => {
    await renderPage();
    fireEvent.change(screen.getByPlaceholderText(/搜索渠道/), { target: { value: 'phone' } });
    const submit = screen.getByRole('button', { name: /查\s*询/ });
    fireEvent.click(submit);
    await waitFor(() => expect(gets('/api/channel/search')).toHaveLength(1));
    expect(gets('/api/channel/search')[0]!.url).toContain('keyword=phone');
    fireEvent.click(submit);
    await waitFor(() => expect(gets('/api/channel/search')).toHaveLength(2));
    expect(document.querySelector('.ant-pagination')).toBeNull();
  });
});

describe('channel toolbar on a phone', () => {
  it('at 390 px add, refresh and More are the actions; the rest is in the menu', async () => {
    screenWidth(390);
    await renderPage();
    const bar = within(screen.getByTestId('channel-toolbar-phone'));
    expect(bar.getByTestId('channel-add')).toBeTruthy();
    expect(bar.getByRole('button', { name: /刷\s*新/ })).toBeTruthy();
    for (const id of ['channel-test-all', 'channel-update-balances', 'channel-fix-abilities', 'channel-batch-delete'])
      expect(screen.queryByTestId(id)).toBeNull();
    expect(screen.queryByRole('switch')).toBeNull();
    const menu = within(await openMore());
    for (const text of [
      '删除禁用渠道',
      '删除所选通道',
      '批量设置标签',
      '测试所有通道',
      '更新所有已启用通道余额',
      '修复数据库一致性',
      '使用ID排序',
      '开启标签聚合',
    ])
      expect(menu.getByText(text)).toBeTruthy();
  });

  it('a menu action asks first, then sends its request', async () => {
    screenWidth(390);
    await renderPage();
    await openMore();
    await act(async () => {
      fireEvent.click(screen.getByTestId('channel-more-test-all'));
    });
    // the confirmation's title (antd also names the dialog by it)
    const [title] = await screen.findAllByText('确定要测试所有已启用通道吗？');
    const dialog = title!.closest('.ant-modal') as HTMLElement;
    expect(gets('/api/channel/test')).toHaveLength(0);
    await act(async () => {
      fireEvent.click(within(dialog).getByRole('button', { name: /确\s*定/ }));
    });
    await waitFor(() => expect(gets('/api/channel/test')).toHaveLength(1));
    expect(await screen.findByText('已成功开始测试所有已启用通道，请刷新页面查看结果。')).toBeTruthy();
  });

  it('the tag mode toggle in the menu lists by tag and is remembered', async () => {
    screenWidth(390);
    await renderPage();
    await openMore();
    await act(async () => {
      fireEvent.click(screen.getByTestId('channel-more-tag-mode'));
    });
    await waitFor(() => expect(gets('/api/channel/').some((c) => c.url.includes('tag_mode=true'))).toBe(true));
    expect(localStorage.getItem('channel-tag-mode')).toBe('true');
  });

  it('at 1280 px the toolbar is the desktop one', async () => {
    screenWidth(1280);
    await renderPage();
    expect(screen.queryByTestId('channel-toolbar-phone')).toBeNull();
    expect(screen.queryByTestId('channel-more')).toBeNull();
    expect(screen.getByTestId('channel-test-all')).toBeTruthy();
    expect(screen.getAllByRole('switch')).toHaveLength(2);
  });
});
