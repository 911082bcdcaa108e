// Usage logs read through TanStack Query (issue 46): a cleanup reloads the list and the stat line by invalidation,
// a query with the same filters asks again, and a user's card is one query per user, opened from the username.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import LogPage from './index.js';

const log = {
  id: 9,
  created_at: 1700000000,
  type: 2,
  content: 'details',
  username: 'alice',
  user_id: 7,
  token_name: 'tok',
  model_name: 'gpt-4o',
  quota: 1250,
  prompt_tokens: 10,
  completion_tokens: 20,
  use_time: 1,
  is_stream: false,
  channel: 5,
  group: 'default',
  other: '',
};

let calls: Call[];
const gets = (path: string) => calls.filter((c) => c.method === 'GET' && c.url.split('?')[0] === path).length;

beforeEach(async () => {
  await i18n.changeLanguage('zh');
  localStorage.setItem(
    'user',
    JSON.stringify({ id: 1, role: 100, username: 'root', display_name: 'root', status: 1, group: 'default' }),
  );
  calls = recordFetch(({ method, path }) => {
    if (path === '/api/log/' && method === 'GET') return { items: [log], total: 1, page: 1, page_size: 10 };
    if (path === '/api/log/stat') return { quota: 2500000, rpm: 3, tpm: 40 };
    if (path === '/api/log/' && method === 'DELETE') return 12;
    if (path === '/api/user/7')
      return { id: 7, username: 'alice', group: 'vip', quota: 0, used_quota: 0, request_count: 4 };
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const renderPage = async () => {
  renderWithApp([{ path: '/log', element: <LogPage /> }], '/log');
  await screen.findByTestId('log-details-9', {}, { timeout: 5000 });
  await waitFor(() => expect(gets('/api/log/stat')).toBe(1));
};

describe('usage logs through queries', () => {
  it('a cleanup reloads the list and the stat line', async () => {
    await renderPage();
    expect(gets('/api/log/')).toBe(1);
    fireEvent.click(screen.getByTestId('log-clean'));
    await act(async () => {
      fireEvent.click(await screen.findByTestId('log-clean-confirm'));
    });
    await waitFor(() => expect(gets('/api/log/')).toBe(2));
    await waitFor(() => expect(gets('/api/log/stat')).toBe(2));
  });

  it('querying again with unchanged filters asks the server again', async () => {
    await renderPage();
    fireEvent.click(screen.getByRole('button', { name: /查\s*询/ }));
    await waitFor(() => expect(gets('/api/log/')).toBe(2));
  });

  it("the username opens the user's card, fetched once per user", async () => {
    await renderPage();
    fireEvent.click(screen.getByTestId('log-user-9'));
    expect(await screen.findByText('vip')).toBeTruthy();
    expect(gets('/api/user/7')).toBe(1);
  });
});
