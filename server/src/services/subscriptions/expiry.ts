// The expiry sweep (docs/decisions/0015-subscription-plans.md): subscriptions past their end_time are marked expired
// and the user's group is given back (grant.ts restoreGroupTx: only when no other running subscription upgrades, and
// to the group from before the first of a chain of upgrades). Nothing on the hot path needs it (a request compares
// end_time itself); it runs as a step of the task poller's tick, so one instance at a time does it (its lease), and
// each user's batch is a conditional update, so two sweeps at once still expire a subscription once.
import type { AppContext } from '../../context.js';
import { lockUserTx, restoreGroupTx } from './grant.js';

/** subscriptions looked at per sweep at most (new-api's ExpireDueSubscriptions takes 200) */
const EXPIRY_BATCH = 200;

export interface ExpiryResult {
  expired: number;
  /** users whose group was given back */
  restored: number;
}

/** Expires what ended at or before `now` (unix seconds; the tests pass their own clock). */
export async function expireDueSubscriptions(ctx: AppContext, now: number): Promise<ExpiryResult> {
  const due = await ctx.db
    .selectFrom('user_subscriptions')
    .select('user_id')
    .where('status', '=', 'active')
    .where('end_time', '>', 0)
    .where('end_time', '<=', now)
    .orderBy('end_time')
    .orderBy('id')
    .limit(EXPIRY_BATCH)
    .execute();
  const result: ExpiryResult = { expired: 0, restored: 0 };
  for (const userId of new Set(due.map((r) => Number(r.user_id)))) {
    const done = await ctx.db.transaction().execute(async (trx) => {
      // the user's lock before any read (grant.ts lockUserTx): a purchase or bind of this user is not missed
      await lockUserTx(trx, userId, 0);
      const ended = await trx
        .selectFrom('user_subscriptions')
        .select(['id', 'upgrade_group', 'prev_user_group', 'end_time'])
        .where('user_id', '=', userId)
        .where('status', '=', 'active')
        .where('end_time', '>', 0)
        .where('end_time', '<=', now)
        .execute();
      if (ended.length === 0) return { expired: 0, restored: '' };
      const r = await trx
        .updateTable('user_subscriptions')
        .set({ status: 'expired', updated_at: now })
        .where(
          'id',
          'in',
          ended.map((s) => s.id),
        )
        .where('status', '=', 'active')
        .executeTakeFirst();
      const expired = Number(r.numUpdatedRows);
      // another sweep got here first: it also gave the group back
      if (expired === 0) return { expired, restored: '' };
      return { expired, restored: await restoreGroupTx(trx, userId, ended, now) };
    });
    result.expired += done.expired;
    if (done.restored) result.restored++;
    if (done.expired) ctx.changes.publish({ kind: 'user', id: userId });
  }
  return result;
}

/** The task poller's step (services/tasks/poller.ts); one function, so registering it again adds nothing. */
export async function subscriptionExpiryStep(ctx: AppContext, now: number): Promise<void> {
  const r = await expireDueSubscriptions(ctx, now);
  if (r.expired) ctx.log.info(r, 'subscriptions: expired');
}
