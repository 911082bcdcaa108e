// The plans admin page: the table as the admin reads it (price, duration, windows, scope), the enabled switch's
// PATCH, and the drawer: its checks before any request, the exact body it creates and updates with, and the
// server's refusal shown as its message.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, within } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import SubscriptionPlansPage from './index.js';
import type { PlanView } from './logic.js';

const listed: PlanView = {
  plan: {
    id: 3,
    title: 'Pro',
    subtitle: 'for teams',
    price_amount: 9.5,
    currency: 'USD',
    duration_unit: 'month',
    duration_value: 1,
    custom_seconds: 0,
    enabled: true,
    sort_order: 0,
    stripe_price_id: '',
    creem_product_id: '',
    max_purchase_per_user: 0,
    upgrade_group: '',
    total_amount: 0,
    quota_reset_period: 'never',
    quota_reset_custom_seconds: 0,
  },
  limits: {
    rolling_seconds: 18000,
    rolling_amount: 250000,
    daily_amount: 500000,
    weekly_amount: 0,
    monthly_amount: 0,
    models: ['gpt-4o'],
    groups: [],
  },
};

let calls: Call[];
let refuse = '';

beforeEach(async () => {
  await i18n.changeLanguage('en');
  localStorage.setItem('quota_per_unit', '500000');
  localStorage.setItem('display_in_currency', 'true');
  refuse = '';
  calls = recordFetch(({ method, path }) => {
    if (path === '/api/subscription/admin/plans' && method === 'GET') return [listed];
    if (path === '/api/group/') return ['default', 'vip'];
    if (path === '/api/channel/models_enabled') return ['gpt-4o', 'claude'];
    if (method !== 'GET' && refuse)
      return new Response(JSON.stringify({ success: false, message: refuse }), { status: 200 });
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const writes = () => calls.filter((c) => c.method !== 'GET');
const renderPage = async () => {
  renderWithApp([{ path: '/subscription', element: <SubscriptionPlansPage /> }], '/subscription');
  return (await screen.findByText('Pro')).closest('tr')!;
};
const input = (name: string) => document.querySelector(`input[name=${name}]`) as HTMLInputElement;
const submit = async () => {
  await act(async () => {
    fireEvent.click(screen.getByTestId('plan-submit'));
  });
};

describe('subscription plans page', () => {
  it('lists each plan with its price, duration, windows and scope', async () => {
    const row = within(await renderPage());
    expect(row.getByText('for teams')).toBeTruthy();
    expect(row.getByText('9.50 USD')).toBeTruthy();
    expect(row.getByText('1 month')).toBeTruthy();
    expect(screen.getByTestId('plan-window-3-rolling').textContent).toBe('Rolling 5 hours $0.50');
    expect(screen.getByTestId('plan-window-3-daily').textContent).toBe('Daily $1.00');
    expect(row.getByText('Models: gpt-4o')).toBeTruthy();
    expect(row.getByText('All groups')).toBeTruthy();
  });

  it('switches a plan off with PATCH {enabled}', async () => {
    await renderPage();
    await act(async () => {
      fireEvent.click(screen.getByTestId('plan-enabled-3'));
    });
    expect(writes()).toEqual([{ method: 'PATCH', url: '/api/subscription/admin/plans/3', body: { enabled: false } }]);
  });

  it('creates a plan: checks first, then POSTs {plan, limits} with the amounts in quota units', async () => {
    await renderPage();
    fireEvent.click(screen.getByTestId('plan-add'));
    await screen.findByText('New subscription plan');
    await submit();
    expect(await screen.findByText('Please enter a title')).toBeTruthy();
    expect(writes()).toEqual([]);

    fireEvent.change(input('title'), { target: { value: 'Daily 5' } });
    fireEvent.change(input('price_amount'), { target: { value: '3' } });
    // dollars typed, quota units sent
    fireEvent.change(screen.getByTestId('plan-daily_amount'), { target: { value: '5' } });
    fireEvent.change(screen.getByTestId('plan-rolling_amount'), { target: { value: '1' } });
    await submit();
    expect(await screen.findByText('A rolling window quota needs a length')).toBeTruthy();
    expect(writes()).toEqual([]);
    fireEvent.change(input('rolling_seconds'), { target: { value: '3600' } });
    await submit();
    expect(writes()).toHaveLength(1);
    const { method, url, body } = writes()[0]!;
    expect([method, url]).toEqual(['POST', '/api/subscription/admin/plans']);
    expect(body).toMatchObject({
      plan: { title: 'Daily 5', price_amount: 3, duration_unit: 'month', duration_value: 1, enabled: true },
      limits: {
        rolling_seconds: 3600,
        rolling_amount: 500000,
        daily_amount: 2500000,
        weekly_amount: 0,
        monthly_amount: 0,
        models: [],
        groups: [],
      },
    });
    expect(await screen.findByText('Plan created')).toBeTruthy();
  });

  it("edits a plan with PUT and shows the server's refusal as its message", async () => {
    await renderPage();
    fireEvent.click(screen.getByTestId('plan-edit-3'));
    await screen.findByText('Edit subscription plan');
    expect(input('title').value).toBe('Pro');
    refuse = '升级分组不存在';
    fireEvent.change(input('title'), { target: { value: 'Pro 2' } });
    await submit();
    const put = writes()[0]!;
    expect([put.method, put.url]).toEqual(['PUT', '/api/subscription/admin/plans/3']);
    expect(put.body).toMatchObject({ plan: { title: 'Pro 2', price_amount: 9.5 }, limits: listed.limits });
    // the server's Chinese text, in the console's language
    expect(await screen.findByText('The upgrade group does not exist')).toBeTruthy();
  });
});
