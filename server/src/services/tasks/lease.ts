// The poller's lease: one instance of a deployment polls at a time. In Redis when it is configured (SET NX PX, kept by
// its holder with a compare-and-renew script), else a row of short_lived_entries taken with a compare-and-set on its
// holder and expiry. The master flag alone is not enough: two processes may both believe they are the master (a
// rolling restart, a copied configuration). A holder that dies loses the lease when it expires; the next tick of
// another instance takes it.
import { createHash, randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.js';

/** how long a lease lasts without renewal: three ticks, so one slow tick does not hand it over */
export const TASK_LEASE_SEC = 45;
const LEASE_KEY = 'task-poller-lease';
const keyHash = createHash('sha256').update(LEASE_KEY).digest('hex');

const RENEW = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end`;

/** This process's name as a lease holder (one per context: two contexts of one test process are two instances). */
export function newLeaseHolder(): string {
  return `${process.pid}-${randomBytes(8).toString('hex')}`;
}

/** Takes or renews the lease for `holder` at `now` (seconds); whether it holds it now. */
export async function acquireTaskLease(ctx: AppContext, holder: string, now: number): Promise<boolean> {
  if (ctx.redis) {
    const key = `${ctx.redisPrefix}task-poller-lease`;
    const ms = TASK_LEASE_SEC * 1000;
    if ((await ctx.redis.set(key, holder, 'PX', ms, 'NX')) === 'OK') return true;
    return Number(await ctx.redis.eval(RENEW, 1, key, holder, String(ms))) === 1;
  }
  const expires = now + TASK_LEASE_SEC;
  // ours already, or expired: renewed or taken in one conditional update
  const updated = await ctx.db
    .updateTable('short_lived_entries')
    .set({ value: holder, expires_at: expires })
    .where('key_hash', '=', keyHash)
    .where((eb) => eb.or([eb('value', '=', holder), eb('expires_at', '<=', now)]))
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) === 1) return true;
  try {
    // no row yet: the first insert wins, any other fails on the primary key
    await ctx.db
      .insertInto('short_lived_entries')
      .values({ key_hash: keyHash, value: holder, expires_at: expires })
      .execute();
    return true;
  } catch {
    // MySQL counts an update that changed nothing (a renewal within the same second) as no row: read who holds it
    const row = await ctx.db
      .selectFrom('short_lived_entries')
      .select(['value', 'expires_at'])
      .where('key_hash', '=', keyHash)
      .executeTakeFirst();
    return row?.value === holder && Number(row.expires_at) > now;
  }
}

/** Gives the lease up (a stopping instance), so another takes it at its next tick rather than after the expiry. */
export async function releaseTaskLease(ctx: AppContext, holder: string): Promise<void> {
  if (ctx.redis) {
    const key = `${ctx.redisPrefix}task-poller-lease`;
    await ctx.redis.eval(
      `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end`,
      1,
      key,
      holder,
    );
    return;
  }
  await ctx.db.deleteFrom('short_lived_entries').where('key_hash', '=', keyHash).where('value', '=', holder).execute();
}
