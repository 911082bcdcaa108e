// The wallet's plans: hidden when there is nothing to show; plan cards with price, duration and windows; buying with
// the balance only after the confirmation, then the plans and the balance read again; "My plans" with each window's
// bar, what is left and its reset, a queued renewal marked, past ones folded; the billing preference saved.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import i18n from '../../i18n/index.js';
import { recordFetch, renderWithApp, type Call } from '../../test/harness.js';
import TopUpPage from './index.js';
import type { PlanView, SelfSubscriptions, SubscriptionSummary } from '../subscription/logic.js';

const now = Math.floor(Date.now() / 1000);
const plan: PlanView = {
  plan: {
    id: 5,
    title: 'Daily Pro',
    subtitle: '',
    price_amount: 2,
    currency: 'USD',
    duration_unit: 'day',
    duration_value: 30,
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
    rolling_seconds: 0,
    rolling_amount: 0,
    daily_amount: 500000,
    weekly_amount: 0,
    monthly_amount: 0,
    models: [],
    groups: [],
  },
};
const summary = (id: number, start: number, end: number, status = 'active'): SubscriptionSummary => ({
  subscription: {
    id,
    user_id: 9,
    plan_id: 5,
    amount_total: 0,
    amount_used: 0,
    start_time: start,
    end_time: end,
    status,
    source: 'order',
    upgrade_group: '',
  },
  windows:
    status === 'active' && start <= now
      ? [
          { slot: 'daily', limit: 500000, used: 125000, remaining: 375000, resets_at: now + 5 * 3600 },
          { slot: 'main', limit: 1000000, used: 125000, remaining: 875000, resets_at: 0 },
        ]
      : [],
});

let calls: Call[];
let plans: PlanView[];
let self: SelfSubscriptions;

beforeEach(async () => {
  await i18n.changeLanguage('en');
  localStorage.setItem('quota_per_unit', '500000');
  localStorage.setItem('display_in_currency', 'true');
  plans = [plan];
  self = { billing_preference: 'subscription_first', subscriptions: [], all_subscriptions: [] };
  calls = recordFetch(({ method, path, body }) => {
    if (path === '/api/user/self') return { quota: 5000000 };
    if (path === '/api/subscription/plans') return plans;
    if (path === '/api/subscription/self') return self;
    if (path === '/api/subscription/balance/pay') {
      const bought = summary(11, now, now + 30 * 86400);
      self = { ...self, subscriptions: [bought], all_subscriptions: [bought] };
      return null;
    }
    if (path === '/api/subscription/self/preference' && method === 'PUT') {
      self = { ...self, ...(body as object) };
      return body;
    }
    return null;
  });
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  localStorage.clear();
});

const renderWallet = () => renderWithApp([{ path: '/topup', element: <TopUpPage /> }], '/topup', { setup: true });
const writes = () => calls.filter((c) => c.method !== 'GET');
/** antd puts a Radio's test id on its input, or on its label in some versions */
const radio = (testId: string) => {
  const el = screen.getByTestId(testId);
  return (el.tagName === 'INPUT' ? el : el.querySelector('input')!) as HTMLInputElement;
};

describe('wallet plans', () => {
  it('stay hidden when the site sells none and the user never had one', async () => {
    plans = [];
    renderWallet();
    await waitFor(() => expect(calls.some((c) => c.url === '/api/subscription/self')).toBe(true));
    await screen.findByText('$10.00');
    expect(screen.queryByTestId('plans-section')).toBeNull();
  });

  it('show a card per plan and buy with the balance only after the confirmation', async () => {
    renderWallet();
    const card = await screen.findByTestId('plan-card-5');
    expect(card.textContent).toContain('Daily Pro');
    expect(card.textContent).toContain('2.00 USD for 30 days');
    expect(screen.getByTestId('plan-window-5-daily').textContent).toBe('Daily $1.00');
    // a daily window: its first period is partial, which the wallet says
    expect(screen.getByTestId('plans-calendar-note').textContent).toContain('the first period after a purchase');
    expect(screen.getByText('No running plans')).toBeTruthy();

    fireEvent.click(screen.getByTestId('plan-buy-5'));
    expect(await screen.findByText('Buy "Daily Pro" with your balance: $2.00 will be deducted.')).toBeTruthy();
    // nothing of this plan running: it starts now
    expect(screen.queryByTestId('plan-buy-queued')).toBeNull();
    expect(writes()).toEqual([]);
    await act(async () => {
      fireEvent.click(screen.getByTestId('plan-buy-confirm'));
    });
    expect(writes()).toEqual([{ method: 'POST', url: '/api/subscription/balance/pay', body: { plan_id: 5 } }]);
    // the new plan with its windows, and the balance read again
    expect(await screen.findByTestId('my-plan-11')).toBeTruthy();
    await waitFor(() => expect(calls.filter((c) => c.url === '/api/user/self').length).toBe(2));
  });

  it('show each running window as a bar with used / limit, what is left and its reset', async () => {
    const running = summary(11, now - 3600, now + 86400 * 10);
    const queued = summary(12, now + 86400 * 10, now + 86400 * 40);
    const past = summary(10, now - 86400 * 40, now - 86400 * 10, 'expired');
    self = { ...self, subscriptions: [queued, running], all_subscriptions: [queued, running, past] };
    renderWallet();
    const bar = await screen.findByTestId('my-plan-11-daily');
    expect(screen.getByTestId('my-plan-11-daily-used').textContent).toBe('Used $0.25 of $1.00');
    expect(screen.getByTestId('my-plan-11-daily-left').textContent).toBe('$0.75 left');
    expect(screen.getByTestId('my-plan-11-daily-reset').textContent).toMatch(
      /^Resets \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \(in 5 hours\)$/,
    );
    expect(bar.querySelector('.ant-progress')?.getAttribute('aria-valuenow')).toBe('25');
    // the plan's total: lasts until the plan ends
    expect(screen.getByTestId('my-plan-11-main-left').textContent).toBe('$1.75 left');
    expect(screen.getByTestId('my-plan-11-main-reset').textContent).toBe('Does not reset: lasts until the plan ends');
    expect(screen.getByTestId('my-plan-12-state').textContent).toBe('Queued');
    expect(screen.getByTestId('my-plan-11-state').textContent).toBe('Active');
    // buying it again queues it behind the queued one
    fireEvent.click(screen.getByTestId('plan-buy-5'));
    expect((await screen.findByTestId('plan-buy-queued')).textContent).toMatch(
      /^You already have this plan: the new one starts when the current one ends \(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\)\.$/,
    );
    // the past one is folded under its count
    expect(screen.getByText('Past subscriptions (1)')).toBeTruthy();
    expect(screen.queryByTestId('my-plan-10')).toBeNull();
  });

  it('save the billing preference', async () => {
    renderWallet();
    await screen.findByTestId('billing-preference');
    expect(screen.getByText('Only the wallet pays; your plans are not used.')).toBeTruthy();
    await act(async () => {
      fireEvent.click(radio('pref-wallet_only'));
    });
    expect(writes()).toEqual([
      { method: 'PUT', url: '/api/subscription/self/preference', body: { billing_preference: 'wallet_only' } },
    ]);
    expect(await screen.findByText('Billing preference saved')).toBeTruthy();
    await waitFor(() => expect(radio('pref-wallet_only').checked).toBe(true));
  });
});
