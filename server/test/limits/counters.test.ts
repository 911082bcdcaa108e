// The in-memory counters of the usage limits: check-and-count, windows that end, and a map that stays bounded.
import { describe, expect, it } from 'vitest';
import { MemoryCounters } from '../../src/services/limits/counters.js';
import { isTimeZone, periodAt, rollingWindowMs } from '../../src/services/limits/periods.js';
import { cleanSettings, parseSettingsInput, resolveRules } from '../../src/services/limits/settings.js';

const HOUR = 3_600_000;
const at = (iso: string) => Date.parse(iso);
/** a span as ISO instants and its length in hours, for readable expectations */
const shown = (s: { start: number; end: number }) => ({
  start: new Date(s.start).toISOString(),
  end: new Date(s.end).toISOString(),
  hours: (s.end - s.start) / HOUR,
});

describe('memory counters', () => {
  it('admits up to the limit, refuses with the time left in the window, and counts nothing when refused', () => {
    let now = 1_000_000;
    const c = new MemoryCounters(() => now);
    const rpm = { key: 'r', limit: 2, add: 1, ttlMs: 60_000 };
    const tpm = { key: 'k', limit: 100, add: 30, ttlMs: 60_000 };
    expect(c.admit([rpm, tpm])).toBeNull();
    now += 10_000;
    expect(c.admit([rpm, tpm])).toBeNull();
    expect(c.admit([rpm, tpm])).toEqual({ index: 0, retryMs: 50_000 });
    expect(c.read(['r', 'k'])).toEqual([2, 60]);
    now += 50_000; // the window started by the first request ends
    expect(c.admit([rpm, tpm])).toBeNull();
    expect(c.read(['r', 'k'])).toEqual([1, 30]);
  });

  it('refuses tokens that would pass the limit, but admits one request alone in an empty window', () => {
    const c = new MemoryCounters(() => 0);
    expect(c.admit([{ key: 'k', limit: 100, add: 500, ttlMs: 60_000 }])).toBeNull();
    expect(c.adjust('k', -480)).toBe(20); // settled: 20 tokens used, not 500; the new value
    expect(c.admit([{ key: 'k', limit: 100, add: 80, ttlMs: 60_000 }])).toBeNull();
    expect(c.admit([{ key: 'k', limit: 100, add: 1, ttlMs: 60_000 }])).toEqual({ index: 0, retryMs: 60_000 });
    expect(c.adjust('k', -500)).toBe(0); // never below zero
    expect(c.adjust('gone', 5)).toBe(0); // a correction never creates a window
    expect(c.read(['gone'])).toEqual([0]);
  });

  it('a counter created by its first add lives its ttl from then, and tells how long it has left', () => {
    let now = 0;
    const c = new MemoryCounters(() => now);
    expect(c.expiresIn('b')).toBe(0);
    c.add('b', 5, 1_000);
    now = 400;
    c.add('b', 5, 1_000); // a later add neither extends nor restarts the window
    expect(c.expiresIn('b')).toBe(600);
    expect(c.read(['b'])).toEqual([10]);
    now = 1_000;
    expect(c.expiresIn('b')).toBe(0);
    expect(c.read(['b'])).toEqual([0]);
  });

  it('stays bounded: expired entries are swept and the oldest go first when full', () => {
    let now = 0;
    const c = new MemoryCounters(() => now, 50);
    for (let i = 0; i < 40; i++) c.add(`old${i}`, 1, 1_000);
    now = 2_000;
    for (let i = 0; i < 500; i++) c.add(`k${i}`, 1, 60_000);
    expect(c.size).toBeLessThanOrEqual(50);
    expect(c.read(['old0', 'k0', 'k499'])).toEqual([0, 0, 1]);
    // entries past their time are dropped on the next sweep even below the bound
    now = 200_000;
    c.add('fresh', 1, 60_000);
    expect(c.size).toBe(1);
  });
});

describe('periods and settings', () => {
  it('calendar periods in local time: a day, a week from Monday, a month from the 1st', () => {
    const wed = new Date(2025, 0, 15, 13, 30).getTime(); // Wednesday 15 January 2025
    expect(periodAt('daily', wed)).toEqual({
      start: new Date(2025, 0, 15).getTime(),
      end: new Date(2025, 0, 16).getTime(),
    });
    expect(periodAt('weekly', wed)).toEqual({
      start: new Date(2025, 0, 13).getTime(),
      end: new Date(2025, 0, 20).getTime(),
    });
    expect(periodAt('monthly', wed)).toEqual({
      start: new Date(2025, 0, 1).getTime(),
      end: new Date(2025, 1, 1).getTime(),
    });
  });

  it('calendar periods in an IANA zone: New York’s 23-hour spring-forward and 25-hour fall-back days', () => {
    const ny = 'America/New_York';
    // Sunday 9 March 2025: 02:00 EST → 03:00 EDT; midnight is still EST (UTC−5), the next one EDT (UTC−4)
    expect(shown(periodAt('daily', at('2025-03-09T15:00:00Z'), ny))).toEqual({
      start: '2025-03-09T05:00:00.000Z',
      end: '2025-03-10T04:00:00.000Z',
      hours: 23,
    });
    // Sunday 2 November 2025: 02:00 EDT → 01:00 EST; 01:30 EST (after the change) is still that day
    for (const now of ['2025-11-02T04:00:00Z', '2025-11-02T06:30:00Z', '2025-11-03T04:59:59Z'])
      expect(shown(periodAt('daily', at(now), ny))).toEqual({
        start: '2025-11-02T04:00:00.000Z',
        end: '2025-11-03T05:00:00.000Z',
        hours: 25,
      });
    // one millisecond before New York's midnight is the day before
    expect(shown(periodAt('daily', at('2025-11-02T03:59:59.999Z'), ny)).start).toBe('2025-11-01T04:00:00.000Z');
    // the week of the spring-forward (Monday 3 March to Monday 10 March) is an hour short, March too
    expect(shown(periodAt('weekly', at('2025-03-09T15:00:00Z'), ny))).toEqual({
      start: '2025-03-03T05:00:00.000Z',
      end: '2025-03-10T04:00:00.000Z',
      hours: 167,
    });
    expect(shown(periodAt('monthly', at('2025-03-31T23:00:00Z'), ny))).toEqual({
      start: '2025-03-01T05:00:00.000Z',
      end: '2025-04-01T04:00:00.000Z',
      hours: 743,
    });
  });

  it('calendar periods in Asia/Shanghai (UTC+8, no daylight saving) and a zone whose midnight is skipped', () => {
    const sh = 'Asia/Shanghai';
    // 17:00 UTC on 9 March is 01:00 on 10 March in Shanghai
    expect(shown(periodAt('daily', at('2025-03-09T17:00:00Z'), sh))).toEqual({
      start: '2025-03-09T16:00:00.000Z',
      end: '2025-03-10T16:00:00.000Z',
      hours: 24,
    });
    // Monday 10 March 2025 in Shanghai; its week starts then
    expect(shown(periodAt('weekly', at('2025-03-09T17:00:00Z'), sh)).start).toBe('2025-03-09T16:00:00.000Z');
    expect(shown(periodAt('monthly', at('2025-02-28T16:30:00Z'), sh))).toEqual({
      start: '2025-02-28T16:00:00.000Z',
      end: '2025-03-31T16:00:00.000Z',
      hours: 31 * 24,
    });
    // Santiago moved its clocks from 00:00 to 01:00 on 12 August 2018: that day starts at the change, 23 hours long
    expect(shown(periodAt('daily', at('2018-08-12T15:00:00Z'), 'America/Santiago'))).toEqual({
      start: '2018-08-12T04:00:00.000Z',
      end: '2018-08-13T03:00:00.000Z',
      hours: 23,
    });
  });

  it('rolling windows: 24 hours, 7 × 24 hours, or to the same local time a month later', () => {
    const t = at('2025-03-08T15:00:00Z');
    expect(rollingWindowMs('daily', t, 'America/New_York')).toBe(24 * HOUR);
    expect(rollingWindowMs('weekly', t, 'America/New_York')).toBe(7 * 24 * HOUR);
    // 10:00 EST on 8 March → 10:00 EDT on 8 April: a month less the hour New York skipped
    expect(new Date(t + rollingWindowMs('monthly', t, 'America/New_York')).toISOString()).toBe(
      '2025-04-08T14:00:00.000Z',
    );
    // 31 January in Shanghai → the last day of February
    const jan31 = at('2025-01-31T02:00:00Z');
    expect(new Date(jan31 + rollingWindowMs('monthly', jan31, 'Asia/Shanghai')).toISOString()).toBe(
      '2025-02-28T02:00:00.000Z',
    );
  });

  it('knows IANA zone names and nothing else', () => {
    for (const z of ['Asia/Shanghai', 'America/New_York', 'Europe/Berlin', 'UTC']) expect(isTimeZone(z)).toBe(true);
    for (const z of ['', 'Mars/Olympus', 'Asia/Shanghai ', 'GMT+25', 'not a zone']) expect(isTimeZone(z)).toBe(false);
  });

  it('token over user over group, field by field; the counter is the token’s or the user’s', () => {
    const rules = resolveRules(7, 3, { rpm: 5 }, { tpm: 100 }, { rpm: 1, budget: 50, period: 'daily' });
    expect(rules).toEqual({
      rpm: { limit: 5, scope: 'token', id: 7 },
      tpm: { limit: 100, scope: 'user', id: 3 },
      budget: { limit: 50, scope: 'user', id: 3, period: 'daily', reset: 'calendar' },
    });
    expect(resolveRules(7, 3, { budget: 9, period: 'weekly', reset: 'rolling' }, undefined, undefined)?.budget).toEqual(
      { limit: 9, scope: 'token', id: 7, period: 'weekly', reset: 'rolling' },
    );
    expect(resolveRules(7, 3, undefined, undefined, undefined)).toBeNull();
  });

  it('parses console input and refuses bad values', () => {
    expect(parseSettingsInput({ rpm: '10', tpm: 0, budget: 500 })).toEqual({ rpm: 10, budget: 500, period: 'monthly' });
    expect(() => parseSettingsInput({ rpm: -1 })).toThrow(/rpm/);
    expect(() => parseSettingsInput({ tpm: 1.5 })).toThrow(/tpm/);
    expect(() => parseSettingsInput({ budget: 5, period: 'yearly' })).toThrow(/period/);
    expect(parseSettingsInput({ budget: 5, period: 'daily', reset: 'rolling' })).toEqual({
      budget: 5,
      period: 'daily',
      reset: 'rolling',
    });
    // calendar is the default and is not stored; without a budget there is nothing to reset
    expect(parseSettingsInput({ budget: 5, reset: 'calendar' })).toEqual({ budget: 5, period: 'monthly' });
    expect(parseSettingsInput({ rpm: 2, reset: 'rolling' })).toEqual({ rpm: 2 });
    expect(() => parseSettingsInput({ budget: 5, reset: 'sliding' })).toThrow('reset must be one of calendar, rolling');
    // stored JSON: an unknown reset counts as calendar
    expect(cleanSettings({ budget: 5, period: 'daily', reset: 'sliding' })).toEqual({ budget: 5, period: 'daily' });
    expect(cleanSettings({ budget: 5, reset: 'rolling' })).toEqual({ budget: 5, period: 'monthly', reset: 'rolling' });
  });
});
