// Password logins waiting for their second step (new-api-compat.md §9.7). The password step leaves a random id in the
// browser's signed cookie; the login it stands for is kept where every node sees it — Redis when configured, else the
// two_fa_logins table, both holding only the id's SHA-256 — for five minutes, and is used up by the code step that
// completes it, so neither a second node nor a second browser nor a second try can reuse it.
import { createHash, randomBytes } from 'node:crypto';
import type { AppContext } from '../context.js';

export const PENDING_LOGIN_VALID_SEC = 5 * 60;

/** 32 random bytes, base64url */
const LOGIN_ID = /^[A-Za-z0-9_-]{43}$/;

const hashOf = (id: string) => createHash('sha256').update(id).digest('hex');
const redisKey = (ctx: AppContext, id: string) => `${ctx.redisPrefix}twofa_login:${hashOf(id)}`;
const nowSecAt = (ms: number) => Math.floor(ms / 1000);

/** Records a login that passed its password step; returns the id for the browser's cookie. */
export async function createPendingLogin(ctx: AppContext, userId: number, now = Date.now()): Promise<string> {
  const id = randomBytes(32).toString('base64url');
  if (ctx.redis) {
    await ctx.redis.set(redisKey(ctx, id), String(userId), 'EX', PENDING_LOGIN_VALID_SEC);
    return id;
  }
  const sec = nowSecAt(now);
  await ctx.db.deleteFrom('two_fa_logins').where('expires_at', '<=', sec).execute();
  await ctx.db
    .insertInto('two_fa_logins')
    .values({ id_hash: hashOf(id), user_id: userId, expires_at: sec + PENDING_LOGIN_VALID_SEC })
    .execute();
  return id;
}

/** The user of a live pending login, without using it up (a wrong code may be corrected). */
export async function pendingLoginUser(ctx: AppContext, id: string, now = Date.now()): Promise<number | null> {
  if (!LOGIN_ID.test(id)) return null;
  if (ctx.redis) {
    const raw = await ctx.redis.get(redisKey(ctx, id));
    const userId = Number(raw);
    return raw && Number.isSafeInteger(userId) ? userId : null;
  }
  const row = await ctx.db
    .selectFrom('two_fa_logins')
    .select('user_id')
    .where('id_hash', '=', hashOf(id))
    .where('expires_at', '>', nowSecAt(now))
    .executeTakeFirst();
  return row ? Number(row.user_id) : null;
}

/** Uses the pending login up; true for exactly one caller, however many race for it. */
export async function consumePendingLogin(ctx: AppContext, id: string): Promise<boolean> {
  if (!LOGIN_ID.test(id)) return false;
  if (ctx.redis) return (await ctx.redis.del(redisKey(ctx, id))) === 1;
  const res = await ctx.db.deleteFrom('two_fa_logins').where('id_hash', '=', hashOf(id)).executeTakeFirst();
  return Number(res.numDeletedRows) === 1;
}
