// Periods of the budgets and the channels' daily caps in the site's time zone (option UsageLimitTimeZone, an IANA
// name; empty: the server's local zone, the TZ environment variable). A calendar day starts at local midnight, a week
// on Monday, a month on the 1st; a rolling window starts at a budget's first charge. Computed with Intl (no time
// zone library): a zone's offset at an instant, and from it the instant of a local wall-clock time, so days around a
// daylight-saving change last 23 or 25 hours.
import type { Period } from './settings.js';

export interface Span {
  start: number;
  end: number;
}

const DAY_MS = 86_400_000;

const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(zone: string): Intl.DateTimeFormat {
  let f = formats.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    // bounded: only valid zones get here (isTimeZone on save, zoneOrLocal on read)
    if (formats.size < 64) formats.set(zone, f);
  }
  return f;
}

/** True when Intl knows `name` as a time zone (e.g. Asia/Shanghai, America/New_York, UTC). */
export function isTimeZone(name: string): boolean {
  if (!name || name !== name.trim()) return false;
  try {
    formatOf(name);
    return true;
  } catch {
    return false;
  }
}

/** The zone to compute in: `name` when valid, else '' (the server's local zone; a bad stored value never throws). */
export function zoneOrLocal(name: string): string {
  return name && isTimeZone(name) ? name : '';
}

/** How far the zone's wall clock is ahead of UTC at `t` (ms); '' is the server's local zone. */
export function offsetAt(t: number, zone: string): number {
  if (!zone) return -new Date(t).getTimezoneOffset() * 60_000;
  const p: Record<string, number> = {};
  for (const part of formatOf(zone).formatToParts(new Date(t))) if (part.type !== 'literal') p[part.type] = +part.value;
  const wall = Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second);
  return wall - (t - (((t % 1000) + 1000) % 1000));
}

/** The zone's wall clock at `t`, as a Date whose UTC fields are the local ones. */
const wallAt = (t: number, zone: string) => new Date(t + offsetAt(t, zone));

/**
 * The first instant whose wall clock reads `wall` (a local time written as UTC ms) or later: the later instant of a
 * time skipped by a spring-forward (00:00 skipped: the day starts at the change), the first of a time repeated by a
 * fall-back.
 */
export function instantOf(wall: number, zone: string): number {
  const candidates = new Set([wall - offsetAt(wall - DAY_MS, zone), wall - offsetAt(wall + DAY_MS, zone)]);
  let best = Infinity;
  for (const c of candidates) if (c + offsetAt(c, zone) >= wall && c < best) best = c;
  return best === Infinity ? wall - offsetAt(wall, zone) : best;
}

const midnight = (y: number, m: number, d: number, zone: string) => instantOf(Date.UTC(y, m, d), zone);

/** The calendar period that contains `now` (ms) in `zone` ('' = the server's local zone). */
export function periodAt(period: Period, now: number, zone = ''): Span {
  const w = wallAt(now, zone);
  const y = w.getUTCFullYear();
  const m = w.getUTCMonth();
  const day = w.getUTCDate();
  if (period === 'daily') return { start: midnight(y, m, day, zone), end: midnight(y, m, day + 1, zone) };
  if (period === 'weekly') {
    const back = (w.getUTCDay() + 6) % 7; // days since Monday
    return { start: midnight(y, m, day - back, zone), end: midnight(y, m, day - back + 7, zone) };
  }
  return { start: midnight(y, m, 1, zone), end: midnight(y, m + 1, 1, zone) };
}

/**
 * How long a rolling window that starts at `start` lasts: 24 hours, 7 × 24 hours, or until the same wall-clock time
 * a month later in `zone` (the month's last day when it is shorter: 31 January → 28 or 29 February).
 */
export function rollingWindowMs(period: Period, start: number, zone = ''): number {
  if (period === 'daily') return DAY_MS;
  if (period === 'weekly') return 7 * DAY_MS;
  const w = wallAt(start, zone);
  const y = w.getUTCFullYear();
  const m = w.getUTCMonth();
  const lastDay = new Date(Date.UTC(y, m + 2, 0)).getUTCDate();
  const target = Date.UTC(
    y,
    m + 1,
    Math.min(w.getUTCDate(), lastDay),
    w.getUTCHours(),
    w.getUTCMinutes(),
    w.getUTCSeconds(),
    w.getUTCMilliseconds(),
  );
  return instantOf(target, zone) - start;
}
