import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp } from '../../test/harness.js';
import RequireAuth from '../RequireAuth.js';

const USER = { id: 7, username: 'alice', display_name: 'alice', role: 1, status: 1, group: 'default' };

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem('user', JSON.stringify(USER));
});
afterEach(() => {
  cleanup();
  localStorage.clear();
  vi.unstubAllGlobals();
});

function renderSignedInPage() {
  return renderWithApp(
    [{ element: <RequireAuth />, children: [{ path: '/token', element: <p>tokens page</p> }] }],
    '/token',
  );
}

describe('announcement after login', () => {
  it('shows the announcement once; closing it is remembered for that content', async () => {
    const calls = recordFetch(() => '**Maintenance** tonight');
    renderSignedInPage();
    const modal = await screen.findByText('系统公告');
    expect(modal).toBeTruthy();
    expect((await screen.findByText('Maintenance')).tagName).toBe('STRONG');
    expect(calls.map((c) => c.url)).toEqual(['/api/notice']);

    fireEvent.click(screen.getByRole('button', { name: '关闭公告' }));
    await waitFor(() => expect(screen.queryByText('Maintenance')).toBeNull());
    expect(localStorage.getItem('notice')).toBe('**Maintenance** tonight');

    // next visit: same content, no dialog
    cleanup();
    recordFetch(() => '**Maintenance** tonight');
    renderSignedInPage();
    expect(await screen.findByText('tokens page')).toBeTruthy();
    await new Promise((r) => setTimeout(r, 100));
    expect(screen.queryByText('系统公告')).toBeNull();
  });

  it('shows a changed announcement again', async () => {
    localStorage.setItem('notice', 'old text');
    recordFetch(() => 'new text');
    renderSignedInPage();
    expect(await screen.findByText('new text')).toBeTruthy();
  });

  it('shows nothing without an announcement or when it cannot be read', async () => {
    recordFetch(() => '');
    renderSignedInPage();
    expect(await screen.findByText('tokens page')).toBeTruthy();
    await new Promise((r) => setTimeout(r, 100));
    expect(screen.queryByText('系统公告')).toBeNull();
    cleanup();
    recordFetch(() => Promise.reject(new TypeError('offline')));
    renderSignedInPage();
    expect(await screen.findByText('tokens page')).toBeTruthy();
    await new Promise((r) => setTimeout(r, 100));
    expect(screen.queryByText('系统公告')).toBeNull();
  });

  it('does not ask for the announcement before login', async () => {
    localStorage.removeItem('user');
    const calls = recordFetch(() => 'hello');
    renderWithApp(
      [
        { element: <RequireAuth />, children: [{ path: '/token', element: <p>tokens page</p> }] },
        { path: '/login', element: <p>login page</p> },
      ],
      '/token',
    );
    expect(await screen.findByText('login page')).toBeTruthy();
    expect(calls).toEqual([]);
  });
});
