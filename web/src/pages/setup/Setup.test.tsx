// The first-run wizard: what it asks of /api/setup, what it sends, and what the operator is told.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import Setup from './index.js';

const ROUTES = [
  { path: '/setup', element: <Setup /> },
  { path: '/', element: <div>home page</div> },
];

let calls: Call[];
function serve(setup: unknown, post: unknown = null) {
  calls = recordFetch(({ method, path }) => {
    if (path === '/api/setup' && method === 'GET') return setup;
    if (path === '/api/setup' && method === 'POST') return post;
    return null;
  });
}

beforeEach(async () => {
  await i18n.changeLanguage('zh');
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('setup wizard', () => {
  it('creates the root account with the chosen mode (POST /api/setup), then says so', async () => {
    serve({ status: false, root_init: false, database_type: 'sqlite' });
    renderWithApp(ROUTES, '/setup');
    fireEvent.change(await screen.findByPlaceholderText('请输入管理员用户名'), { target: { value: 'root' } });
    fireEvent.change(screen.getByPlaceholderText('请输入管理员密码'), { target: { value: '12345678' } });
    fireEvent.change(screen.getByPlaceholderText('请确认管理员密码'), { target: { value: '12345678' } });
    fireEvent.click(screen.getByLabelText('自用模式'));
    // the page reloads 1.5 s after success: that timer is recorded, not run (a reload would end the test's page)
    const realSetTimeout = globalThis.setTimeout;
    const reload = vi
      .spyOn(globalThis, 'setTimeout')
      .mockImplementation(((fn: () => void, ms?: number) =>
        ms === 1500 ? 0 : realSetTimeout(fn, ms)) as unknown as typeof setTimeout);
    fireEvent.click(screen.getByRole('button', { name: /初始化系统/ }));
    expect(await screen.findByText('系统初始化成功，正在跳转...')).toBeTruthy();
    expect(calls.filter((c) => c.method === 'POST')).toEqual([
      {
        method: 'POST',
        url: '/api/setup',
        body: {
          username: 'root',
          password: '12345678',
          confirmPassword: '12345678',
          SelfUseModeEnabled: true,
          DemoSiteEnabled: false,
        },
      },
    ]);
    // the button stays busy until the reload
    expect((screen.getByRole('button', { name: /初始化系统/ }) as HTMLButtonElement).disabled).toBe(true);
    expect(reload.mock.calls.some(([, ms]) => ms === 1500)).toBe(true);
    reload.mockRestore();
  });

  it("shows the server's refusal and lets the operator try again", async () => {
    serve(
      { status: false, root_init: false, database_type: 'sqlite' },
      new Response(JSON.stringify({ success: false, message: '用户名长度不能超过12' })),
    );
    renderWithApp(ROUTES, '/setup');
    fireEvent.change(await screen.findByPlaceholderText('请输入管理员用户名'), { target: { value: 'root' } });
    fireEvent.change(screen.getByPlaceholderText('请输入管理员密码'), { target: { value: '12345678' } });
    fireEvent.change(screen.getByPlaceholderText('请确认管理员密码'), { target: { value: '12345678' } });
    fireEvent.click(screen.getByRole('button', { name: /初始化系统/ }));
    expect(await screen.findByText('用户名长度不能超过12')).toBeTruthy();
    await waitFor(() =>
      expect((screen.getByRole('button', { name: /初始化系统/ }) as HTMLButtonElement).disabled).toBe(false),
    );
  });

  it('leaves for the home page when the server is already set up', async () => {
    serve({ status: true, root_init: true, database_type: 'sqlite' });
    renderWithApp(ROUTES, '/setup');
    expect(await screen.findByText('home page')).toBeTruthy();
  });

  it('says when the setup state cannot be read', async () => {
    serve(new Response(JSON.stringify({ success: false, message: 'x' })));
    renderWithApp(ROUTES, '/setup');
    expect(await screen.findByText('获取初始化状态失败')).toBeTruthy();
  });
});
