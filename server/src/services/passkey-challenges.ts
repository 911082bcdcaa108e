// WebAuthn challenges between a ceremony's begin and its finish (new-api-compat.md §9.8). new-api keeps them in its
// cookie session; here they are kept where every node sees them (Redis when configured, else the
// `passkey_challenges` table) for a few minutes, under a random handle that only the browser's signed cookie
// carries, and each is taken once: a replayed finish, or one from a browser that did not begin, finds nothing.
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../context.js';
import { nowSec } from '../lib/time.js';

export const PASSKEY_CHALLENGE_VALID_SEC = 5 * 60;
export type ChallengePurpose = 'register' | 'login';

export interface StoredChallenge {
  purpose: ChallengePurpose;
  /** the registering user; 0 for a login */
  userId: number;
  /** base64url, as sent in the options */
  challenge: string;
}

const HANDLE_FORM = /^[A-Za-z0-9_-]{32}$/;
const redisKey = (ctx: AppContext, handle: string) => `${ctx.redisPrefix}passkey_challenge:${handle}`;

/** Remembers a challenge; returns the handle for the browser's cookie. */
export async function saveChallenge(ctx: AppContext, stored: StoredChallenge): Promise<string> {
  const handle = randomBytes(24).toString('base64url');
  if (ctx.redis) {
    await ctx.redis.set(redisKey(ctx, handle), JSON.stringify(stored), 'EX', PASSKEY_CHALLENGE_VALID_SEC);
    return handle;
  }
  const now = nowSec();
  await ctx.db.deleteFrom('passkey_challenges').where('expires_at', '<=', now).execute();
  await ctx.db
    .insertInto('passkey_challenges')
    .values({
      handle,
      purpose: stored.purpose,
      user_id: stored.userId,
      challenge: stored.challenge,
      expires_at: now + PASSKEY_CHALLENGE_VALID_SEC,
    })
    .execute();
  return handle;
}

function parseStored(raw: string): StoredChallenge | null {
  try {
    const v = JSON.parse(raw) as Partial<StoredChallenge>;
    if ((v.purpose !== 'register' && v.purpose !== 'login') || typeof v.challenge !== 'string') return null;
    return { purpose: v.purpose, userId: Number(v.userId) || 0, challenge: v.challenge };
  } catch {
    return null;
  }
}

/**
 * Uses up the challenge behind a handle: it, when it exists, has not expired and was issued for `purpose`; else null.
 * Either way the handle is spent. Two finishes racing with one handle cannot both pass: the delete decides.
 */
export async function takeChallenge(
  ctx: AppContext,
  handle: string,
  purpose: ChallengePurpose,
): Promise<StoredChallenge | null> {
  if (!HANDLE_FORM.test(handle)) return null;
  let found: StoredChallenge | null;
  if (ctx.redis) {
    const results = await ctx.redis.multi().get(redisKey(ctx, handle)).del(redisKey(ctx, handle)).exec();
    const raw = results?.[0]?.[1];
    found = typeof raw === 'string' ? parseStored(raw) : null;
  } else {
    const row = await ctx.db
      .selectFrom('passkey_challenges')
      .selectAll()
      .where('handle', '=', handle)
      .executeTakeFirst();
    if (!row) return null;
    const res = await ctx.db.deleteFrom('passkey_challenges').where('handle', '=', handle).executeTakeFirst();
    if (Number(res.numDeletedRows) !== 1 || Number(row.expires_at) <= nowSec()) return null;
    found = parseStored(JSON.stringify({ purpose: row.purpose, userId: row.user_id, challenge: row.challenge }));
  }
  return found && found.purpose === purpose ? found : null;
}
