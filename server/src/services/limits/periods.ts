// Calendar periods in the server's local time zone (the TZ environment variable; the site has no time zone option):
// a budget's day starts at local midnight, its week on Monday, its month on the 1st.
import type { Period } from './settings.js';

export interface Span {
  start: number;
  end: number;
}

/** The period that contains `now` (ms). */
export function periodAt(period: Period, now: number): Span {
  const d = new Date(now);
  const y = d.getFullYear();
  const m = d.getMonth();
  const day = d.getDate();
  if (period === 'daily') return { start: new Date(y, m, day).getTime(), end: new Date(y, m, day + 1).getTime() };
  if (period === 'weekly') {
    const back = (d.getDay() + 6) % 7; // days since Monday
    return { start: new Date(y, m, day - back).getTime(), end: new Date(y, m, day - back + 7).getTime() };
  }
  return { start: new Date(y, m, 1).getTime(), end: new Date(y, m + 1, 1).getTime() };
}
