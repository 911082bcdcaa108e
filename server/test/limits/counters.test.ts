// The in-memory counters of the usage limits: check-and-count, windows that end, and a map that stays bounded.
import { describe, expect, it } from 'vitest';
import { MemoryCounters } from '../../src/services/limits/counters.js';
import { periodAt } from '../../src/services/limits/periods.js';
import { parseSettingsInput, resolveRules } from '../../src/services/limits/settings.js';

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
    c.adjust('k', -480); // settled: 20 tokens used, not 500
    expect(c.admit([{ key: 'k', limit: 100, add: 80, ttlMs: 60_000 }])).toBeNull();
    expect(c.admit([{ key: 'k', limit: 100, add: 1, ttlMs: 60_000 }])).toEqual({ index: 0, retryMs: 60_000 });
    c.adjust('gone', 5); // a correction never creates a window
    expect(c.read(['gone'])).toEqual([0]);
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

  it('token over user over group, field by field; the counter is the token’s or the user’s', () => {
    const rules = resolveRules(7, 3, { rpm: 5 }, { tpm: 100 }, { rpm: 1, budget: 50, period: 'daily' });
    expect(rules).toEqual({
      rpm: { limit: 5, scope: 'token', id: 7 },
      tpm: { limit: 100, scope: 'user', id: 3 },
      budget: { limit: 50, scope: 'user', id: 3, period: 'daily' },
    });
    expect(resolveRules(7, 3, undefined, undefined, undefined)).toBeNull();
  });

  it('parses console input and refuses bad values', () => {
    expect(parseSettingsInput({ rpm: '10', tpm: 0, budget: 500 })).toEqual({ rpm: 10, budget: 500, period: 'monthly' });
    expect(() => parseSettingsInput({ rpm: -1 })).toThrow(/rpm/);
    expect(() => parseSettingsInput({ tpm: 1.5 })).toThrow(/tpm/);
    expect(() => parseSettingsInput({ budget: 5, period: 'yearly' })).toThrow(/period/);
  });
});
