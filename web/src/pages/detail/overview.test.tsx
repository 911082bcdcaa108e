import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp } from '../../test/harness.js';
import DetailPage from './index.js';
import { apiBaseUrl, exampleCall, exampleModel, serverAddressUnset } from './overview.js';

const USER = { id: 7, username: 'alice', display_name: 'alice', role: 1, status: 1, group: 'default' };

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem('user', JSON.stringify(USER));
  localStorage.setItem('display_in_currency', 'true');
  localStorage.setItem('quota_per_unit', '500000');
});
afterEach(() => {
  cleanup();
  localStorage.clear();
  vi.unstubAllGlobals();
});

function reply({ path }: { path: string }) {
  if (path === '/api/user/self') return { quota: 1_250_000, used_quota: 250_000, request_count: 42 };
  if (path === '/api/user/models') return ['deepseek-chat', 'gpt-4o'];
  if (path === '/api/notice') return '';
  if (path === '/api/pricing')
    return [
      { model_name: 'deepseek-chat', enable_groups: ['default'], priced: true },
      { model_name: 'gpt-4o', enable_groups: ['default'], priced: true },
    ];
  return [];
}

describe('dashboard overview', () => {
  it('builds the base URL from ServerAddress or the page origin', () => {
    expect(apiBaseUrl('https://gw.example/', 'http://x')).toBe('https://gw.example/v1');
    expect(apiBaseUrl('', 'http://localhost:3000')).toBe('http://localhost:3000/v1');
  });

  it('takes the default ServerAddress as unset when the console is reached elsewhere (issue 46, point 3)', () => {
    expect(serverAddressUnset('http://localhost:3000', 'http://192.168.1.5:8080')).toBe(true);
    expect(serverAddressUnset('http://localhost:3000', 'http://localhost:3000')).toBe(false);
    expect(serverAddressUnset('', 'http://x')).toBe(true);
    expect(serverAddressUnset('https://gw.example', 'http://x')).toBe(false);
    expect(apiBaseUrl('http://localhost:3000', 'http://192.168.1.5:8080')).toBe('http://192.168.1.5:8080/v1');
  });

  it('shows a model the user can call: priced, in their group, a chat model', () => {
    const pricing = [
      { model_name: 'claude-2', enable_groups: ['default'], priced: false },
      { model_name: 'text-embedding-3-small', enable_groups: ['default'], priced: true },
      { model_name: 'claude-3-5-haiku', enable_groups: ['default'], priced: true },
      { model_name: 'gpt-4o', enable_groups: ['vip'], priced: true },
    ];
    const models = ['claude-2', 'text-embedding-3-small', 'gpt-4o', 'claude-3-5-haiku'];
    expect(exampleModel(models, pricing, 'default', false)).toBe('claude-3-5-haiku');
    expect(exampleModel(models, pricing, 'vip', false)).toBe('gpt-4o');
    // self-use mode calls unpriced models too
    expect(exampleModel(models, pricing, 'default', true)).toBe('claude-2');
    expect(exampleModel([], pricing, 'default', false)).toBeUndefined();
  });

  it('asks root once to set the server address, and saves the page origin', async () => {
    localStorage.setItem('user', JSON.stringify({ ...USER, role: 100 }));
    const calls = recordFetch(reply);
    renderWithApp([{ path: '/detail', element: <DetailPage /> }], '/detail', {
      setup: true,
      enable_data_export: false,
      // never set (the default reads the same; the test page is on http://localhost:3000 itself)
      server_address: '',
    });
    const prompt = await screen.findByTestId('server-address-prompt');
    expect(prompt.textContent).toContain(window.location.origin);
    fireEvent.click(screen.getByTestId('server-address-use'));
    await waitFor(() =>
      expect(calls.find((c) => c.method === 'PUT')).toMatchObject({
        url: '/api/option/',
        body: { key: 'ServerAddress', value: window.location.origin },
      }),
    );
  });

  it('does not ask a normal user, nor root once dismissed', async () => {
    recordFetch(reply);
    renderWithApp([{ path: '/detail', element: <DetailPage /> }], '/detail', {
      setup: true,
      enable_data_export: false,
      server_address: '',
    });
    await screen.findByTestId('overview-balance');
    expect(screen.queryByTestId('server-address-prompt')).toBeNull();
    cleanup();
    localStorage.setItem('user', JSON.stringify({ ...USER, role: 100 }));
    localStorage.setItem('server-address-prompt-dismissed', '1');
    renderWithApp([{ path: '/detail', element: <DetailPage /> }], '/detail', {
      setup: true,
      enable_data_export: false,
      server_address: '',
    });
    await screen.findByTestId('overview-balance');
    expect(screen.queryByTestId('server-address-prompt')).toBeNull();
  });

  it('shows the balance, the base URL and an example call with a placeholder key', async () => {
    recordFetch(reply);
    renderWithApp([{ path: '/detail', element: <DetailPage /> }], '/detail', {
      setup: true,
      enable_data_export: false,
      server_address: 'https://gw.example',
    });
    // the card shows before the user's figures have arrived
    const balance = await screen.findByTestId('overview-balance');
    await waitFor(() => expect(balance.textContent).toContain('$2.50'));
    expect(screen.getByTestId('overview-base-url').textContent).toBe('https://gw.example/v1');
    const example = await screen.findByText(/deepseek-chat/);
    expect(example.textContent).toBe(exampleCall('https://gw.example/v1', 'deepseek-chat'));
    expect(example.textContent).toContain('curl https://gw.example/v1/chat/completions');
    expect(example.textContent).toContain('Authorization: Bearer sk-xxxxxxxx');
    expect(screen.getByText('数据看板未启用')).toBeTruthy();
    expect(screen.queryByTestId('overview-notice')).toBeNull();
  });

  it('falls back to the page origin and shows the announcement panel', async () => {
    recordFetch((call) => (call.path === '/api/notice' ? 'Scheduled **maintenance**' : reply(call)));
    renderWithApp([{ path: '/detail', element: <DetailPage /> }], '/detail', {
      setup: true,
      enable_data_export: false,
    });
    // the Markdown renderer is loaded on demand: the panel fills in once it has arrived
    const panel = await screen.findByTestId('overview-notice');
    await waitFor(() => expect(panel.textContent).toContain('Scheduled maintenance'));
    expect(screen.getByTestId('overview-base-url').textContent).toBe(`${window.location.origin}/v1`);
  });
});
