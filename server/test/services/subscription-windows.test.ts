// The window maths of subscriptions (services/subscriptions/windows.ts): period ends in the site's zone, aligned
// rolling and custom windows, never past the subscription's end, and the reservation's row update applied in memory.
import { describe, expect, it } from 'vitest';
import {
  applyCharge,
  applyCorrection,
  chargeFor,
  mainFromNewApi,
  newApiNextResetTime,
  normalizeResetPeriod,
  remaining,
  slotEnd,
  windowEnds,
  type SubscriptionWindows,
  type UsageRow,
} from '../../src/services/subscriptions/windows.js';

const s = (iso: string) => Date.parse(iso) / 1000;
const HOUR = 3600;
const DAY = 86_400;

function windows(over: Partial<SubscriptionWindows> = {}): SubscriptionWindows {
  return {
    start: s('2026-01-01T00:00:00Z'),
    end: s('2030-01-01T00:00:00Z'),
    mainReset: 'never',
    mainCustomSeconds: 0,
    rollingSeconds: 0,
    limits: { main: 0, rolling: 0, daily: 100, weekly: 500, monthly: 1000 },
    ...over,
  };
}

const calendarEnds = (now: string, zone: string) => {
  const w = windows();
  const t = s(now);
  return {
    daily: slotEnd('daily', w, t, zone),
    weekly: slotEnd('weekly', w, t, zone),
    monthly: slotEnd('monthly', w, t, zone),
  };
};

describe('calendar windows in the site’s zone', () => {
  it('Asia/Shanghai: next local midnight, next Monday, the 1st', () => {
    // a Tuesday afternoon in Shanghai (UTC+8)
    expect(calendarEnds('2026-03-10T15:30:00+08:00', 'Asia/Shanghai')).toEqual({
      daily: s('2026-03-11T00:00:00+08:00'),
      weekly: s('2026-03-16T00:00:00+08:00'),
      monthly: s('2026-04-01T00:00:00+08:00'),
    });
    // 23:59:59 local is still the day; 00:00 local starts the next one (16:00 UTC the day before)
    expect(slotEnd('daily', windows(), s('2026-03-10T23:59:59+08:00'), 'Asia/Shanghai')).toBe(
      s('2026-03-11T00:00:00+08:00'),
    );
    expect(slotEnd('daily', windows(), s('2026-03-10T16:00:00Z'), 'Asia/Shanghai')).toBe(
      s('2026-03-12T00:00:00+08:00'),
    );
    // Sunday belongs to the week that started on Monday; Monday 00:00 starts a new one
    expect(slotEnd('weekly', windows(), s('2026-03-15T23:00:00+08:00'), 'Asia/Shanghai')).toBe(
      s('2026-03-16T00:00:00+08:00'),
    );
    expect(slotEnd('weekly', windows(), s('2026-03-16T00:00:00+08:00'), 'Asia/Shanghai')).toBe(
      s('2026-03-23T00:00:00+08:00'),
    );
  });

  it('America/New_York on 2026-03-08 (spring forward): the day lasts 23 hours', () => {
    const end = slotEnd('daily', windows(), s('2026-03-08T12:00:00-04:00'), 'America/New_York');
    expect(end).toBe(s('2026-03-09T00:00:00-04:00'));
    const dayBefore = slotEnd('daily', windows(), s('2026-03-07T12:00:00-05:00'), 'America/New_York');
    expect(dayBefore).toBe(s('2026-03-08T00:00:00-05:00'));
    expect(end - dayBefore).toBe(23 * HOUR);
    // the Sunday of the change closes its week at Monday's local midnight, in EDT
    expect(slotEnd('weekly', windows(), s('2026-03-08T01:30:00-05:00'), 'America/New_York')).toBe(end);
  });

  it('America/New_York on 2026-11-01 (fall back): the day lasts 25 hours', () => {
    const end = slotEnd('daily', windows(), s('2026-11-01T01:30:00-05:00'), 'America/New_York');
    expect(end).toBe(s('2026-11-02T00:00:00-05:00'));
    const dayBefore = slotEnd('daily', windows(), s('2026-10-31T12:00:00-04:00'), 'America/New_York');
    expect(dayBefore).toBe(s('2026-11-01T00:00:00-04:00'));
    expect(end - dayBefore).toBe(25 * HOUR);
  });

  it('Europe/London: the wall clock decides, not UTC (BST from 29 March)', () => {
    // 23:30 UTC on 31 March is 00:30 on 1 April in London
    expect(calendarEnds('2026-03-31T23:30:00Z', 'Europe/London')).toEqual({
      daily: s('2026-04-02T00:00:00+01:00'),
      weekly: s('2026-04-06T00:00:00+01:00'),
      monthly: s('2026-05-01T00:00:00+01:00'),
    });
    expect(calendarEnds('2026-03-15T12:00:00Z', 'Europe/London').monthly).toBe(s('2026-04-01T00:00:00+01:00'));
    // in winter London is UTC
    expect(calendarEnds('2026-01-15T12:00:00Z', 'Europe/London').daily).toBe(s('2026-01-16T00:00:00Z'));
  });

  it('a leap day is a day of its own and February ends after it', () => {
    const now = s('2028-02-29T10:00:00+08:00');
    expect(calendarEnds('2028-02-29T10:00:00+08:00', 'Asia/Shanghai')).toEqual({
      daily: s('2028-03-01T00:00:00+08:00'),
      weekly: s('2028-03-06T00:00:00+08:00'),
      monthly: s('2028-03-01T00:00:00+08:00'),
    });
    expect(slotEnd('daily', windows(), now - DAY, 'Asia/Shanghai')).toBe(s('2028-02-29T00:00:00+08:00'));
  });

  it('new-api’s main window follows quota_reset_period on the same calendar', () => {
    const now = s('2026-03-10T15:30:00+08:00');
    const main = (mainReset: SubscriptionWindows['mainReset']) =>
      slotEnd('main', windows({ mainReset }), now, 'Asia/Shanghai');
    expect(main('daily')).toBe(s('2026-03-11T00:00:00+08:00'));
    expect(main('weekly')).toBe(s('2026-03-16T00:00:00+08:00'));
    expect(main('monthly')).toBe(s('2026-04-01T00:00:00+08:00'));
    expect(main('never')).toBe(s('2030-01-01T00:00:00Z'));
  });
});

describe('windows aligned to the subscription’s start', () => {
  const start = s('2026-05-05T10:17:00Z');

  it('rolling: start + k·seconds, whatever the clock’s zone', () => {
    const w = windows({ start, rollingSeconds: 5 * HOUR, limits: { ...windows().limits, rolling: 50 } });
    expect(slotEnd('rolling', w, start, 'Asia/Shanghai')).toBe(start + 5 * HOUR);
    expect(slotEnd('rolling', w, start + 5 * HOUR - 1, 'UTC')).toBe(start + 5 * HOUR);
    expect(slotEnd('rolling', w, start + 5 * HOUR, 'UTC')).toBe(start + 10 * HOUR);
    expect(slotEnd('rolling', w, start + 47 * HOUR, 'America/New_York')).toBe(start + 50 * HOUR);
    // a queued renewal not started yet: its first window
    expect(slotEnd('rolling', w, start - DAY, 'UTC')).toBe(start + 5 * HOUR);
  });

  it('rolling across a leap day counts seconds, not calendar days', () => {
    const w = windows({ start: s('2028-02-28T12:00:00Z'), rollingSeconds: DAY });
    expect(slotEnd('rolling', w, s('2028-02-29T13:00:00Z'), 'UTC')).toBe(s('2028-03-01T12:00:00Z'));
  });

  it('new-api’s custom reset is aligned to the start, not to the last reset (no drift)', () => {
    const w = windows({ start, mainReset: 'custom', mainCustomSeconds: 7 * HOUR });
    expect(slotEnd('main', w, start + 100 * HOUR, 'UTC')).toBe(start + 105 * HOUR);
    // custom without seconds never resets: new-api's calcNextResetTime answers 0
    expect(slotEnd('main', windows({ start, mainReset: 'custom' }), start + HOUR, 'UTC')).toBe(windows().end);
  });
});

describe('no window ends after the subscription', () => {
  it('caps every slot at end_time', () => {
    const start = s('2026-03-10T12:00:00+08:00');
    const end = start + 5 * HOUR; // 17:00 local, before midnight
    const w = windows({
      start,
      end,
      mainReset: 'custom',
      mainCustomSeconds: 4 * HOUR,
      rollingSeconds: 3 * HOUR,
      limits: { main: 10, rolling: 5, daily: 100, weekly: 500, monthly: 1000 },
    });
    expect(windowEnds(w, start + 4 * HOUR, 'Asia/Shanghai')).toEqual({
      main: end,
      rolling: end,
      daily: end,
      weekly: end,
      monthly: end,
    });
    expect(windowEnds(w, start + HOUR, 'Asia/Shanghai')).toEqual({
      main: start + 4 * HOUR,
      rolling: start + 3 * HOUR,
      daily: end,
      weekly: end,
      monthly: end,
    });
  });

  it('tracks main always and the other slots only when they have a limit', () => {
    const w = windows({ limits: { main: 0, rolling: 0, daily: 10, weekly: 0, monthly: 0 } });
    expect(Object.keys(windowEnds(w, s('2026-03-10T00:00:00Z'), 'UTC'))).toEqual(['main', 'daily']);
  });
});

describe('remaining and the reservation’s row update', () => {
  const zone = 'Asia/Shanghai';
  const now = s('2026-03-10T15:30:00+08:00');
  const today = s('2026-03-11T00:00:00+08:00');
  const yesterday = s('2026-03-10T00:00:00+08:00');
  const w = windows({ limits: { main: 1000, rolling: 0, daily: 100, weekly: 0, monthly: 0 } });
  const row = (daily: { used: number; end: number }, main = { used: 0, end: w.end }): UsageRow => ({
    main: { limit: 1000, ...main },
    rolling: { limit: 0, used: 0, end: 0 },
    daily: { limit: 100, ...daily },
    weekly: { limit: 0, used: 0, end: 0 },
    monthly: { limit: 0, used: 0, end: 0 },
  });

  it('counts a stored use only in its own period', () => {
    expect(remaining({ limit: 100, used: 90, end: today }, today)).toBe(10);
    expect(remaining({ limit: 100, used: 90, end: yesterday }, today)).toBe(100);
    expect(remaining({ limit: 100, used: 120, end: today }, today)).toBe(0);
    expect(remaining({ limit: 0, used: 5, end: today }, today)).toBe(Infinity);
  });

  it('charges every tracked window at once, starting a new period from zero', () => {
    const charge = chargeFor(w, now, zone, 30);
    expect(charge).toEqual({
      pre: 30,
      slots: [
        { slot: 'main', end: w.end },
        { slot: 'daily', end: today },
      ],
    });
    const r = applyCharge(row({ used: 95, end: yesterday }, { used: 400, end: w.end }), charge);
    expect(r).toEqual({ ok: true, row: row({ used: 30, end: today }, { used: 430, end: w.end }) });
  });

  it('refuses when any window lacks room, naming it and when it resets; changes nothing', () => {
    const before = row({ used: 80, end: today });
    const r = applyCharge(before, chargeFor(w, now, zone, 21));
    expect(r).toEqual({ ok: false, refused: ['daily'], stale: [], resetsAt: today });
    expect(before.daily.used).toBe(80);
    // exactly the limit fits
    expect(applyCharge(before, chargeFor(w, now, zone, 20)).ok).toBe(true);
    // the total (main) refuses too, and the reset is the latest of the refusing ends
    const full = row({ used: 80, end: today }, { used: 990, end: w.end });
    expect(applyCharge(full, chargeFor(w, now, zone, 21))).toEqual({
      ok: false,
      refused: ['main', 'daily'],
      stale: [],
      resetsAt: w.end,
    });
  });

  it('reports a row already in a later period as stale instead of moving it back', () => {
    const tomorrow = s('2026-03-12T00:00:00+08:00');
    const r = applyCharge(row({ used: 5, end: tomorrow }), chargeFor(w, now, zone, 1));
    expect(r).toMatchObject({ ok: false, refused: [], stale: ['daily'] });
  });

  it('corrects a window only while it is still in the reservation’s period', () => {
    const charge = chargeFor(w, now, zone, 30);
    const reserved = row({ used: 30, end: today }, { used: 30, end: w.end });
    expect(applyCorrection(reserved, charge, -10)).toEqual(row({ used: 20, end: today }, { used: 20, end: w.end }));
    // after the daily reset a refund credits nothing to the new day; the total still gets it
    const nextDay = s('2026-03-12T00:00:00+08:00');
    const afterReset = row({ used: 7, end: nextDay }, { used: 37, end: w.end });
    expect(applyCorrection(afterReset, charge, -30)).toEqual(row({ used: 7, end: nextDay }, { used: 7, end: w.end }));
    // never below zero
    expect(applyCorrection(reserved, charge, -100).daily.used).toBe(0);
  });
});

describe('new-api’s rows', () => {
  const zone = 'UTC';
  const w = windows({ mainReset: 'daily', limits: { main: 1000, rolling: 0, daily: 0, weekly: 0, monthly: 0 } });

  it('takes the main slot from a subscription new-api wrote, dropping a use of a period that ended', () => {
    const now = s('2026-03-10T12:00:00Z');
    const sub = { amount_total: 1000, amount_used: 250, next_reset_time: s('2026-03-11T00:00:00Z'), end_time: w.end };
    expect(mainFromNewApi(sub, w, now, zone)).toEqual({ limit: 1000, used: 250, end: s('2026-03-11T00:00:00Z') });
    const lazy = { ...sub, next_reset_time: s('2026-03-09T00:00:00Z') };
    expect(mainFromNewApi(lazy, w, now, zone)).toMatchObject({ used: 0 });
    const never = { ...sub, next_reset_time: 0 };
    expect(mainFromNewApi(never, windows(), now, zone)).toEqual({ limit: 1000, used: 250, end: w.end });
  });

  it('writes next_reset_time back as new-api does: 0 when it would not reset before the end', () => {
    expect(newApiNextResetTime(s('2026-03-11T00:00:00Z'), w)).toBe(s('2026-03-11T00:00:00Z'));
    expect(newApiNextResetTime(w.end, w)).toBe(0);
    expect(newApiNextResetTime(w.end, windows())).toBe(0);
  });

  it('normalises quota_reset_period like new-api', () => {
    expect(['daily', ' weekly ', 'monthly', 'custom', 'never', '', 'hourly', null].map(normalizeResetPeriod)).toEqual([
      'daily',
      'weekly',
      'monthly',
      'custom',
      'never',
      'never',
      'never',
      'never',
    ]);
  });
});
