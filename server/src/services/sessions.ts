// Console login sessions kept on the server, so that they can be ended: logout ends one, a password change, ban,
// deletion or role change ends all of a user's. The signed cookie carries a random id; the `sessions` table keeps only
// its SHA-256, so neither a database dump nor a log line can be replayed as a cookie. Every node reads the shared
// table, so a session ended on one node is ended on all of them at once, with no cache to invalidate.
import { createHash, randomBytes } from 'node:crypto';
import type { AppContext } from '../context.js';
import type { User } from '../db/schema.js';
import { nowSec } from '../lib/time.js';

export const SESSION_TTL_SEC = 30 * 24 * 3600;

/** 32 random bytes, base64url: the form a session id always has (anything else is refused without a query). */
const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;

export function isSessionId(value: string): boolean {
  return SESSION_ID.test(value);
}

function hashOf(sessionId: string): string {
  return createHash('sha256').update(sessionId).digest('hex');
}

/** Starts a session for the user and returns its id (for the cookie). Sessions past their end are cleared first. */
export async function createSession(ctx: AppContext, userId: number): Promise<string> {
  const now = nowSec();
  await purgeExpiredSessions(ctx, now);
  const id = randomBytes(32).toString('base64url');
  await ctx.db
    .insertInto('sessions')
    .values({ id_hash: hashOf(id), user_id: userId, created_at: now, expires_at: now + SESSION_TTL_SEC })
    .execute();
  return id;
}

/**
 * The (not deleted) user of a live session, read in the same query as the session itself: one primary-key lookup per
 * console call, and the role and status are always the user's current ones.
 */
export async function sessionUser(ctx: AppContext, sessionId: string): Promise<User | undefined> {
  if (!isSessionId(sessionId)) return undefined;
  return ctx.db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .selectAll('users')
    .where('sessions.id_hash', '=', hashOf(sessionId))
    .where('sessions.expires_at', '>', nowSec())
    .where('users.deleted_at', 'is', null)
    .executeTakeFirst();
}

/** Logout: ends this one session. */
export async function endSession(ctx: AppContext, sessionId: string): Promise<void> {
  if (!isSessionId(sessionId)) return;
  await ctx.db.deleteFrom('sessions').where('id_hash', '=', hashOf(sessionId)).execute();
}

/** Ends every session of the user (password change, ban, deletion, role change). */
export async function endUserSessions(ctx: AppContext, userId: number): Promise<void> {
  await ctx.db.deleteFrom('sessions').where('user_id', '=', userId).execute();
}

export async function purgeExpiredSessions(ctx: AppContext, now = nowSec()): Promise<void> {
  await ctx.db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
}
