import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, screen, waitFor } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp } from '../../test/harness.js';
import DetailPage from './index.js';
import { apiBaseUrl, exampleCall } from './overview.js';

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
  return [];
}

describe('dashboard overview', () => {
  it('builds the base URL from ServerAddress or the page origin', () => {
    expect(apiBaseUrl('https://gw.example/', 'http://x')).toBe('https://gw.example/v1');
    expect(apiBaseUrl('', 'http://localhost:3000')).toBe('http://localhost:3000/v1');
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
