// new-api's daily check-in (GET and POST /api/user/checkin): a user who checks in is credited a reward drawn from
// the options' [min_quota, max_quota], once per day of the site's calendar (option UsageLimitTimeZone, as the usage
// limits' days). The row and the credit are one transaction, and the unique (user_id, checkin_date) index decides
// between concurrent check-ins on any number of instances: the second insert fails and nothing is credited (new-api
// asks "already checked in?" first and, on SQLite, credits outside any transaction).
import { randomInt } from 'node:crypto';
import type { AppContext } from '../context.js';
import { isUniqueViolation } from '../db/errors.js';
import { nowSec } from '../lib/time.js';
import { offsetAt, zoneOrLocal } from './limits/periods.js';
import { LOG_TYPE_SYSTEM, logQuota, recordUserLog } from './user-logs.js';
import { creditLiveUser, UserFacingError } from './users.js';

export const CHECKIN_DISABLED = '签到功能未启用';
export const CHECKIN_ALREADY = '今日已签到';
const MONTH_RE = /^\d{4}-(0[1-9]|1[0-2])$/;

export interface CheckinSettings {
  enabled: boolean;
  min: number;
  max: number;
}

/** The options' settings; an inverted range (min saved above max, one field at a time) is read in order, as new-api. */
export function checkinSettings(ctx: AppContext): CheckinSettings {
  const int = (key: string) => Math.max(0, Math.trunc(Number(ctx.options.get(key))) || 0);
  const a = int('checkin_setting.min_quota');
  const b = int('checkin_setting.max_quota');
  return { enabled: ctx.options.bool('checkin_setting.enabled'), min: Math.min(a, b), max: Math.max(a, b) };
}

/** The site calendar's date (YYYY-MM-DD) at `ms`. */
export function siteDate(ctx: AppContext, ms: number): string {
  const zone = zoneOrLocal(ctx.options.get('UsageLimitTimeZone'));
  return new Date(ms + offsetAt(ms, zone)).toISOString().slice(0, 10);
}

function enabledSettings(ctx: AppContext): CheckinSettings {
  const s = checkinSettings(ctx);
  if (!s.enabled) throw new UserFacingError(CHECKIN_DISABLED);
  return s;
}

export interface CheckinResult {
  quota_awarded: number;
  checkin_date: string;
}

/** Checks the user in for today: the reward credited with the day's row, or UserFacingError when already done. */
export async function checkIn(ctx: AppContext, userId: number, nowMs = Date.now()): Promise<CheckinResult> {
  const s = enabledSettings(ctx);
  const date = siteDate(ctx, nowMs);
  const quota = s.max > s.min ? randomInt(s.min, s.max + 1) : s.min;
  try {
    await ctx.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('checkins')
        .values({ user_id: userId, checkin_date: date, quota_awarded: quota, created_at: nowSec() })
        .execute();
      if (!(await creditLiveUser(trx, userId, quota))) throw new UserFacingError('用户不存在');
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw new UserFacingError(CHECKIN_ALREADY);
    throw err;
  }
  ctx.changes.publish({ kind: 'user', id: userId });
  await recordUserLog(ctx, userId, LOG_TYPE_SYSTEM, `用户签到，获得额度 ${logQuota(ctx, quota)}`);
  return { quota_awarded: quota, checkin_date: date };
}

/** new-api's status answer: the settings, this month's rows, the totals and whether today is done. */
export async function checkinStatus(ctx: AppContext, userId: number, rawMonth: unknown, nowMs = Date.now()) {
  const s = enabledSettings(ctx);
  const today = siteDate(ctx, nowMs);
  const month = typeof rawMonth === 'string' && rawMonth !== '' ? rawMonth : today.slice(0, 7);
  if (!MONTH_RE.test(month)) throw new UserFacingError('月份格式应为 YYYY-MM');
  const records = await ctx.db
    .selectFrom('checkins')
    .select(['checkin_date', 'quota_awarded'])
    .where('user_id', '=', userId)
    .where('checkin_date', '>=', `${month}-01`)
    .where('checkin_date', '<=', `${month}-31`)
    .orderBy('checkin_date', 'desc')
    .execute();
  const totals = await ctx.db
    .selectFrom('checkins')
    .select((eb) => [eb.fn.countAll().as('n'), eb.fn.sum('quota_awarded').as('q')])
    .where('user_id', '=', userId)
    .executeTakeFirst();
  const done = await ctx.db
    .selectFrom('checkins')
    .select('id')
    .where('user_id', '=', userId)
    .where('checkin_date', '=', today)
    .executeTakeFirst();
  return {
    enabled: s.enabled,
    min_quota: s.min,
    max_quota: s.max,
    stats: {
      total_quota: Number(totals?.q ?? 0),
      total_checkins: Number(totals?.n ?? 0),
      checkin_count: records.length,
      checked_in_today: done !== undefined,
      records: records.map((r) => ({ checkin_date: r.checkin_date, quota_awarded: Number(r.quota_awarded) })),
    },
  };
}
