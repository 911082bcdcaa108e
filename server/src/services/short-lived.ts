// Short-lived values every node of a deployment must see (codes mailed to a user, challenges of a sign-in in
// progress): in Redis when it is configured, else in the `short_lived_entries` table. Never in one process's
// memory, which breaks as soon as a load balancer sends the next request to another node (new-api's email codes do).
import { createHash } from 'node:crypto';
import type { AppContext } from '../context.js';
import { nowSec } from '../lib/time.js';

const redisKey = (ctx: AppContext, key: string) => `${ctx.redisPrefix}short:${key}`;
const hashOf = (key: string) => createHash('sha256').update(key).digest('hex');

/** Stores `value` under `key` for `ttlSec` seconds, replacing what was there. */
export async function putShortLived(ctx: AppContext, key: string, value: string, ttlSec: number): Promise<void> {
  if (ctx.redis) {
    await ctx.redis.set(redisKey(ctx, key), value, 'EX', ttlSec);
    return;
  }
  const now = nowSec();
  const keyHash = hashOf(key);
  await ctx.db.deleteFrom('short_lived_entries').where('expires_at', '<=', now).execute();
  await ctx.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('short_lived_entries').where('key_hash', '=', keyHash).execute();
    await trx
      .insertInto('short_lived_entries')
      .values({ key_hash: keyHash, value, expires_at: now + ttlSec })
      .execute();
  });
}

/** The live value under `key`, or null. */
export async function getShortLived(ctx: AppContext, key: string): Promise<string | null> {
  if (ctx.redis) return ctx.redis.get(redisKey(ctx, key));
  const row = await ctx.db
    .selectFrom('short_lived_entries')
    .select('value')
    .where('key_hash', '=', hashOf(key))
    .where('expires_at', '>', nowSec())
    .executeTakeFirst();
  return row?.value ?? null;
}

/**
 * Takes the live value under `key` out: of two callers racing for the same key, only one gets it (Redis's GET+DEL
 * transaction, or the row delete that affected a row).
 */
export async function takeShortLived(ctx: AppContext, key: string): Promise<string | null> {
  if (ctx.redis) {
    const results = await ctx.redis.multi().get(redisKey(ctx, key)).del(redisKey(ctx, key)).exec();
    const raw = results?.[0]?.[1];
    return typeof raw === 'string' ? raw : null;
  }
  const keyHash = hashOf(key);
  const row = await ctx.db
    .selectFrom('short_lived_entries')
    .select(['value', 'expires_at'])
    .where('key_hash', '=', keyHash)
    .executeTakeFirst();
  if (!row) return null;
  const res = await ctx.db.deleteFrom('short_lived_entries').where('key_hash', '=', keyHash).executeTakeFirst();
  if (Number(res.numDeletedRows) !== 1 || Number(row.expires_at) <= nowSec()) return null;
  return row.value;
}

/** Deletes KEYS[1] only while it still holds ARGV[1]: 1 when it did. */
const DELETE_IF_EQUAL =
  "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/**
 * Takes the live value under `key` out if `accepts` it (a code compared in constant time by the caller): of callers
 * racing with the same accepted value, exactly one gets true; a refused value leaves the entry in place. The
 * removal is conditional on the value read, so a value replaced meanwhile (a new code mailed) is not taken.
 */
export async function takeShortLivedIf(
  ctx: AppContext,
  key: string,
  accepts: (value: string) => boolean,
): Promise<boolean> {
  const value = await getShortLived(ctx, key);
  if (value === null || !accepts(value)) return false;
  if (ctx.redis) return Number(await ctx.redis.eval(DELETE_IF_EQUAL, 1, redisKey(ctx, key), value)) === 1;
  const res = await ctx.db
    .deleteFrom('short_lived_entries')
    .where('key_hash', '=', hashOf(key))
    .where('value', '=', value)
    .where('expires_at', '>', nowSec())
    .executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}

export async function deleteShortLived(ctx: AppContext, key: string): Promise<void> {
  if (ctx.redis) await ctx.redis.del(redisKey(ctx, key));
  else await ctx.db.deleteFrom('short_lived_entries').where('key_hash', '=', hashOf(key)).execute();
}
