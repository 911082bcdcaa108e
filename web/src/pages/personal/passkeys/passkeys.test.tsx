// The passkey card and login button against a recorded fetch, with the browser's WebAuthn library mocked: what is
// sent to the server, what is shown, and when the button and the add action are offered at all.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../../i18n/index.js';
import { recordFetch, renderWithApp } from '../../../test/harness.js';
import Login from '../../auth/Login.js';
import PasskeyCard from './PasskeyCard.js';
import { passkeyIpHost } from './api.js';
import { timestamp2string } from '../../../lib/render.js';

const webauthn = vi.hoisted(() => ({
  browserSupportsWebAuthn: vi.fn(() => true),
  startRegistration: vi.fn(),
  startAuthentication: vi.fn(),
}));
vi.mock('@simplewebauthn/browser', () => webauthn);

const CREATION = { challenge: 'c1', rp: { id: 'localhost', name: 'New API' } };
const REQUEST = { challenge: 'c2', rpId: 'localhost' };
const ATTESTATION = { id: 'cred1', rawId: 'cred1', type: 'public-key', response: { attestationObject: 'ao' } };
const ASSERTION = { id: 'cred1', rawId: 'cred1', type: 'public-key', response: { signature: 'sig' } };
const USER = { id: 7, username: 'alice', display_name: 'Alice', role: 1, status: 1, group: 'default' };
const LIST = {
  enabled: true,
  last_used_at: '2026-01-02T03:04:05.000Z',
  passkeys: [
    {
      id: 11,
      name: 'Laptop',
      created_at: '2026-01-01T00:00:00.000Z',
      last_used_at: '2026-01-02T03:04:05.000Z',
      backup_eligible: true,
      backup_state: true,
      transports: ['internal'],
      attachment: 'platform',
    },
    {
      id: 12,
      name: 'Key',
      created_at: '2026-01-01T00:00:00.000Z',
      last_used_at: null,
      backup_eligible: false,
      backup_state: false,
      transports: ['usb'],
      attachment: 'cross-platform',
    },
  ],
};

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  webauthn.browserSupportsWebAuthn.mockReturnValue(true);
  webauthn.startRegistration.mockResolvedValue(ATTESTATION);
  webauthn.startAuthentication.mockResolvedValue(ASSERTION);
});

afterEach(() => {
  cleanup();
  vi.clearAllMocks();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const loginPage = (status: Record<string, unknown>) =>
  renderWithApp(
    [
      { path: '/login', element: <Login /> },
      { path: '/token', element: <div>token page</div> },
    ],
    '/login',
    { setup: true, ...status },
  );

describe('passkey login button', () => {
  it('is not offered when /api/status has it off, or the browser lacks WebAuthn', async () => {
    recordFetch(() => ({}));
    loginPage({ passkey_login: false });
    await screen.findByText('用户登录');
    expect(screen.queryByTestId('passkey-login')).toBeNull();
    cleanup();
    webauthn.browserSupportsWebAuthn.mockReturnValue(false);
    loginPage({ passkey_login: true });
    await screen.findByText('用户登录');
    expect(screen.queryByTestId('passkey-login')).toBeNull();
  });

  it('signs in without a user name and goes on as a password login does', async () => {
    const calls = recordFetch(({ path }) =>
      path === '/api/user/passkey/login/begin' ? { options: { publicKey: REQUEST } } : USER,
    );
    const { router } = loginPage({ passkey_login: true });
    fireEvent.click(await screen.findByText('使用 Passkey 登录'));
    expect(await screen.findByText('token page')).toBeTruthy();
    expect(webauthn.startAuthentication).toHaveBeenCalledWith({ optionsJSON: REQUEST });
    expect(calls.map((c) => [c.method, c.url, c.body])).toEqual([
      ['POST', '/api/user/passkey/login/begin', {}],
      ['POST', '/api/user/passkey/login/finish', ASSERTION],
    ]);
    expect(router.state.location.pathname).toBe('/token');
    expect(JSON.parse(localStorage.getItem('user')!)).toEqual(USER);
  });

  it('says so when the user cancels, and shows the server refusal', async () => {
    webauthn.startAuthentication.mockRejectedValueOnce(
      Object.assign(new Error('cancelled'), { name: 'NotAllowedError' }),
    );
    recordFetch(({ path }) =>
      path === '/api/user/passkey/login/begin'
        ? { options: { publicKey: REQUEST } }
        : new Response(JSON.stringify({ success: false, message: '该用户已被禁用' })),
    );
    loginPage({ passkey_login: true });
    fireEvent.click(await screen.findByTestId('passkey-login'));
    expect(await screen.findByText('操作已取消或超时')).toBeTruthy();
    fireEvent.click(screen.getByTestId('passkey-login'));
    expect(await screen.findByText('该用户已被禁用')).toBeTruthy();
    expect(localStorage.getItem('user')).toBeNull();
  });
});

describe('passkey card', () => {
  const card = (status: Record<string, unknown> = { passkey_login: true }) =>
    renderWithApp([{ path: '*', element: <PasskeyCard /> }], '/personal', { setup: true, ...status });

  it('lists the passkeys with their names and times', async () => {
    recordFetch(() => LIST);
    card();
    expect(await screen.findByText('Laptop')).toBeTruthy();
    expect(screen.getByText('Key')).toBeTruthy();
    expect(screen.getByText('已同步')).toBeTruthy();
    expect(screen.getByText('从未使用')).toBeTruthy();
    expect(
      screen.getByText(`上次使用 ${timestamp2string(Date.parse(LIST.passkeys[0].last_used_at!) / 1000)}`),
    ).toBeTruthy();
  });

  it('adds a passkey of this device under the name typed', async () => {
    const calls = recordFetch(({ path, method }) => {
      if (path === '/api/user/passkey/register/begin') return { options: { publicKey: CREATION } };
      if (path === '/api/user/passkey/register/finish')
        return new Response(JSON.stringify({ success: true, message: 'Passkey 注册成功' }));
      return method === 'GET' ? LIST : {};
    });
    card();
    await screen.findByText('Laptop');
    fireEvent.change(screen.getByTestId('passkey-name'), { target: { value: ' Phone ' } });
    fireEvent.click(screen.getByTestId('passkey-add'));
    expect(await screen.findByText('Passkey 注册成功')).toBeTruthy();
    expect(webauthn.startRegistration).toHaveBeenCalledWith({ optionsJSON: CREATION });
    const finish = calls.find((c) => c.url === '/api/user/passkey/register/finish');
    expect(finish?.body).toEqual({ ...ATTESTATION, name: 'Phone' });
    // the list is read again
    await waitFor(() => expect(calls.filter((c) => c.url === '/api/user/passkey').length).toBe(2));
  });

  it('removes a passkey after confirmation', async () => {
    const calls = recordFetch(({ method }) => (method === 'GET' ? LIST : {}));
    card();
    fireEvent.click(await screen.findByTestId('passkey-remove-12'));
    fireEvent.click(await screen.findByTestId('passkey-remove-confirm'));
    expect(await screen.findByText('Passkey 已删除')).toBeTruthy();
    expect(calls.filter((c) => c.method === 'DELETE').map((c) => c.url)).toEqual(['/api/user/passkey/12']);
  });

  it('offers no add while the administrator has passkeys off, but still lists and removes', async () => {
    recordFetch(() => LIST);
    card({ passkey_login: false });
    expect(await screen.findByText('管理员未启用 Passkey 登录')).toBeTruthy();
    expect(screen.getByTestId('passkey-add').hasAttribute('disabled')).toBe(true);
    expect((await screen.findByTestId('passkey-remove-11')).hasAttribute('disabled')).toBe(false);
  });

  it('says on the page that passkeys need a host name when the site is addressed by IP (issue 46, point 7)', async () => {
    recordFetch(() => LIST);
    card({ passkey_login: true, server_address: 'http://192.168.1.20:3000' });
    expect(
      await screen.findByText(
        'Passkey 需要通过域名访问：本站地址是 IP 地址 192.168.1.20，浏览器不允许在 IP 地址上使用 Passkey。请使用域名（或 localhost）访问，并在系统设置中填写服务器地址。',
      ),
    ).toBeTruthy();
    expect(screen.getByTestId('passkey-add').hasAttribute('disabled')).toBe(true);
    cleanup();
    loginPage({ passkey_login: true, server_address: 'http://[::1]:3000' });
    await screen.findByText('用户登录');
    expect(screen.queryByTestId('passkey-login')).toBeNull();
  });
});

describe('passkeyIpHost', () => {
  it('reads the server address first, else the page host', () => {
    expect(passkeyIpHost('http://10.0.0.5:3000', 'gateway.example.com')).toBe('10.0.0.5');
    expect(passkeyIpHost('https://gateway.example.com', '10.0.0.5')).toBeNull();
    expect(passkeyIpHost('', '127.0.0.1')).toBe('127.0.0.1');
    expect(passkeyIpHost(undefined, 'localhost')).toBeNull();
    expect(passkeyIpHost('not a url', '[fe80::1]')).toBe('fe80::1');
  });
});
