// Playground ?expired=true shows the login page's not-logged-in/session-expired notice (spec §2 Login).
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { App } from 'antd';
import { createMemoryRouter, RouterProvider } from 'react-router';
import i18n from '../../i18n/index.js';
import Playground from './index.js';

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  vi.stubGlobal('fetch', () =>
    Promise.resolve(new Response(JSON.stringify({ success: true, message: '', data: [] }), { status: 200 })),
  );
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function renderAt(path: string) {
  const router = createMemoryRouter([{ path: '/playground', element: <Playground /> }], { initialEntries: [path] });
  render(
    <App>
      <RouterProvider router={router} />
    </App>,
  );
}

describe('playground session notice', () => {
  it('shows 未登录或登录已过期，请重新登录 with ?expired=true', async () => {
    renderAt('/playground?expired=true');
    await screen.findByTestId('playground-page');
    expect(screen.getByTestId('expired-notice').textContent).toContain('未登录或登录已过期，请重新登录');
  });

  it('uses the English login text too', async () => {
    await i18n.changeLanguage('en');
    renderAt('/playground?expired=true');
    await screen.findByTestId('playground-page');
    expect(screen.getByTestId('expired-notice').textContent).toContain(
      'Not logged in or the session has expired, please log in again',
    );
  });

  it('shows nothing without the query', async () => {
    renderAt('/playground');
    await screen.findByTestId('playground-page');
    expect(screen.queryByTestId('expired-notice')).toBeNull();
    cleanup();
    renderAt('/playground?expired=false');
    await screen.findByTestId('playground-page');
    expect(screen.queryByTestId('expired-notice')).toBeNull();
  });
});
