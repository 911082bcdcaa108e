// The plan screens' Intl formatting (lengths such as "3 months", resets such as "in 2 hours") in the console's
// language: the browser's unit and relative-time data cover every language the console ships, so no plural keys.
import { localeTag } from '../../i18n/index.js';
import { renderTime } from '../../lib/render.js';
import { planDuration, resetLabel, secondsAsUnit, type DurationUnit, type Plan } from './logic.js';

/** A count of a unit in words: `3 months`, `3个月`, `3 mois`. */
export function formatLength(value: number, unit: DurationUnit): string {
  try {
    return new Intl.NumberFormat(localeTag(), { style: 'unit', unit, unitDisplay: 'long' }).format(value);
  } catch {
    return `${value} ${unit}`;
  }
}

export const formatSeconds = (seconds: number) => {
  const { value, unit } = secondsAsUnit(seconds);
  return formatLength(value, unit);
};

export const formatPlanDuration = (p: Pick<Plan, 'duration_unit' | 'duration_value' | 'custom_seconds'>) => {
  const { value, unit } = planDuration(p);
  return formatLength(value, unit);
};

/** A reset time as `2026-12-08 00:00:00 (in 5 hours)`; null when the window lasts until the plan ends. */
export function formatReset(resetsAt: number, now: number): string | null {
  const r = resetLabel(resetsAt, now);
  if (r.kind === 'planEnd') return null;
  const rel = new Intl.RelativeTimeFormat(localeTag(), { numeric: 'auto' }).format(r.value, r.unit);
  return `${renderTime(r.at)} (${rel})`;
}
