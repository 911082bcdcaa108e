// OAuth states (new-api-compat.md §9.4): GET /api/oauth/state issues a random 12-character state, and the callback
// accepts it once, from the browser it was issued to. new-api keeps it in its cookie session; here it is kept where
// every node sees it (a short-lived entry: Redis when configured, else the database), so a callback may reach another node
// than the one that issued the state, and the browser's own cookie carries the same state so that a state issued to
// one browser cannot complete a login in another.
import type { AppContext } from '../../context.js';
import { randomAlnum } from '../../lib/random.js';
import { putShortLived, takeShortLived } from '../short-lived.js';

export const OAUTH_STATE_VALID_SEC = 10 * 60;
export const OAUTH_STATE_COOKIE = 'oauth_state';
const STATE_LENGTH = 12;
const STATE_FORM = /^[A-Za-z0-9]{12}$/;

const storeKey = (state: string) => `oauth_state:${state}`;

/** Invite codes are short alphanumerics; anything else is dropped rather than stored. */
function cleanAff(aff: string | undefined): string {
  const v = (aff ?? '').trim();
  return /^[A-Za-z0-9]{1,32}$/.test(v) ? v : '';
}

/** A new state, remembered with the invite code given with it. */
export async function issueOAuthState(ctx: AppContext, aff?: string): Promise<string> {
  const state = randomAlnum(STATE_LENGTH);
  await putShortLived(ctx, storeKey(state), JSON.stringify({ aff: cleanAff(aff) }), OAUTH_STATE_VALID_SEC);
  return state;
}

/**
 * Uses up a state: its invite code when it was issued and has not expired nor been used, else null. Two callbacks
 * racing with the same state cannot both pass: taking the entry out decides.
 */
export async function consumeOAuthState(ctx: AppContext, state: string): Promise<{ aff: string } | null> {
  if (!STATE_FORM.test(state)) return null;
  const raw = await takeShortLived(ctx, storeKey(state));
  if (raw === null) return null;
  try {
    return { aff: cleanAff((JSON.parse(raw) as { aff?: string }).aff) };
  } catch {
    return { aff: '' };
  }
}
