// With Turnstile on, the login, register and password reset pages render Cloudflare's widget with the site key from
// /api/status, answer a click before the widget gave a token with "请稍后几秒重试，Turnstile 正在检查用户环境！" (spec §5,
// new-api's pages; the buttons stay enabled) and send nothing, send the token as the `turnstile` query parameter
// and ask for a fresh one after each attempt (tokens are single-use). `window.turnstile` is a fake here.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import type { Status } from '../../context/status.js';
import Login from '../../pages/auth/Login.js';
import Register from '../../pages/auth/Register.js';
import PasswordReset from '../../pages/auth/PasswordReset.js';
import { EmailBindDialog } from '../../pages/personal/Dialogs.js';
import { TURNSTILE_SCRIPT_URL, loadTurnstile, type TurnstileApi } from './index.js';

interface FakeWidget {
  sitekey: string;
  callback(token: string): void;
}

let widgets: FakeWidget[];
let fake: TurnstileApi & {
  render: ReturnType<typeof vi.fn<TurnstileApi['render']>>;
  reset: ReturnType<typeof vi.fn<TurnstileApi['reset']>>;
  remove: ReturnType<typeof vi.fn<TurnstileApi['remove']>>;
};
let calls: Call[];
let loginOk: boolean;

const ON: Status = { setup: true, turnstile_check: true, turnstile_site_key: 'site-key-1' };
const OFF: Status = { setup: true, turnstile_check: false, turnstile_site_key: '' };

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  widgets = [];
  fake = {
    render: vi.fn<TurnstileApi['render']>((_el, o) => {
      widgets.push(o);
      return `w${widgets.length}`;
    }),
    reset: vi.fn<TurnstileApi['reset']>(),
    remove: vi.fn<TurnstileApi['remove']>(),
  };
  window.turnstile = fake;
  loginOk = false;
  calls = recordFetch(({ path }) => {
    if (path === '/api/user/login') {
      return loginOk
        ? { id: 1, username: 'alice', display_name: 'alice', role: 1, status: 1, group: 'default' }
        : new Response(JSON.stringify({ success: false, message: 'Turnstile 校验失败，请刷新重试！' }), {
            status: 200,
          });
    }
    return {};
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  delete window.turnstile;
  localStorage.clear();
});

const submitButton = (name: RegExp) => screen.getByRole('button', { name }) as HTMLButtonElement;
const WAIT = '请稍后几秒重试，Turnstile 正在检查用户环境！';
/** Without a token a guarded button stays enabled, says to wait and sends nothing. */
const refusedWithoutToken = async (button: HTMLButtonElement) => {
  const before = calls.length;
  const shown = screen.queryAllByText(WAIT).length;
  expect(button.disabled).toBe(false);
  await act(async () => {
    fireEvent.click(button);
  });
  await vi.waitFor(() => expect(screen.queryAllByText(WAIT).length).toBeGreaterThan(shown));
  expect(calls.length).toBe(before);
};
const give = async (token: string) => {
  await act(async () => widgets[widgets.length - 1]!.callback(token));
};

describe('Turnstile on the login page', () => {
  it('renders the widget with the site key, waits for its token, sends it and asks for a new one after a failure', async () => {
    renderWithApp(
      [
        { path: '/login', element: <Login /> },
        { path: '/token', element: <div>tokens</div> },
      ],
      '/login',
      ON,
    );
    await vi.waitFor(() => expect(fake.render).toHaveBeenCalledTimes(1));
    expect(widgets[0]!.sitekey).toBe('site-key-1');
    expect(document.querySelector(`script[src="${TURNSTILE_SCRIPT_URL}"]`)).toBeNull();
    const login = submitButton(/登\s*录/);

    fireEvent.change(screen.getByPlaceholderText('请输入您的用户名或邮箱地址'), { target: { value: 'alice' } });
    fireEvent.change(screen.getByPlaceholderText('请输入您的密码'), { target: { value: 'password1' } });
    await refusedWithoutToken(login);
    await give('token-1');
    await act(async () => {
      fireEvent.click(login);
    });
    await vi.waitFor(() => expect(calls.filter((c) => c.url.startsWith('/api/user/login'))).toHaveLength(1));
    expect(calls[0]).toEqual({
      method: 'POST',
      url: '/api/user/login?turnstile=token-1',
      body: { username: 'alice', password: 'password1' },
    });

    // the spent token is dropped and the widget reset: the button waits for the next token
    await vi.waitFor(() => expect(fake.reset).toHaveBeenCalledWith('w1'));
    await refusedWithoutToken(submitButton(/登\s*录/));
    await give('token-2');
    loginOk = true;
    await act(async () => {
      fireEvent.click(submitButton(/登\s*录/));
    });
    await vi.waitFor(() => expect(calls.filter((c) => c.url.startsWith('/api/user/login'))).toHaveLength(2));
    expect(calls[1]!.url).toBe('/api/user/login?turnstile=token-2');
    expect(await screen.findByText('tokens')).toBeTruthy();
    expect(fake.remove).toHaveBeenCalledWith('w1');
  });

  it('renders nothing and sends no parameter when Turnstile is off', async () => {
    loginOk = true;
    renderWithApp(
      [
        { path: '/login', element: <Login /> },
        { path: '/token', element: <div>tokens</div> },
      ],
      '/login',
      OFF,
    );
    fireEvent.change(screen.getByPlaceholderText('请输入您的用户名或邮箱地址'), { target: { value: 'alice' } });
    fireEvent.change(screen.getByPlaceholderText('请输入您的密码'), { target: { value: 'password1' } });
    const login = submitButton(/登\s*录/);
    expect(login.disabled).toBe(false);
    await act(async () => {
      fireEvent.click(login);
    });
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    expect(calls[0]!.url).toBe('/api/user/login');
    expect(fake.render).not.toHaveBeenCalled();
    expect(screen.queryByTestId('turnstile')).toBeNull();
  });
});

describe('Turnstile on the register, email verification and password reset forms', () => {
  it('register: the code request and the registration each send a fresh token', async () => {
    renderWithApp(
      [
        { path: '/register', element: <Register /> },
        { path: '/login', element: <div /> },
      ],
      '/register',
      { ...ON, email_verification: true },
    );
    await vi.waitFor(() => expect(fake.render).toHaveBeenCalledTimes(1));
    const sendCode = submitButton(/获取验证码/);
    const register = submitButton(/注\s*册/);
    fireEvent.change(screen.getByPlaceholderText('输入邮箱地址'), { target: { value: 'a@example.com' } });
    await refusedWithoutToken(sendCode);
    await refusedWithoutToken(register);
    await give('code-token');
    await act(async () => {
      fireEvent.click(sendCode);
    });
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    expect(calls[0]!.url).toBe('/api/verification?email=a%40example.com&turnstile=code-token');
    await vi.waitFor(() => expect(fake.reset).toHaveBeenCalledTimes(1));
    await refusedWithoutToken(submitButton(/注\s*册/));

    fireEvent.change(screen.getByPlaceholderText('请输入用户名'), { target: { value: 'alice' } });
    fireEvent.change(screen.getByPlaceholderText('输入密码，最短 8 位，最长 20 位'), {
      target: { value: 'password1' },
    });
    fireEvent.change(screen.getByPlaceholderText('请再次输入密码'), { target: { value: 'password1' } });
    fireEvent.change(screen.getByPlaceholderText('输入验证码'), { target: { value: '123456' } });
    await give('register-token');
    await act(async () => {
      fireEvent.click(submitButton(/注\s*册/));
    });
    await vi.waitFor(() => expect(calls).toHaveLength(2));
    expect(calls[1]).toMatchObject({
      method: 'POST',
      url: '/api/user/register?turnstile=register-token',
      body: { username: 'alice', verification_code: '123456' },
    });
  });

  it('password reset sends the token with the email', async () => {
    renderWithApp([{ path: '/reset', element: <PasswordReset /> }], '/reset', ON);
    await vi.waitFor(() => expect(fake.render).toHaveBeenCalledTimes(1));
    fireEvent.change(screen.getByPlaceholderText('邮箱地址'), { target: { value: 'a@example.com' } });
    await refusedWithoutToken(submitButton(/提\s*交/));
    await give('reset-token');
    await act(async () => {
      fireEvent.click(submitButton(/提\s*交/));
    });
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    expect(calls[0]!.url).toBe('/api/reset_password?email=a%40example.com&turnstile=reset-token');
    await vi.waitFor(() => expect(fake.reset).toHaveBeenCalledWith('w1'));
  });

  it('binding an email on the personal page sends the token with the code request', async () => {
    renderWithApp(
      [{ path: '/personal', element: <EmailBindDialog open onClose={() => undefined} /> }],
      '/personal',
      ON,
    );
    await vi.waitFor(() => expect(fake.render).toHaveBeenCalledTimes(1));
    const send = await screen.findByRole('button', { name: /获取验证码/ });
    fireEvent.change(screen.getByPlaceholderText(/邮箱/), { target: { value: 'b@example.com' } });
    await refusedWithoutToken(send as HTMLButtonElement);
    await give('bind-token');
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: /获取验证码/ }));
    });
    await vi.waitFor(() => expect(calls).toHaveLength(1));
    expect(calls[0]!.url).toBe('/api/verification?email=b%40example.com&turnstile=bind-token');
  });
});

describe('loading Cloudflare script', () => {
  it('adds the explicit-render script once and resolves with window.turnstile when it has loaded', async () => {
    delete window.turnstile;
    // the page would fetch the script from Cloudflare: keep it from being loaded, and play its load event
    const added: HTMLScriptElement[] = [];
    const append = vi.spyOn(document.head, 'appendChild').mockImplementation((node) => {
      added.push(node as HTMLScriptElement);
      return node;
    });
    try {
      const first = loadTurnstile();
      const second = loadTurnstile();
      expect(added).toHaveLength(1);
      expect(added[0]!.src).toBe(TURNSTILE_SCRIPT_URL);
      window.turnstile = fake;
      added[0]!.onload?.(new Event('load'));
      expect(await first).toBe(fake);
      expect(await second).toBe(fake);
    } finally {
      append.mockRestore();
    }
  });
});
