import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import type { Status } from '../../context/status.js';
import { recordFetch, renderWithApp } from '../../test/harness.js';
import Login from '../auth/Login.js';
import Personal from '../personal/index.js';
import { TELEGRAM_WIDGET_URL } from './TelegramWidget.js';

const ON: Status = {
  setup: true,
  wechat_login: true,
  wechat_qrcode: 'https://img.example.com/qr.png',
  telegram_oauth: true,
  telegram_bot_name: 'gateway_bot',
};
const USER = { id: 9, username: 'wechat_9', display_name: 'WeChat User', role: 1, status: 1, group: 'default' };

beforeEach(async () => {
  await i18n.changeLanguage('zh');
});

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const widgetScript = () =>
  document.querySelector<HTMLScriptElement>('[data-testid="telegram-widget"] script') ?? undefined;

describe('login page: WeChat and Telegram', () => {
  const routes = [
    { path: '/login', element: <Login /> },
    { path: '/token', element: <div>token page</div> },
  ];

  it('shows neither while /api/status has them off', async () => {
    recordFetch(() => ({}));
    renderWithApp(routes, '/login', { setup: true });
    await screen.findByText('用户登录');
    expect(screen.queryByTestId('login-wechat')).toBeNull();
    expect(screen.queryByTestId('telegram-widget')).toBeNull();
  });

  it('WeChat: the QR code and a code, sent to /api/oauth/wechat, then logged in like password login', async () => {
    const calls = recordFetch(({ path }) => (path === '/api/oauth/wechat' ? USER : {}));
    const { router } = renderWithApp(routes, '/login', ON);
    fireEvent.click(await screen.findByTestId('login-wechat'));
    const dialog = await screen.findByTestId('wechat-dialog');
    expect(dialog.querySelector('img')?.getAttribute('src')).toBe('https://img.example.com/qr.png');
    fireEvent.change(screen.getByTestId('wechat-code'), { target: { value: ' 123456 ' } });
    fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: '登 录' }));
    expect(await screen.findByText('token page')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/token');
    expect(calls.filter((c) => c.url.startsWith('/api/oauth/')).map((c) => c.url)).toEqual([
      '/api/oauth/wechat?code=123456',
    ]);
    expect(JSON.parse(localStorage.getItem('user')!)).toEqual(USER);
  });

  it('WeChat: a refused code is shown and the dialog stays', async () => {
    recordFetch(({ path }) =>
      path === '/api/oauth/wechat'
        ? new Response(JSON.stringify({ success: false, message: '验证码错误或已过期' }))
        : {},
    );
    renderWithApp(routes, '/login', ON);
    fireEvent.click(await screen.findByTestId('login-wechat'));
    fireEvent.change(await screen.findByTestId('wechat-code'), { target: { value: 'bad' } });
    fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: '登 录' }));
    expect(await screen.findByText('验证码错误或已过期')).toBeTruthy();
    expect(screen.getByTestId('wechat-dialog')).toBeTruthy();
    expect(localStorage.getItem('user')).toBeNull();
  });

  it("Telegram: embeds the bot's widget, which returns to the console's /oauth/telegram page (no eval'd callback)", async () => {
    recordFetch(() => ({}));
    renderWithApp(routes, '/login', ON);
    await screen.findByTestId('telegram-widget');
    const script = widgetScript()!;
    expect(script.src).toBe(TELEGRAM_WIDGET_URL);
    expect(script.getAttribute('data-telegram-login')).toBe('gateway_bot');
    expect(script.getAttribute('data-auth-url')).toBe(`${window.location.origin}/oauth/telegram`);
    // the widget eval()s data-onauth, which the console's Content-Security-Policy refuses
    expect(script.hasAttribute('data-onauth')).toBe(false);
  });
});

describe('personal settings: bind WeChat and Telegram, unbind', () => {
  const self = {
    id: 3,
    username: 'ada',
    display_name: 'Ada',
    role: 1,
    status: 1,
    group: 'default',
    email: 'ada@example.com',
    quota: 0,
    used_quota: 0,
    request_count: 0,
    aff_count: 0,
    aff_quota: 0,
    aff_history_quota: 0,
    github_id: 'ada-gh',
    wechat_id: '',
    telegram_id: '',
  };
  const status: Status = { ...ON, github_oauth: true, github_client_id: 'Iv1.gh' };

  function serve(overrides: Record<string, unknown> = {}) {
    localStorage.setItem('user', JSON.stringify({ id: 3 }));
    return recordFetch(({ path }) => {
      if (path in overrides) return overrides[path];
      if (path === '/api/user/self') return self;
      if (path === '/api/user/models') return [];
      return '';
    });
  }

  it('unbinds a bound login after the confirm, and shows the refusal when it is the last way in', async () => {
    const calls = serve({
      '/api/user/self/bindings/github': new Response(
        JSON.stringify({ success: false, message: '解绑后将无法登录此账户，请先设置密码或绑定其他登录方式' }),
      ),
    });
    renderWithApp([{ path: '*', element: <Personal /> }], '/personal', status);
    fireEvent.click(await screen.findByTestId('unbind-github'));
    expect(calls.some((c) => c.method === 'DELETE')).toBe(false);
    await waitFor(() => expect(document.querySelector('.ant-popconfirm .ant-btn-primary')).toBeTruthy());
    fireEvent.click(document.querySelector('.ant-popconfirm .ant-btn-primary')!);
    expect(await screen.findByText('解绑后将无法登录此账户，请先设置密码或绑定其他登录方式')).toBeTruthy();
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.url)).toEqual(['/api/user/self/bindings/github']);
    // unbound logins have no unbind button; the email has one
    expect(screen.queryByTestId('unbind-wechat')).toBeNull();
    expect(screen.queryByTestId('unbind-telegram')).toBeNull();
    expect(screen.getByTestId('unbind-email')).toBeTruthy();
  });

  it('binds WeChat with the code from the dialog (POST {code})', async () => {
    const calls = serve();
    renderWithApp([{ path: '*', element: <Personal /> }], '/personal', status);
    fireEvent.click(await screen.findByTestId('bind-wechat'));
    fireEvent.change(await screen.findByTestId('wechat-code'), { target: { value: '654321' } });
    fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: '绑 定' }));
    expect(await screen.findByText('绑定成功！')).toBeTruthy();
    expect(calls.find((c) => c.url === '/api/oauth/wechat/bind')).toEqual({
      method: 'POST',
      url: '/api/oauth/wechat/bind',
      body: { code: '654321' },
    });
  });

  it("binds Telegram through the widget, which sends the browser to the server's bind route", async () => {
    serve();
    renderWithApp([{ path: '*', element: <Personal /> }], '/personal', status);
    fireEvent.click(await screen.findByTestId('bind-telegram'));
    await waitFor(() => expect(widgetScript()).toBeTruthy());
    expect(widgetScript()!.getAttribute('data-telegram-login')).toBe('gateway_bot');
    expect(widgetScript()!.getAttribute('data-auth-url')).toBe(`${window.location.origin}/api/oauth/telegram/bind`);
  });
});
