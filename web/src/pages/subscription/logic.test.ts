// The plan screens' pure logic: a window's bar, what is left and its reset label; durations; a plan's windows; a
// user's subscriptions split for display; the admin form's checks and the body it sends.
import { afterEach, describe, expect, it } from 'vitest';
import i18n from '../../i18n/index.js';
import {
  balanceCost,
  barPercent,
  checkPlanForm,
  defaultPlanForm,
  hasCalendarWindow,
  planDuration,
  planToForm,
  planWindows,
  queuedStart,
  resetLabel,
  secondsAsUnit,
  shownWindows,
  splitSubscriptions,
  subscriptionState,
  windowRemaining,
  type Plan,
  type PlanFormValues,
  type PlanView,
  type Subscription,
} from './logic.js';
import { formatLength, formatReset } from './format.js';

const plan = (over: Partial<Plan> = {}): Plan => ({
  id: 1,
  title: 'Pro',
  subtitle: '',
  price_amount: 10,
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
  ...over,
});

const sub = (over: Partial<Subscription>): Subscription => ({
  id: 1,
  user_id: 2,
  plan_id: 1,
  amount_total: 0,
  amount_used: 0,
  start_time: 1000,
  end_time: 9000,
  status: 'active',
  source: 'order',
  upgrade_group: '',
  ...over,
});

afterEach(async () => {
  await i18n.changeLanguage('zh');
});

describe('window display', () => {
  it('fills the bar by used / limit, clamped to 0–100, empty without a limit', () => {
    expect(barPercent({ limit: 1000, used: 0 })).toBe(0);
    expect(barPercent({ limit: 1000, used: 250 })).toBe(25);
    expect(barPercent({ limit: 3, used: 1 })).toBe(33.3);
    // a settlement may pass the limit by one request's difference: the bar stays full, not beyond
    expect(barPercent({ limit: 1000, used: 1200 })).toBe(100);
    expect(barPercent({ limit: 1000, used: -5 })).toBe(0);
    expect(barPercent({ limit: 0, used: 500 })).toBe(0);
  });

  it('takes what is left from the server, else limit − used, never below 0; null without a limit', () => {
    expect(windowRemaining({ limit: 1000, used: 200, remaining: 800 })).toBe(800);
    expect(windowRemaining({ limit: 1000, used: 1200, remaining: -200 })).toBe(0);
    expect(windowRemaining({ limit: 1000, used: 300, remaining: null })).toBe(700);
    expect(windowRemaining({ limit: 0, used: 300, remaining: null })).toBeNull();
  });

  it("leaves out a limitless window beside limited ones, but shows it when it is the plan's only one", () => {
    const main = { slot: 'main' as const, limit: 0, used: 5, remaining: null, resets_at: 0 };
    const daily = { slot: 'daily' as const, limit: 100, used: 5, remaining: 95, resets_at: 10 };
    expect(shownWindows([main, daily])).toEqual([daily]);
    expect(shownWindows([main])).toEqual([main]);
    expect(shownWindows([])).toEqual([]);
  });

  it('labels a reset by the largest whole unit, or the plan end when resets_at is 0', () => {
    const now = 1_000_000;
    expect(resetLabel(0, now)).toEqual({ kind: 'planEnd' });
    expect(resetLabel(now + 30, now)).toEqual({ kind: 'at', at: now + 30, value: 1, unit: 'minute' });
    expect(resetLabel(now + 59 * 60 + 1, now)).toEqual({ kind: 'at', at: now + 3541, value: 60, unit: 'minute' });
    expect(resetLabel(now + 5 * 3600, now)).toEqual({ kind: 'at', at: now + 18000, value: 5, unit: 'hour' });
    expect(resetLabel(now + 3 * 86400 + 100, now)).toMatchObject({ value: 3, unit: 'day' });
    // a reset already passed (the page's clock ahead) reads as in a minute, never "ago"
    expect(resetLabel(now - 10, now)).toMatchObject({ value: 1, unit: 'minute' });
  });

  it('formats the reset as the time and the relative form in the console language', async () => {
    const now = Math.floor(new Date(2026, 11, 7, 19, 0, 0).getTime() / 1000);
    const at = Math.floor(new Date(2026, 11, 8, 0, 0, 0).getTime() / 1000);
    await i18n.changeLanguage('en');
    expect(formatReset(at, now)).toBe('2026-12-08 00:00:00 (in 5 hours)');
    expect(formatReset(0, now)).toBeNull();
    await i18n.changeLanguage('zh');
    expect(formatReset(at, now)).toBe('2026-12-08 00:00:00 (5小时后)');
  });
});

describe('durations and windows of a plan', () => {
  it('reads a length in its largest exact unit', () => {
    expect(secondsAsUnit(86400 * 7)).toEqual({ value: 7, unit: 'day' });
    expect(secondsAsUnit(90000)).toEqual({ value: 25, unit: 'hour' });
    expect(secondsAsUnit(300)).toEqual({ value: 5, unit: 'minute' });
    expect(secondsAsUnit(61)).toEqual({ value: 61, unit: 'second' });
    expect(planDuration(plan({ duration_unit: 'year', duration_value: 2 }))).toEqual({ value: 2, unit: 'year' });
    expect(planDuration(plan({ duration_unit: 'custom', custom_seconds: 7200 }))).toEqual({ value: 2, unit: 'hour' });
  });

  it('words a length in the console language', async () => {
    await i18n.changeLanguage('en');
    expect(formatLength(3, 'month')).toBe('3 months');
    expect(formatLength(1, 'day')).toBe('1 day');
    await i18n.changeLanguage('zh');
    expect(formatLength(3, 'month')).toBe('3个月');
  });

  it("lists new-api's main window (when it has a total) and ours, in order", () => {
    expect(planWindows({ plan: plan(), limits: null })).toEqual([]);
    const view: PlanView = {
      plan: plan({ total_amount: 5000, quota_reset_period: 'custom', quota_reset_custom_seconds: 3600 }),
      limits: {
        rolling_seconds: 18000,
        rolling_amount: 100,
        daily_amount: 200,
        weekly_amount: 0,
        monthly_amount: 300,
        models: [],
        groups: [],
      },
    };
    expect(planWindows(view)).toEqual([
      { slot: 'main', period: 'custom', customSeconds: 3600, amount: 5000 },
      { slot: 'rolling', seconds: 18000, amount: 100 },
      { slot: 'daily', amount: 200 },
      { slot: 'monthly', amount: 300 },
    ]);
  });
});

describe('calendar windows', () => {
  it('are the daily, weekly and monthly ones, and a total reset daily, weekly or monthly', () => {
    const none = { rolling_seconds: 0, rolling_amount: 0, daily_amount: 0, weekly_amount: 0, monthly_amount: 0 };
    const limits = (over: object) => ({ ...none, models: [], groups: [], ...over });
    expect(hasCalendarWindow({ plan: plan(), limits: null })).toBe(false);
    expect(hasCalendarWindow({ plan: plan({ total_amount: 5 }), limits: null })).toBe(false);
    expect(hasCalendarWindow({ plan: plan({ total_amount: 5, quota_reset_period: 'weekly' }), limits: null })).toBe(
      true,
    );
    expect(
      hasCalendarWindow({
        plan: plan({ total_amount: 5, quota_reset_period: 'custom', quota_reset_custom_seconds: 60 }),
        limits: null,
      }),
    ).toBe(false);
    expect(hasCalendarWindow({ plan: plan(), limits: limits({ rolling_seconds: 60, rolling_amount: 5 }) })).toBe(false);
    expect(hasCalendarWindow({ plan: plan(), limits: limits({ monthly_amount: 5 }) })).toBe(true);
  });
});

describe('subscriptions', () => {
  it('splits running, queued (starting later) and the rest, and names each state', () => {
    const now = 5000;
    const running = { subscription: sub({ id: 1 }) };
    const queued = { subscription: sub({ id: 2, start_time: 9000, end_time: 12000 }) };
    const expired = { subscription: sub({ id: 3, end_time: 4000 }) };
    const cancelled = { subscription: sub({ id: 4, status: 'cancelled', end_time: 4500 }) };
    const split = splitSubscriptions([queued, running, expired, cancelled], now);
    expect(split.running).toEqual([running]);
    expect(split.queued).toEqual([queued]);
    expect(split.history).toEqual([expired, cancelled]);
    expect([running, queued, expired, cancelled].map((s) => subscriptionState(s.subscription, now))).toEqual([
      'active',
      'queued',
      'expired',
      'cancelled',
    ]);
  });

  it('tells when a plan bought again starts: after the latest running or queued one of the same plan', () => {
    const now = 5000;
    const all = [
      { subscription: sub({ id: 1, plan_id: 1, end_time: 9000 }) },
      { subscription: sub({ id: 2, plan_id: 1, start_time: 9000, end_time: 12000 }) },
      { subscription: sub({ id: 3, plan_id: 2, end_time: 20000 }) },
      { subscription: sub({ id: 4, plan_id: 3, status: 'cancelled', end_time: 20000 }) },
      { subscription: sub({ id: 5, plan_id: 4, end_time: 4000 }) },
    ];
    expect(queuedStart(all, 1, now)).toBe(12000);
    expect(queuedStart(all, 2, now)).toBe(20000);
    expect(queuedStart(all, 3, now)).toBeNull();
    expect(queuedStart(all, 4, now)).toBeNull();
    expect(queuedStart(all, 9, now)).toBeNull();
  });

  it("costs the price in quota rounded up, as the server's balance purchase", () => {
    expect(balanceCost(10, 500000)).toBe(5_000_000);
    expect(balanceCost(0.000001, 500000)).toBe(1);
    expect(balanceCost(0, 500000)).toBe(0);
  });
});

describe('the plan form', () => {
  const form = (over: Partial<PlanFormValues>): PlanFormValues => ({ ...defaultPlanForm(), title: 'Pro', ...over });

  it("sends new-api's fields and our windows; a rolling length without an amount is no window", () => {
    const check = checkPlanForm(
      form({
        title: '  Pro  ',
        price_amount: 9.9,
        daily_amount: 500000,
        rolling_seconds: 3600,
        models: [' gpt-4o ', 'gpt-4o', ''],
        groups: ['vip'],
        upgrade_group: 'vip',
        max_purchase_per_user: 2,
      }),
    );
    expect(check).toEqual({
      ok: true,
      payload: {
        plan: {
          title: 'Pro',
          subtitle: '',
          price_amount: 9.9,
          currency: 'USD',
          duration_unit: 'month',
          duration_value: 1,
          custom_seconds: 0,
          enabled: true,
          sort_order: 0,
          stripe_price_id: '',
          creem_product_id: '',
          max_purchase_per_user: 2,
          upgrade_group: 'vip',
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
          models: ['gpt-4o'],
          groups: ['vip'],
        },
      },
    });
  });

  it('refuses what the server would', () => {
    expect(checkPlanForm(form({ title: '  ' }))).toEqual({ ok: false, error: 'err.title' });
    expect(checkPlanForm(form({ price_amount: -1 }))).toEqual({ ok: false, error: 'err.price' });
    expect(checkPlanForm(form({ price_amount: 10000 }))).toEqual({ ok: false, error: 'err.price' });
    expect(checkPlanForm(form({ duration_value: 0 }))).toEqual({ ok: false, error: 'err.duration' });
    expect(checkPlanForm(form({ duration_unit: 'custom', custom_seconds: 0 }))).toEqual({
      ok: false,
      error: 'err.customSeconds',
    });
    expect(checkPlanForm(form({ quota_reset_period: 'custom' }))).toEqual({ ok: false, error: 'err.resetSeconds' });
    expect(checkPlanForm(form({ daily_amount: -1 }))).toEqual({ ok: false, error: 'err.negative' });
    expect(checkPlanForm(form({ rolling_amount: 100 }))).toEqual({ ok: false, error: 'err.rollingSeconds' });
  });

  it('reads a listed plan back into the form unchanged', () => {
    const view: PlanView = {
      plan: plan({ id: 7, title: 'Team', duration_unit: 'custom', duration_value: 0, custom_seconds: 7200 }),
      limits: {
        rolling_seconds: 3600,
        rolling_amount: 10,
        daily_amount: 0,
        weekly_amount: 20,
        monthly_amount: 0,
        models: ['m'],
        groups: [],
      },
    };
    const check = checkPlanForm(planToForm(view));
    expect(check.ok && check.payload.plan).toMatchObject({
      title: 'Team',
      duration_unit: 'custom',
      custom_seconds: 7200,
    });
    expect(check.ok && check.payload.limits).toEqual(view.limits);
  });
});
