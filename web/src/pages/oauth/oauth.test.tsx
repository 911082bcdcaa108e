import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, configure, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import type { Status } from '../../context/status.js';
import { navigation } from '../../lib/api.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import Login from '../auth/Login.js';
import Personal from '../personal/index.js';
import OAuthCallback, { FAILURE_REDIRECT_MS } from './Callback.js';
import { findProvider, type OAuthProviderId } from './providers.js';

const ORIGIN = window.location.origin;

const ALL_ON: Status = {
  setup: true,
  github_oauth: true,
  github_client_id: 'Iv1.gh-client',
  linuxdo_oauth: true,
  linuxdo_client_id: 'ld-client',
  oidc_enabled: true,
  oidc_client_id: 'oidc-client',
  oidc_authorization_endpoint: 'https://idp.example.com/oauth2/v1/authorize',
  discord_oauth: true,
  discord_client_id: '1234567890',
};

let redirects: string[];

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  redirects = [];
  vi.spyOn(navigation, 'redirect').mockImplementation((url) => void redirects.push(url));
});

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
  vi.useRealTimers();
  localStorage.clear();
});

const shownButtons = () =>
  Array.from(document.querySelectorAll('[data-testid^="oauth-"]'))
    .map((e) => e.getAttribute('data-testid'))
    .filter((id) => id !== 'oauth-buttons');

function authorize(id: OAuthProviderId, status: Status = ALL_ON): URL {
  return new URL(findProvider(id)!.authorizeUrl(status, 'st4te', ORIGIN));
}

describe('login page provider buttons', () => {
  it('shows no provider row when /api/status enables none', async () => {
    recordFetch(() => ({}));
    renderWithApp([{ path: '*', element: <Login /> }], '/login', { setup: true, github_oauth: false });
    await screen.findByText('用户登录');
    expect(screen.queryByTestId('oauth-buttons')).toBeNull();
  });

  it('shows a button for each enabled provider, in order', async () => {
    recordFetch(() => ({}));
    renderWithApp([{ path: '*', element: <Login /> }], '/login', ALL_ON);
    await screen.findByTestId('oauth-buttons');
    expect(shownButtons()).toEqual(['oauth-github', 'oauth-linuxdo', 'oauth-oidc', 'oauth-discord']);
  });

  it('hides a provider whose flag is off or whose client id or endpoint is missing', async () => {
    recordFetch(() => ({}));
    const status: Status = {
      setup: true,
      github_oauth: true,
      github_client_id: 'gh',
      linuxdo_oauth: false,
      linuxdo_client_id: 'ld',
      oidc_enabled: true,
      oidc_client_id: 'oidc-client',
      oidc_authorization_endpoint: '',
    };
    renderWithApp([{ path: '*', element: <Login /> }], '/login', status);
    await screen.findByTestId('oauth-buttons');
    expect(shownButtons()).toEqual(['oauth-github']);
  });

  it('gets a state carrying the stored invite code, then leaves for GitHub', async () => {
    localStorage.setItem('aff', 'Ab3x');
    const calls = recordFetch(({ path }) => (path === '/api/oauth/state' ? 'st4te' : {}));
    renderWithApp([{ path: '*', element: <Login /> }], '/login', ALL_ON);
    fireEvent.click(await screen.findByTestId('oauth-github'));
    await waitFor(() => expect(redirects).toHaveLength(1));
    expect(calls.filter((c) => c.url.startsWith('/api/oauth/'))).toEqual([
      { method: 'GET', url: '/api/oauth/state?aff=Ab3x', body: undefined },
    ]);
    const url = new URL(redirects[0]!);
    expect(url.origin + url.pathname).toBe('https://github.com/login/oauth/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: 'Iv1.gh-client',
      state: 'st4te',
      scope: 'user:email',
    });
  });

  it('asks for a bare state without an invite code, and stays when the server refuses one', async () => {
    const calls = recordFetch(({ path }) =>
      path === '/api/oauth/state'
        ? new Response(JSON.stringify({ success: false, message: '请求过于频繁' }), { status: 200 })
        : {},
    );
    renderWithApp([{ path: '*', element: <Login /> }], '/login', ALL_ON);
    fireEvent.click(await screen.findByTestId('oauth-oidc'));
    expect(await screen.findByText('获取授权状态失败：请求过于频繁')).toBeTruthy();
    expect(calls.map((c) => c.url)).toContain('/api/oauth/state');
    expect(redirects).toEqual([]);
  });
});

describe('authorize URLs', () => {
  it('Linux DO: code flow with client id and state, no redirect_uri', () => {
    const url = authorize('linuxdo');
    expect(url.origin + url.pathname).toBe('https://connect.linux.do/oauth2/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      response_type: 'code',
      client_id: 'ld-client',
      state: 'st4te',
    });
  });

  it('OIDC: the status endpoint, openid scopes, and the /oauth/oidc return page', () => {
    const url = authorize('oidc');
    expect(url.origin + url.pathname).toBe('https://idp.example.com/oauth2/v1/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: 'oidc-client',
      redirect_uri: `${ORIGIN}/oauth/oidc`,
      response_type: 'code',
      scope: 'openid profile email',
      state: 'st4te',
    });
  });

  it('OIDC: keeps a query the endpoint already has', () => {
    const url = authorize('oidc', { ...ALL_ON, oidc_authorization_endpoint: 'https://idp.example.com/auth?tenant=t1' });
    expect(url.searchParams.get('tenant')).toBe('t1');
    expect(url.searchParams.get('state')).toBe('st4te');
  });

  it('Discord: code flow returning to /oauth/discord', () => {
    const url = authorize('discord');
    expect(url.origin + url.pathname).toBe('https://discord.com/oauth2/authorize');
    expect(url.searchParams.get('client_id')).toBe('1234567890');
    expect(url.searchParams.get('redirect_uri')).toBe(`${ORIGIN}/oauth/discord`);
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('state')).toBe('st4te');
  });
});

function renderCallback(path: string) {
  return renderWithApp(
    [
      {
        path: '/oauth/:provider',
        element: <OAuthCallback />,
      },
      { path: '/setting', element: <div>setting page</div> },
      { path: '/token', element: <div>token page</div> },
    ],
    path,
  ).router;
}

const oauthCalls = (calls: Call[]) => calls.filter((c) => c.url.startsWith('/api/oauth/'));

describe('OAuth return page', () => {
  // StrictMode runs effects twice in development, and only when it wraps the root: the code must still go out once.
  beforeEach(() => configure({ reactStrictMode: true }));
  afterEach(() => configure({ reactStrictMode: false }));

  it('binds: one call with code and state, "Binding successful!", then /setting, no user stored', async () => {
    const calls = recordFetch(() => new Response(JSON.stringify({ success: true, message: 'bind', data: null })));
    const router = renderCallback('/oauth/github?code=c0de&state=st4te');
    expect(screen.getByText('处理中...')).toBeTruthy();
    expect(await screen.findByText('setting page')).toBeTruthy();
    expect(await screen.findByText('绑定成功！')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/setting');
    expect(oauthCalls(calls)).toEqual([
      { method: 'GET', url: '/api/oauth/github?code=c0de&state=st4te', body: undefined },
    ]);
    expect(localStorage.getItem('user')).toBeNull();
  });

  it('logs in: stores the user like password login, "Login successful!", then /token', async () => {
    const user = { id: 7, username: 'oidc_7', display_name: 'Ada', role: 1, status: 1, group: 'default' };
    const calls = recordFetch(() => new Response(JSON.stringify({ success: true, message: '', data: user })));
    const router = renderCallback('/oauth/oidc?code=abc&state=xyz');
    expect(await screen.findByText('token page')).toBeTruthy();
    expect(await screen.findByText('登录成功！')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/token');
    expect(JSON.parse(localStorage.getItem('user')!)).toEqual(user);
    expect(oauthCalls(calls).map((c) => c.url)).toEqual(['/api/oauth/oidc?code=abc&state=xyz']);
  });

  it("logs in with Telegram's signed fields, which its widget sends here, and drops the empty ones", async () => {
    const user = { id: 8, username: 'telegram_8', display_name: 'Tele', role: 1, status: 1, group: 'default' };
    const calls = recordFetch(() => new Response(JSON.stringify({ success: true, message: '', data: user })));
    const router = renderCallback('/oauth/telegram?id=42&first_name=Tele&username=&auth_date=1700000000&hash=ab12');
    expect(await screen.findByText('token page')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/token');
    expect(JSON.parse(localStorage.getItem('user')!)).toEqual(user);
    expect(oauthCalls(calls).map((c) => c.url)).toEqual([
      '/api/oauth/telegram/login?id=42&first_name=Tele&auth_date=1700000000&hash=ab12',
    ]);
  });

  it('fails: shows the error, then the redirect prompt, then /setting', async () => {
    const calls = recordFetch(
      () => new Response(JSON.stringify({ success: false, message: '用户已被封禁', data: null })),
    );
    const router = renderCallback('/oauth/linuxdo?code=abc&state=wrong');
    expect(await screen.findByText('用户已被封禁')).toBeTruthy();
    expect(await screen.findByText('操作失败，重定向至登录界面中...')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/oauth/linuxdo');
    expect(await screen.findByText('setting page', {}, { timeout: FAILURE_REDIRECT_MS + 1000 })).toBeTruthy();
    expect(router.state.location.pathname).toBe('/setting');
    expect(localStorage.getItem('user')).toBeNull();
    expect(oauthCalls(calls)).toHaveLength(1);
  });

  it('fails the same way when the state check answers 403, in English', async () => {
    await i18n.changeLanguage('en');
    const calls = recordFetch(
      () => new Response(JSON.stringify({ success: false, message: 'state is empty or not same' }), { status: 403 }),
    );
    const router = renderCallback('/oauth/discord?code=abc&state=forged');
    expect(await screen.findByText('Operation failed, redirecting to login page...')).toBeTruthy();
    expect(await screen.findByText('setting page', {}, { timeout: FAILURE_REDIRECT_MS + 1000 })).toBeTruthy();
    expect(router.state.location.pathname).toBe('/setting');
    expect(oauthCalls(calls)).toHaveLength(1);
  });
});

describe('personal settings bindings', () => {
  const self = {
    id: 3,
    username: 'ada',
    display_name: 'Ada',
    role: 1,
    status: 1,
    group: 'default',
    email: '',
    quota: 0,
    used_quota: 0,
    request_count: 0,
    aff_count: 0,
    aff_quota: 0,
    aff_history_quota: 0,
    github_id: '',
    oidc_id: 'sub-42',
    linux_do_id: '',
  };

  it('offers Bind for an enabled, unbound provider and shows a bound one as bound', async () => {
    localStorage.setItem('user', JSON.stringify({ id: 3 }));
    const calls = recordFetch(({ path }) => {
      if (path === '/api/user/self') return self;
      if (path === '/api/oauth/state') return 'b1nd';
      if (path === '/api/user/models') return [];
      return '';
    });
    const status: Status = { ...ALL_ON, linuxdo_oauth: false, discord_oauth: false };
    renderWithApp([{ path: '*', element: <Personal /> }], '/personal', status);
    const github = await screen.findByTestId('bind-github');
    expect(github.textContent?.replace(/\s/g, '')).toBe('绑定');
    expect(github.hasAttribute('disabled')).toBe(false);
    const oidc = screen.getByTestId('bind-oidc');
    expect(oidc.textContent).toBe('已绑定');
    expect(oidc.hasAttribute('disabled')).toBe(true);
    expect(screen.getByText('sub-42')).toBeTruthy();
    expect(screen.queryByTestId('bind-linuxdo')).toBeNull();
    expect(screen.queryByTestId('bind-discord')).toBeNull();

    fireEvent.click(github);
    await waitFor(() => expect(redirects).toHaveLength(1));
    expect(calls.map((c) => c.url)).toContain('/api/oauth/state');
    expect(new URL(redirects[0]!).searchParams.get('state')).toBe('b1nd');
  });
});
