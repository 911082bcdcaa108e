// Root on the setup default password: a warning at login, a banner on console pages until the password changes.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Modal } from 'antd';
import { act, cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import i18n from '../../i18n/index.js';
import { StatusProvider } from '../../context/status.js';
import { UserProvider } from '../../context/user.js';
import Login from '../../pages/auth/Login.js';
import { clearDefaultPasswordWarning, DefaultPasswordBanner } from './index.js';

afterEach(() => {
  cleanup();
  localStorage.clear();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

function renderAt(element: React.ReactNode) {
  const router = createMemoryRouter(
    [
      { path: '/login', element },
      { path: '/token', element: <DefaultPasswordBanner /> },
    ],
    { initialEntries: ['/login'] },
  );
  // the login page sends its request through a TanStack mutation, as every page does (issue 46)
  return render(
    <QueryClientProvider client={new QueryClient()}>
      <StatusProvider initial={{ setup: true }}>
        <UserProvider>
          <RouterProvider router={router} />
        </UserProvider>
      </StatusProvider>
    </QueryClientProvider>,
  );
}

function loginAnswers() {
  vi.stubGlobal(
    'fetch',
    vi.fn(async () =>
      Response.json({
        success: true,
        message: '',
        data: { id: 1, username: 'root', role: 100, status: 1, group: 'default' },
      }),
    ),
  );
}

async function logIn(password: string) {
  fireEvent.change(screen.getByPlaceholderText(/用户名|username/i), { target: { value: 'root' } });
  fireEvent.change(screen.getByPlaceholderText(/密码|password/i), { target: { value: password } });
  fireEvent.click(screen.getByRole('button', { name: /登\s*录/ }));
}

describe('the default password warning', () => {
  it('says nothing for another password', async () => {
    await i18n.changeLanguage('zh');
    loginAnswers();
    const warning = vi.spyOn(Modal, 'warning');
    renderAt(<Login />);
    await logIn('a-strong-password');
    await waitFor(() => expect((fetch as unknown as { mock: { calls: unknown[] } }).mock.calls.length).toBe(1));
    // the login is over once the page has moved on to /token
    await waitFor(() => expect(screen.queryByPlaceholderText(/用户名|username/i)).toBeNull());
    expect(warning).not.toHaveBeenCalled();
    expect(screen.queryByTestId('default-password-banner')).toBeNull();
  });
  it('warns root who logs in with 123456 and shows the banner until the password is changed', async () => {
    await i18n.changeLanguage('zh');
    loginAnswers();
    renderAt(<Login />);
    // the warning is antd's static modal, which renders in a React root of its own that can outlive the test's
    // environment; what matters is what it is asked to show
    const warning = vi.spyOn(Modal, 'warning').mockImplementation(() => ({ destroy() {}, update() {} }));
    await logIn('123456');
    await waitFor(() =>
      expect(warning).toHaveBeenCalledWith({ title: '您正在使用默认密码！', content: '请立刻修改默认密码！' }),
    );
    expect(await screen.findByTestId('default-password-banner')).toBeTruthy();
    act(() => clearDefaultPasswordWarning());
    await waitFor(() => expect(screen.queryByTestId('default-password-banner')).toBeNull());
  });
});
