// Two-factor in the console: the personal settings card (enrol with the QR code, the secret, the backup codes and a
// first code; disable with a code), the login's code step after a password answered `require_2fa`, and the user
// list's reset action shown only for users with two-factor.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../../i18n/index.js';
import { navigation } from '../../../lib/api.js';
import { recordFetch, renderWithApp, type Call } from '../../../test/harness.js';
import Login from '../../auth/Login.js';
import TwoFactorCard from './TwoFactorCard.js';
import ResetTwoFactorAction from './AdminReset.js';

const SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
const CODES = Array.from({ length: 10 }, (_, i) => `AB${i}D-EF${i}H`);
const USER = { id: 7, username: 'alice', display_name: 'alice', role: 1, status: 1, group: 'default' };
const envelope = (success: boolean, message: string, data?: unknown) =>
  new Response(JSON.stringify({ success, message, data }), { status: 200 });

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  vi.spyOn(navigation, 'redirect').mockImplementation(() => {});
});

afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const posts = (calls: Call[], path: string) => calls.filter((c) => c.method === 'POST' && c.url === path);

describe('personal settings two-factor card', () => {
  it('enrols: shows the QR code, the secret and the ten backup codes, then sends the first code', async () => {
    let enabled = false;
    const calls = recordFetch(({ path }) => {
      if (path === '/api/user/2fa/status')
        return enabled
          ? { enabled: true, locked: false, backup_codes_remaining: 10 }
          : { enabled: false, locked: false };
      if (path === '/api/user/2fa/setup')
        return { secret: SECRET, qr_code_data: `otpauth://totp/GW:alice?secret=${SECRET}`, backup_codes: CODES };
      if (path === '/api/user/2fa/enable') {
        enabled = true;
        return envelope(true, '两步验证启用成功');
      }
      return {};
    });
    renderWithApp([{ path: '*', element: <TwoFactorCard /> }], '/personal');
    expect((await screen.findByTestId('twofa-state')).textContent).toBe('未启用');
    fireEvent.click(screen.getByTestId('twofa-enable'));

    expect((await screen.findByTestId('twofa-secret')).textContent).toContain(SECRET);
    expect(screen.getByTestId('twofa-qrcode')).toBeTruthy();
    for (const code of CODES) expect(screen.getByText(code)).toBeTruthy();
    expect(screen.getByText('复制备用码')).toBeTruthy();

    fireEvent.change(screen.getByTestId('twofa-first-code'), { target: { value: '123456' } });
    // the dialog's OK button (the card's own enable button carries the same words)
    fireEvent.click(screen.getAllByRole('button', { name: /启用两步验证/ }).at(-1)!);
    await waitFor(() => expect(posts(calls, '/api/user/2fa/enable')).toHaveLength(1));
    expect(posts(calls, '/api/user/2fa/enable')[0].body).toEqual({ code: '123456' });
    await waitFor(() => expect(screen.getByTestId('twofa-state').textContent).toBe('已启用'));
    expect(screen.getByText('剩余备用码：10 个')).toBeTruthy();
  });

  it('keeps the dialog open and says why when the first code is wrong', async () => {
    const calls = recordFetch(({ path }) => {
      if (path === '/api/user/2fa/status') return { enabled: false, locked: false };
      if (path === '/api/user/2fa/setup')
        return { secret: SECRET, qr_code_data: 'otpauth://totp/x', backup_codes: CODES };
      if (path === '/api/user/2fa/enable') return envelope(false, '验证码或备用码错误，请重试');
      return {};
    });
    renderWithApp([{ path: '*', element: <TwoFactorCard /> }], '/personal');
    fireEvent.click(await screen.findByTestId('twofa-enable'));
    fireEvent.change(await screen.findByTestId('twofa-first-code'), { target: { value: '000000' } });
    fireEvent.keyDown(screen.getByTestId('twofa-first-code'), { key: 'Enter', code: 'Enter', keyCode: 13 });
    expect(await screen.findByText('验证码或备用码错误，请重试')).toBeTruthy();
    expect(posts(calls, '/api/user/2fa/enable')).toHaveLength(1);
    expect(screen.getByTestId('twofa-secret')).toBeTruthy();
  });

  it('disables with a code or a backup code', async () => {
    let enabled = true;
    const calls = recordFetch(({ path }) => {
      if (path === '/api/user/2fa/status')
        return enabled
          ? { enabled: true, locked: false, backup_codes_remaining: 3 }
          : { enabled: false, locked: false };
      if (path === '/api/user/2fa/disable') {
        enabled = false;
        return envelope(true, '两步验证已禁用');
      }
      return {};
    });
    renderWithApp([{ path: '*', element: <TwoFactorCard /> }], '/personal');
    expect(await screen.findByText('剩余备用码：3 个')).toBeTruthy();
    fireEvent.click(screen.getByTestId('twofa-disable'));
    fireEvent.change(await screen.findByTestId('twofa-dialog-code'), { target: { value: 'ABCD-EFGH' } });
    fireEvent.click(screen.getByRole('button', { name: /确\s*认/ }));
    await waitFor(() => expect(posts(calls, '/api/user/2fa/disable')).toHaveLength(1));
    expect(posts(calls, '/api/user/2fa/disable')[0].body).toEqual({ code: 'ABCD-EFGH' });
    await waitFor(() => expect(screen.getByTestId('twofa-state').textContent).toBe('未启用'));
  });
});

describe('login code step', () => {
  it('asks for the code after a password answered require_2fa, then signs in with it', async () => {
    const calls = recordFetch(({ path }) => {
      if (path === '/api/user/login') return envelope(true, '请输入两步验证码', { require_2fa: true, expires_at: 1 });
      if (path === '/api/user/login/2fa') return USER;
      return {};
    });
    const { router } = renderWithApp(
      [
        { path: '/login', element: <Login /> },
        { path: '/token', element: <div>token page</div> },
      ],
      '/login',
    );
    fireEvent.change(await screen.findByPlaceholderText('请输入您的用户名或邮箱地址'), { target: { value: 'alice' } });
    fireEvent.change(screen.getByPlaceholderText('请输入您的密码'), { target: { value: 'password123' } });
    fireEvent.click(screen.getByRole('button', { name: /登\s*录/ }));
    const input = await screen.findByTestId('login-2fa-code');
    // still signed out: nothing stored yet
    expect(localStorage.getItem('user')).toBeNull();
    fireEvent.change(input, { target: { value: 'abcd-efgh' } });
    fireEvent.click(screen.getByTestId('login-2fa-submit'));
    await waitFor(() => expect(router.state.location.pathname).toBe('/token'));
    expect(posts(calls, '/api/user/login/2fa')[0].body).toEqual({ code: 'abcd-efgh' });
    expect(JSON.parse(localStorage.getItem('user')!)).toMatchObject({ id: 7, username: 'alice' });
  });

  it('stays on the code step with the server’s message when the code is refused', async () => {
    recordFetch(({ path }) => {
      if (path === '/api/user/login') return envelope(true, '请输入两步验证码', { require_2fa: true, expires_at: 1 });
      if (path === '/api/user/login/2fa') return envelope(false, '验证码或备用码错误，请重试');
      return {};
    });
    const { router } = renderWithApp([{ path: '*', element: <Login /> }], '/login');
    fireEvent.change(await screen.findByPlaceholderText('请输入您的用户名或邮箱地址'), { target: { value: 'alice' } });
    fireEvent.change(screen.getByPlaceholderText('请输入您的密码'), { target: { value: 'password123' } });
    fireEvent.click(screen.getByRole('button', { name: /登\s*录/ }));
    fireEvent.change(await screen.findByTestId('login-2fa-code'), { target: { value: '111111' } });
    fireEvent.click(screen.getByTestId('login-2fa-submit'));
    expect(await screen.findByText('验证码或备用码错误，请重试')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/login');
  });
});

describe('admin reset action', () => {
  it('shows only for users with two-factor and resets after confirmation', async () => {
    const calls = recordFetch(({ path }) => {
      if (path === '/api/user/2fa/enabled') return [2];
      if (path === '/api/user/2/2fa') return envelope(true, '用户2FA已被强制禁用');
      return {};
    });
    renderWithApp(
      [
        {
          path: '*',
          element: (
            <div>
              <ResetTwoFactorAction userId={1} pageIds={[1, 2]} />
              <ResetTwoFactorAction userId={2} pageIds={[1, 2]} />
            </div>
          ),
        },
      ],
      '/user',
    );
    fireEvent.click(await screen.findByTestId('reset-2fa-2'));
    expect(screen.queryByTestId('reset-2fa-1')).toBeNull();
    // one query for the page, shared by the rows
    expect(calls.filter((c) => c.url.startsWith('/api/user/2fa/enabled'))).toHaveLength(1);
    expect(calls[0].url).toBe('/api/user/2fa/enabled?ids=1%2C2');
    fireEvent.click(await screen.findByRole('button', { name: /O\s*K|确\s*定/ }));
    await waitFor(() => expect(calls.some((c) => c.method === 'DELETE' && c.url === '/api/user/2/2fa')).toBe(true));
  });
});
