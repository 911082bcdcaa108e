// A user's subscriptions in the admin's user editor: listed with plan, state and period; a plan bound, one
// invalidated and one deleted, each only after its confirmation and with the exact request; the server's notice of
// the group change shown.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import UserSubscriptions from './UserSubscriptions.js';

const now = Math.floor(Date.now() / 1000);
const sub = (id: number, status: string, end: number) => ({
  subscription: {
    id,
    user_id: 7,
    plan_id: 2,
    amount_total: 0,
    amount_used: 0,
    start_time: now - 86400,
    end_time: end,
    status,
    source: id === 21 ? 'admin' : 'order',
    upgrade_group: '',
  },
});

let calls: Call[];

beforeEach(async () => {
  await i18n.changeLanguage('en');
  calls = recordFetch(({ method, path }) => {
    if (path === '/api/subscription/admin/plans')
      return [{ plan: { id: 2, title: 'Team', enabled: true }, limits: null }];
    if (path === '/api/subscription/admin/users/7/subscriptions' && method === 'GET')
      return [sub(21, 'active', now + 86400), sub(20, 'expired', now - 10)];
    if (path === '/api/subscription/admin/users/7/subscriptions') return { message: '用户分组将升级到 vip' };
    return null;
  });
  renderWithApp([{ path: '/', element: <UserSubscriptions userId={7} /> }], '/');
  await screen.findAllByText('Team');
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const writes = () => calls.filter((c) => c.method !== 'GET');
const click = async (testId: string) => {
  await act(async () => {
    fireEvent.click(await screen.findByTestId(testId));
  });
};

describe("a user's subscriptions", () => {
  it('lists each with its state; only a running one can be invalidated', () => {
    expect(screen.getByText('Active')).toBeTruthy();
    expect(screen.getByText('Expired')).toBeTruthy();
    expect(screen.getByText('#21 · Admin')).toBeTruthy();
    expect(screen.getByText('#20 · Purchase')).toBeTruthy();
    expect(screen.getByTestId('user-sub-invalidate-21')).toBeTruthy();
    expect(screen.queryByTestId('user-sub-invalidate-20')).toBeNull();
  });

  it('binds the chosen plan after the confirmation and shows the group change', async () => {
    fireEvent.mouseDown(
      screen.getByTestId('user-sub-plan').querySelector('.ant-select-selector') ?? screen.getByTestId('user-sub-plan'),
    );
    fireEvent.click((await screen.findAllByTitle('Team')).at(-1)!);
    await click('user-sub-bind');
    expect(await screen.findByText('Give this user the plan "Team"? No payment is taken.')).toBeTruthy();
    expect(writes()).toEqual([]);
    await click('user-sub-bind-ok');
    expect(writes()).toEqual([
      { method: 'POST', url: '/api/subscription/admin/users/7/subscriptions', body: { plan_id: 2 } },
    ]);
    expect(await screen.findByText('The user group will be upgraded to vip')).toBeTruthy();
  });

  it('invalidates and deletes with their confirmations', async () => {
    await click('user-sub-invalidate-21');
    expect(await screen.findByText(/Invalidate subscription #21\?/)).toBeTruthy();
    expect(writes()).toEqual([]);
    await click('user-sub-invalidate-ok-21');
    await click('user-sub-delete-20');
    await click('user-sub-delete-ok-20');
    expect(writes()).toEqual([
      { method: 'POST', url: '/api/subscription/admin/user_subscriptions/21/invalidate', body: undefined },
      { method: 'DELETE', url: '/api/subscription/admin/user_subscriptions/20', body: undefined },
    ]);
  });
});
