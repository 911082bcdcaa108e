// After registering, the login form starts with the user name just chosen (issue 46, point 13).
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import Login from './Login.js';
import Register from './Register.js';

let calls: Call[];

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  calls = recordFetch(() => null);
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

it('pre-fills the login form with the name just registered', async () => {
  renderWithApp(
    [
      { path: '/register', element: <Register /> },
      { path: '/login', element: <Login /> },
    ],
    '/register',
  );
  fireEvent.change(await screen.findByPlaceholderText('请输入用户名'), { target: { value: 'alice' } });
  fireEvent.change(screen.getByPlaceholderText('输入密码，最短 8 位，最长 20 位'), { target: { value: 'password1' } });
  fireEvent.change(screen.getByPlaceholderText('请再次输入密码'), { target: { value: 'password1' } });
  await act(async () => {
    fireEvent.click(screen.getByRole('button', { name: /注\s*册/ }));
  });
  await waitFor(() => expect(calls.map((c) => c.url)).toContain('/api/user/register'));
  await screen.findByText(/用户登录/);
  const name = document.querySelector('input[autocomplete=username]') as HTMLInputElement;
  await waitFor(() => expect(name.value).toBe('alice'));
});
