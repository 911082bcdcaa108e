// OAuth states (new-api-compat.md §9.4): GET /api/oauth/state issues a random 12-character state, and the callback
// accepts it once, from the browser it was issued to. new-api keeps it in its cookie session; here it is kept where
// every node sees it (Redis when configured, else the `oauth_states` table), so a callback may reach another node
// than the one that issued the state, and the browser's own cookie carries the same state so that a state issued to
// one browser cannot complete a login in another.
import type { AppContext } from '../../context.js';
import { randomAlnum } from '../../lib/random.js';
import { nowSec } from '../../lib/time.js';

export const OAUTH_STATE_VALID_SEC = 10 * 60;
export const OAUTH_STATE_COOKIE = 'oauth_state';
const STATE_LENGTH = 12;
const STATE_FORM = /^[A-Za-z0-9]{12}$/;

const redisKey = (ctx: AppContext, state: string) => `${ctx.redisPrefix}oauth_state:${state}`;

/** Invite codes are short alphanumerics; anything else is dropped rather than stored. */
function cleanAff(aff: string | undefined): string {
  const v = (aff ?? '').trim();
  return /^[A-Za-z0-9]{1,32}$/.test(v) ? v : '';
}

/** A new state, remembered with the invite code given with it. */
export async function issueOAuthState(ctx: AppContext, aff?: string): Promise<string> {
  const state = randomAlnum(STATE_LENGTH);
  const affCode = cleanAff(aff);
  if (ctx.redis) {
    await ctx.redis.set(redisKey(ctx, state), JSON.stringify({ aff: affCode }), 'EX', OAUTH_STATE_VALID_SEC);
    return state;
  }
  const now = nowSec();
  await ctx.db.deleteFrom('oauth_states').where('expires_at', '<=', now).execute();
  await ctx.db
    .insertInto('oauth_states')
    .values({ state, aff_code: affCode, expires_at: now + OAUTH_STATE_VALID_SEC })
    .execute();
  return state;
}

/**
 * Uses up a state: its invite code when it was issued and has not expired nor been used, else null. Two callbacks
 * racing with the same state cannot both pass: the delete (or Redis's GET+DEL transaction) decides.
 */
export async function consumeOAuthState(ctx: AppContext, state: string): Promise<{ aff: string } | null> {
  if (!STATE_FORM.test(state)) return null;
  if (ctx.redis) {
    const results = await ctx.redis.multi().get(redisKey(ctx, state)).del(redisKey(ctx, state)).exec();
    const raw = results?.[0]?.[1];
    if (typeof raw !== 'string') return null;
    try {
      return { aff: cleanAff((JSON.parse(raw) as { aff?: string }).aff) };
    } catch {
      return { aff: '' };
    }
  }
  const row = await ctx.db
    .selectFrom('oauth_states')
    .select(['aff_code', 'expires_at'])
    .where('state', '=', state)
    .executeTakeFirst();
  if (!row) return null;
  const res = await ctx.db.deleteFrom('oauth_states').where('state', '=', state).executeTakeFirst();
  if (Number(res.numDeletedRows) !== 1 || Number(row.expires_at) <= nowSec()) return null;
  return { aff: row.aff_code };
}
