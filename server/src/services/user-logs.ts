// Account-related rows in `logs` (new-api-compat.md §5.7): system gifts (type 4) and admin quota edits (type 3),
// written to the log database with the same content texts as new-api so existing dashboards and filters keep working.
import type { AppContext } from '../context.js';
import { nowSec } from '../lib/time.js';

export const LOG_TYPE_TOPUP = 1;
export const LOG_TYPE_CONSUME = 2;
export const LOG_TYPE_MANAGE = 3;
export const LOG_TYPE_SYSTEM = 4;

/** new-api's LogQuota: dollars with 6 decimals when currency display is on, else raw quota points. */
export function logQuota(ctx: AppContext, quota: number): string {
  if (ctx.options.bool('DisplayInCurrencyEnabled')) {
    const perUnit = ctx.options.num('QuotaPerUnit', 500000) || 500000;
    return `＄${(quota / perUnit).toFixed(6)} 额度`;
  }
  return `${quota} 点额度`;
}

/**
 * A quota as the site shows amounts, for English texts (the usage limits' refusals): dollars when
 * DisplayInCurrencyEnabled, to two significant digits below $0.10 (the console's rule, web/src/lib/render.ts), else
 * quota units.
 */
export function displayAmount(ctx: AppContext, quota: number): string {
  if (!ctx.options.bool('DisplayInCurrencyEnabled')) return `${quota} quota`;
  const dollars = quota / (ctx.options.num('QuotaPerUnit', 500000) || 500000);
  const digits = !(dollars > 0) || dollars >= 0.1 ? 2 : Math.min(6, Math.ceil(-Math.log10(dollars)) + 1);
  return `$${dollars.toFixed(digits)}`;
}

/** Writes one log row for a user; the username is looked up so the admin log filter finds it. */
export async function recordUserLog(ctx: AppContext, userId: number, type: number, content: string): Promise<void> {
  try {
    const user = await ctx.db.selectFrom('users').select('username').where('id', '=', userId).executeTakeFirst();
    await ctx.logDb
      .insertInto('logs')
      .values({
        user_id: userId,
        username: user?.username ?? '',
        created_at: nowSec(),
        type,
        content,
        is_stream: false,
      })
      .execute();
  } catch (err) {
    // A lost audit line must not undo the account change it describes.
    ctx.log.error({ err, userId, type }, 'failed to record log');
  }
}
