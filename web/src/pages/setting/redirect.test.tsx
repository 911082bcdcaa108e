// /setting is the system settings for root; anyone else (for instance a user the OAuth return page sends there after a
// binding) lands on their personal settings instead of a dead end.
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { createMemoryRouter, RouterProvider } from 'react-router';
import { UserProvider } from '../../context/user.js';
import { USER_KEY } from '../../lib/api.js';
import SettingPage from './index.js';

afterEach(() => {
  cleanup();
  localStorage.clear();
});

describe('/setting for a user who is not root', () => {
  it('goes on to /personal', async () => {
    localStorage.setItem(
      USER_KEY,
      JSON.stringify({ id: 7, username: 'alice', display_name: '', role: 1, status: 1, group: 'default' }),
    );
    const router = createMemoryRouter(
      [
        { path: '/setting', element: <SettingPage /> },
        { path: '/personal', element: <div>personal page</div> },
      ],
      { initialEntries: ['/setting'] },
    );
    render(
      <UserProvider>
        <RouterProvider router={router} />
      </UserProvider>,
    );
    expect(await screen.findByText('personal page')).toBeTruthy();
    expect(router.state.location.pathname).toBe('/personal');
  });
});
