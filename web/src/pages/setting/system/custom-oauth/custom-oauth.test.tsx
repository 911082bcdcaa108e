// The custom OAuth settings card against a recorded fetch: the list without secrets, the add drawer with discovery
// filling the endpoints, the save body, an edit that leaves the secret empty (not sent), the enable switch and delete.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import i18n from '../../../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../../../test/harness.js';
import CustomOAuthSection from './CustomOAuthSection.js';
import type { CustomProvider } from './api.js';

const ACME: CustomProvider = {
  id: 3,
  name: 'Acme',
  slug: 'acme',
  icon: '',
  kind: 'oauth_code',
  enabled: true,
  client_id: 'gw-client',
  authorization_endpoint: 'https://idp.example.com/authorize',
  token_endpoint: 'https://idp.example.com/token',
  user_info_endpoint: 'https://idp.example.com/userinfo',
  scopes: 'openid',
  user_id_field: 'sub',
  username_field: 'preferred_username',
  display_name_field: 'name',
  email_field: 'email',
  well_known: '',
  auth_style: 0,
};

let calls: Call[];

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  calls = recordFetch(({ method, path }) => {
    if (method === 'GET' && path === '/api/custom-oauth-provider/') return [ACME];
    if (path === '/api/custom-oauth-provider/discovery')
      return {
        well_known_url: 'https://new.example.com/.well-known/openid-configuration',
        discovery: {
          authorization_endpoint: 'https://new.example.com/auth',
          token_endpoint: 'https://new.example.com/token',
          userinfo_endpoint: 'https://new.example.com/me',
        },
      };
    return ACME;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const writes = () => calls.filter((c) => c.method !== 'GET');
const fill = (testId: string, value: string) => fireEvent.change(screen.getByTestId(testId), { target: { value } });

function renderSection() {
  renderWithApp([{ path: '*', element: <CustomOAuthSection origin="https://gw.example.com" /> }], '/setting');
}

describe('custom OAuth settings section', () => {
  it('lists the providers with their enable switch', async () => {
    renderSection();
    const card = await screen.findByTestId('section-custom-oauth');
    expect(await within(card).findByText('Acme')).toBeTruthy();
    expect(within(card).getByText('自定义 OAuth')).toBeTruthy();
    expect(screen.getByTestId('custom-oauth-enabled-acme').getAttribute('aria-checked')).toBe('true');
  });

  it('adds a provider, the endpoints filled from the discovery document', async () => {
    renderSection();
    fireEvent.click(await screen.findByTestId('custom-oauth-add'));
    await screen.findByTestId('custom-oauth-drawer');
    fill('field-name', 'New IdP');
    fill('field-slug', 'new-idp');
    fill('field-client_id', 'cid');
    fill('field-client_secret', 'sek');
    fill('field-well_known', 'https://new.example.com/.well-known/openid-configuration');
    fireEvent.click(screen.getByTestId('custom-oauth-discover'));
    await waitFor(() =>
      expect((screen.getByTestId('field-token_endpoint') as HTMLInputElement).value).toBe(
        'https://new.example.com/token',
      ),
    );
    fireEvent.click(screen.getByTestId('custom-oauth-save'));
    await waitFor(() => expect(writes().filter((c) => c.method === 'POST')).toHaveLength(2));
    expect(writes()[0]).toEqual({
      method: 'POST',
      url: '/api/custom-oauth-provider/discovery',
      body: { well_known_url: 'https://new.example.com/.well-known/openid-configuration' },
    });
    expect(writes()[1]).toMatchObject({
      method: 'POST',
      url: '/api/custom-oauth-provider/',
      body: {
        name: 'New IdP',
        slug: 'new-idp',
        client_id: 'cid',
        client_secret: 'sek',
        authorization_endpoint: 'https://new.example.com/auth',
        token_endpoint: 'https://new.example.com/token',
        user_info_endpoint: 'https://new.example.com/me',
        user_id_field: 'sub',
        enabled: true,
      },
    });
  });

  it('refuses a bad slug in the form without sending anything', async () => {
    renderSection();
    fireEvent.click(await screen.findByTestId('custom-oauth-add'));
    await screen.findByTestId('custom-oauth-drawer');
    fill('field-name', 'X');
    fill('field-slug', 'Bad Slug');
    fireEvent.click(screen.getByTestId('custom-oauth-save'));
    expect(await screen.findByText('只能包含小写字母、数字和连字符')).toBeTruthy();
    expect(writes()).toEqual([]);
  });

  it('edits without sending an empty secret, toggles and deletes', async () => {
    renderSection();
    fireEvent.click(await screen.findByTestId('custom-oauth-edit-acme'));
    await screen.findByTestId('custom-oauth-drawer');
    expect((screen.getByTestId('field-client_secret') as HTMLInputElement).value).toBe('');
    fill('field-name', 'Acme SSO');
    fireEvent.click(screen.getByTestId('custom-oauth-save'));
    await waitFor(() => expect(writes()).toHaveLength(1));
    expect(writes()[0]!.method).toBe('PUT');
    expect(writes()[0]!.url).toBe('/api/custom-oauth-provider/3');
    expect(writes()[0]!.body).toMatchObject({ name: 'Acme SSO' });
    expect(writes()[0]!.body).not.toHaveProperty('client_secret');

    fireEvent.click(screen.getByTestId('custom-oauth-enabled-acme'));
    await waitFor(() => expect(writes()).toHaveLength(2));
    expect(writes()[1]).toEqual({ method: 'PUT', url: '/api/custom-oauth-provider/3', body: { enabled: false } });

    fireEvent.click(screen.getByTestId('custom-oauth-delete-acme'));
    fireEvent.click(await screen.findByText('OK'));
    await waitFor(() => expect(writes()).toHaveLength(3));
    expect(writes()[2]).toEqual({ method: 'DELETE', url: '/api/custom-oauth-provider/3', body: undefined });
  });
});
