// Step 1, authenticate: the caller. Every way in authenticated the token from the request's head before reading the
// body (relay/admit.ts) and handed the caller over; the playground's caller is the console session's user.
import { RelayError } from '../errors.js';
import type { RelayState } from './state.js';

export async function authenticate(s: RelayState): Promise<void> {
  if (s.req.caller) s.caller = s.req.caller;
  else {
    const user = await s.svc.users.get(s.req.sessionUserId);
    if (!user) throw new RelayError(500, 'record not found');
    s.caller = { user, token: null, channelId: null };
  }
  s.quotaBefore = s.caller.user.quota;
}
