// Custom OAuth providers in the browser: a login button for each one /api/status lists, its authorize URL returning
// to /oauth/<slug>, and the bind / unbind rows in personal settings.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../../i18n/index.js';
import type { Status } from '../../../context/status.js';
import { navigation } from '../../../lib/api.js';
import { recordFetch, renderWithApp } from '../../../test/harness.js';
import Login from '../../auth/Login.js';
import CustomOAuthBindings from './CustomOAuthBindings.js';

const ORIGIN = window.location.origin;
const STATUS: Status = {
  setup: true,
  github_oauth: true,
  github_client_id: 'gh',
  custom_oauth_providers: [
    {
      id: 3,
      name: 'Acme',
      slug: 'acme',
      icon: '',
      client_id: 'gw-client',
      authorization_endpoint: 'https://idp.example.com/authorize?tenant=t1',
      scopes: 'openid profile',
    },
    // malformed: no client id
    {
      id: 4,
      name: 'Broken',
      slug: 'broken',
      icon: '',
      client_id: '',
      authorization_endpoint: 'https://x/a',
      scopes: '',
    },
  ],
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
  localStorage.clear();
});

describe('custom OAuth login buttons', () => {
  it('shows one after the built-ins for each listed provider, and leaves for its authorize endpoint', async () => {
    recordFetch(({ path }) => (path === '/api/oauth/state' ? 'st4te' : {}));
    renderWithApp([{ path: '*', element: <Login /> }], '/login', STATUS);
    await screen.findByTestId('oauth-buttons');
    const shown = Array.from(document.querySelectorAll('[data-testid^="oauth-"]'))
      .map((e) => e.getAttribute('data-testid'))
      .filter((id) => id !== 'oauth-buttons');
    expect(shown).toEqual(['oauth-github', 'oauth-acme']);
    fireEvent.click(screen.getByTestId('oauth-acme'));
    await waitFor(() => expect(redirects).toHaveLength(1));
    const url = new URL(redirects[0]!);
    expect(url.origin + url.pathname).toBe('https://idp.example.com/authorize');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      tenant: 't1',
      client_id: 'gw-client',
      redirect_uri: `${ORIGIN}/oauth/acme`,
      response_type: 'code',
      scope: 'openid profile',
      state: 'st4te',
    });
  });
});

describe('custom OAuth bindings in personal settings', () => {
  it('binds a provider not yet bound, and unbinds one that is', async () => {
    const calls = recordFetch(({ method, path }) => {
      if (path === '/api/oauth/state') return 'st4te';
      if (method === 'GET' && path === '/api/user/oauth/bindings')
        return [
          {
            provider_id: 9,
            provider_name: 'Old IdP',
            provider_slug: 'old',
            provider_icon: '',
            provider_user_id: 'u-9',
          },
        ];
      return null;
    });
    renderWithApp([{ path: '*', element: <CustomOAuthBindings /> }], '/personal', STATUS);
    expect(await screen.findByText('u-9')).toBeTruthy();
    expect(screen.getByText('Acme')).toBeTruthy();
    fireEvent.click(screen.getByTestId('bind-acme'));
    await waitFor(() => expect(redirects).toHaveLength(1));
    expect(new URL(redirects[0]!).searchParams.get('redirect_uri')).toBe(`${ORIGIN}/oauth/acme`);

    fireEvent.click(screen.getByTestId('unbind-old'));
    fireEvent.click(await screen.findByText('OK'));
    await waitFor(() =>
      expect(calls.filter((c) => c.method === 'DELETE')).toEqual([
        { method: 'DELETE', url: '/api/user/oauth/bindings/9', body: undefined },
      ]),
    );
  });
});
