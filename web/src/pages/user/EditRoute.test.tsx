import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import Users from './index.js';

const user = (id: number, username: string, role = 1) => ({
  id,
  username,
  display_name: username,
  role,
  status: 1,
  group: 'default',
  quota: 500000,
  used_quota: 0,
  request_count: 0,
});

let calls: Call[];

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  calls = recordFetch(({ method, path }) => {
    if (path === '/api/user/' && method === 'GET')
      return { items: [user(1, 'root', 100), user(7, 'alice')], total: 2, page: 1, page_size: 10 };
    if (path === '/api/group/') return ['default', 'vip'];
    if (path === '/api/user/7') return user(7, 'alice');
    if (path === '/api/user/self') return user(3, 'me_self', 10);
    return {};
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

function renderAt(path: string, me: { id: number; role: number }) {
  localStorage.setItem(
    'user',
    JSON.stringify({ ...me, username: 'me', display_name: 'me', status: 1, group: 'default' }),
  );
  const { router } = renderWithApp(
    [
      { path: '/user', element: <Users /> },
      { path: '/user/edit/:id', element: <Users /> },
      { path: '/user/edit', element: <Users /> },
    ],
    path,
  );
  return router;
}

const usernameInput = async () => {
  const drawer = await screen.findByRole('dialog', {}, { timeout: 5000 });
  const input = await vi.waitFor(
    () => {
      const el = drawer.querySelector<HTMLInputElement>('input#username');
      if (!el) throw new Error('the drawer form is still loading');
      return el;
    },
    { timeout: 5000 },
  );
  return { drawer, input };
};

describe('user edit routes', () => {
  it('/user/edit/:id opens the edit drawer for that user over the list, closing returns to /user', async () => {
    const router = renderAt('/user/edit/7', { id: 1, role: 100 });
    const { input } = await usernameInput();
    await vi.waitFor(() => expect(input.value).toBe('alice'), { timeout: 5000 });
    expect(calls.some((c) => c.url === '/api/user/7')).toBe(true);
    expect(calls.some((c) => c.url.startsWith('/api/user/?'))).toBe(true);
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: /取\s*消/ }));
    });
    expect(router.state.location.pathname).toBe('/user');
  });

  it('/user/edit edits the caller own profile through /api/user/self, group and quota locked', async () => {
    const router = renderAt('/user/edit', { id: 3, role: 1 });
    const { drawer, input } = await usernameInput();
    await vi.waitFor(() => expect(input.value).toBe('me_self'), { timeout: 5000 });
    // A normal user cannot list users: no list or group request.
    expect(calls.some((c) => c.url.startsWith('/api/user/?') || c.url === '/api/group/')).toBe(false);
    expect(drawer.querySelector('.ant-select-disabled')).toBeTruthy();
    expect(drawer.querySelector<HTMLInputElement>('.ant-input-number input')!.disabled).toBe(true);
    fireEvent.change(input, { target: { value: 'me_renamed' } });
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: /提\s*交/ }));
    });
    const put = calls.find((c) => c.method === 'PUT');
    expect(put).toEqual({
      method: 'PUT',
      url: '/api/user/self',
      body: { username: 'me_renamed', display_name: 'me_self' },
    });
    expect(await screen.findByText('用户信息更新成功！')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/user');
  });

  it('the row edit button still opens the drawer without changing the route', async () => {
    const router = renderAt('/user', { id: 1, role: 100 });
    const row = (await screen.findByText('alice', {}, { timeout: 5000 })).closest('tr')!;
    fireEvent.click(within(row).getByRole('button', { name: /编\s*辑/ }));
    const { input } = await usernameInput();
    await vi.waitFor(() => expect(input.value).toBe('alice'), { timeout: 5000 });
    expect(router.state.location.pathname).toBe('/user');
  });
});
