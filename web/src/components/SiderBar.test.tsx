import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import '../i18n/index.js';
import i18n from '../i18n/index.js';
import { StatusProvider, type Status } from '../context/status.js';
import { UserProvider } from '../context/user.js';
import SiderBar from './SiderBar.js';
import Login from '../pages/auth/Login.js';

afterEach(() => {
  cleanup();
  localStorage.clear();
});

function renderAt(element: React.ReactNode, status: Status, path = '/token') {
  const router = createMemoryRouter([{ path: '*', element }], { initialEntries: [path] });
  // the login page sends its request through a TanStack mutation, as every page does (issue 46)
  return render(
    <QueryClientProvider client={new QueryClient()}>
      <StatusProvider initial={status}>
        <UserProvider>
          <RouterProvider router={router} />
        </UserProvider>
      </StatusProvider>
    </QueryClientProvider>,
  );
}

describe('SiderBar', () => {
  it('shows admin items only to admins and the dashboard only with data export', async () => {
    await i18n.changeLanguage('zh');
    localStorage.setItem('user', JSON.stringify({ id: 2, username: 'u', role: 1, status: 1, group: 'default' }));
    renderAt(<SiderBar collapsed={false} onCollapse={() => {}} />, { setup: true, enable_data_export: false });
    expect(screen.getByText('API令牌')).toBeTruthy();
    expect(screen.getByText('个人设置')).toBeTruthy();
    expect(screen.queryByText('用户管理')).toBeNull();
    expect(screen.queryByText('数据看板')).toBeNull();
    cleanup();
    localStorage.setItem('user', JSON.stringify({ id: 1, username: 'root', role: 100, status: 1, group: 'default' }));
    renderAt(<SiderBar collapsed={false} onCollapse={() => {}} />, { setup: true, enable_data_export: true });
    expect(screen.getByText('用户管理')).toBeTruthy();
    expect(screen.getByText('渠道')).toBeTruthy();
    expect(screen.getByText('数据看板')).toBeTruthy();
  });

  it('follows the language', async () => {
    await i18n.changeLanguage('en');
    localStorage.setItem('user', JSON.stringify({ id: 2, username: 'u', role: 1, status: 1, group: 'default' }));
    renderAt(<SiderBar collapsed={false} onCollapse={() => {}} />, { setup: true });
    expect(screen.getByText('API tokens')).toBeTruthy();
    await i18n.changeLanguage('zh');
  });
});

describe('Login page', () => {
  it('shows the expired notice and validates empty input', async () => {
    await i18n.changeLanguage('zh');
    renderAt(<Login />, { setup: true }, '/login?expired=true');
    expect(screen.getByText('未登录或登录已过期，请重新登录')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: /登\s*录/ }));
    expect(await screen.findByText('请输入用户名和密码！')).toBeTruthy();
  });

  it('says 聊天数据解析失败 once when the Chats option is malformed, and lists no chat link', async () => {
    await i18n.changeLanguage('zh');
    localStorage.setItem('user', JSON.stringify({ id: 2, username: 'u', role: 1, status: 1, group: 'default' }));
    renderAt(<SiderBar collapsed={false} onCollapse={() => {}} />, {
      setup: true,
      // as the option arrives when an admin saved broken JSON
      chats: '[{"Lobe": ' as unknown as Status['chats'],
    });
    expect(await screen.findByText('聊天数据解析失败')).toBeTruthy();
    expect(screen.getByText('操练场')).toBeTruthy();
    expect(screen.queryByText('Lobe')).toBeNull();
  });

  it('says nothing about well-formed chat links', async () => {
    await i18n.changeLanguage('zh');
    localStorage.setItem('user', JSON.stringify({ id: 2, username: 'u', role: 1, status: 1, group: 'default' }));
    renderAt(<SiderBar collapsed={false} onCollapse={() => {}} />, {
      setup: true,
      chats: [{ Lobe: 'https://lobe.example/?key={key}' }],
    });
    expect(await screen.findByText('Lobe')).toBeTruthy();
    expect(screen.queryByText('聊天数据解析失败')).toBeNull();
  });
});
