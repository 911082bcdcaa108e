// Destructive user actions in the list: the exact request each sends, and that the irreversible one (deactivate, a
// soft delete) asks first and sends nothing when cancelled. Money is checked as rendered.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import Users from './index.js';

const user = (id: number, username: string, status: number, quota: number) => ({
  id,
  username,
  display_name: username,
  role: 1,
  status,
  group: 'default',
  quota,
  used_quota: 250000,
  request_count: 3,
});

let calls: Call[];

beforeEach(async () => {
  await i18n.changeLanguage('en');
  localStorage.setItem('quota_per_unit', '500000');
  localStorage.setItem('display_in_currency', 'true');
  localStorage.setItem(
    'user',
    JSON.stringify({ id: 1, role: 100, username: 'root', display_name: 'root', status: 1, group: 'default' }),
  );
  calls = recordFetch(({ method, path }) => {
    if (path === '/api/user/' && method === 'GET')
      return { items: [user(7, 'alice', 1, 1500000), user(8, 'bob', 2, 0)], total: 2, page: 1, page_size: 10 };
    if (path === '/api/group/') return ['default'];
    if (path === '/api/user/manage') return { role: 1, status: 1 };
    if (path === '/api/user/7') return user(7, 'alice', 1, 1500000);
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const renderList = async () => {
  renderWithApp([{ path: '/user', element: <Users /> }], '/user');
  await screen.findByText('alice', {}, { timeout: 5000 });
};
const posts = () => calls.filter((c) => c.method !== 'GET');

describe('user list actions', () => {
  it('shows quotas as dollars', async () => {
    await renderList();
    const row = (name: string) => within(screen.getByText(name).closest('tr')!);
    // remaining, used, requests as the tags read: 1 500 000 and 250 000 quota at 500 000 per dollar
    expect(row('alice').getByText('$3.00')).toBeTruthy();
    expect(row('alice').getByText('$0.50')).toBeTruthy();
    expect(row('bob').getAllByText('$0.00').length).toBeGreaterThan(0);
    expect(row('bob').getByText('$0.50')).toBeTruthy();
  });

  it("the add drawer says the new user gets the new users' initial quota", async () => {
    await renderList();
    fireEvent.click(screen.getByRole('button', { name: /Add user/ }));
    const note = await screen.findByTestId('add-user-quota-note');
    expect(note.textContent).toBe(
      'The new user starts with the "Initial quota of new users" of the Operation settings, as self-registered users do.',
    );
  });

  it('adds a user with POST /api/user/, says so and reads the list again', async () => {
    await renderList();
    const listReads = () => calls.filter((c) => c.method === 'GET' && c.url.startsWith('/api/user/?')).length;
    fireEvent.click(screen.getByRole('button', { name: /Add user/ }));
    fireEvent.change(await screen.findByPlaceholderText('Enter a username'), { target: { value: ' carol ' } });
    fireEvent.change(screen.getByPlaceholderText('Enter a password'), { target: { value: 'carol-pass1' } });
    const before = listReads();
    await act(async () => {
      fireEvent.click(screen.getByTestId('add-user-submit'));
    });
    expect(await screen.findByText('User account created!')).toBeTruthy();
    expect(posts()).toEqual([
      {
        method: 'POST',
        url: '/api/user/',
        body: { username: 'carol', display_name: 'carol', password: 'carol-pass1' },
      },
    ]);
    await waitFor(() => expect(listReads()).toBeGreaterThan(before));
  });

  it('disable and enable send the manage action at once (they are reversible)', async () => {
    await renderList();
    await act(async () => {
      fireEvent.click(screen.getByTestId('disable-7'));
    });
    await act(async () => {
      fireEvent.click(screen.getByTestId('enable-8'));
    });
    expect(posts()).toEqual([
      { method: 'POST', url: '/api/user/manage', body: { id: 7, action: 'disable' } },
      { method: 'POST', url: '/api/user/manage', body: { id: 8, action: 'enable' } },
    ]);
  });

  it('deactivate is named for what it does and is sent only after the confirmation', async () => {
    await renderList();
    const deactivate = screen.getByTestId('deactivate-7');
    expect(deactivate.textContent).toContain('Deactivate permanently');
    fireEvent.click(deactivate);
    await screen.findByText('Permanently deactivate alice?');
    expect(screen.getByText(/cannot be undone/)).toBeTruthy();
    expect(posts()).toEqual([]);
    await act(async () => {
      fireEvent.click(screen.getByTestId('confirm-deactivate-7'));
    });
    await waitFor(() =>
      expect(posts()).toEqual([{ method: 'POST', url: '/api/user/manage', body: { id: 7, action: 'delete' } }]),
    );
  });

  it('cancelling the deactivation sends nothing', async () => {
    await renderList();
    fireEvent.click(screen.getByTestId('deactivate-8'));
    await screen.findByText('Permanently deactivate bob?');
    await act(async () => {
      fireEvent.click(screen.getByText('Cancel'));
    });
    expect(posts()).toEqual([]);
  });

  it('the editor takes the quota in dollars and sends quota units', async () => {
    await renderList();
    fireEvent.click(within(screen.getByText('alice').closest('tr')!).getByRole('button', { name: 'Edit' }));
    const quota = (await screen.findByTestId('user-quota', {}, { timeout: 5000 })) as HTMLInputElement;
    await waitFor(() => expect(quota.value).toBe('3'));
    expect(screen.getByTestId('user-quota-units').textContent).toBe('= 1,500,000 quota');
    fireEvent.change(quota, { target: { value: '7.5' } });
    expect(screen.getByTestId('user-quota-units').textContent).toBe('= 3,750,000 quota');
    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: 'Submit' }));
    });
    await waitFor(() =>
      expect(posts()).toEqual([
        {
          method: 'PUT',
          url: '/api/user/',
          body: { id: 7, username: 'alice', display_name: 'alice', group: 'default', quota: 3750000 },
        },
      ]),
    );
  }, 20_000);
});
