// The JWT each Zhipu v3 request carries in `Authorization` (no Bearer), signed with jose from the key `id.secret`:
// HS256 over the secret, header `{alg: HS256, sign_type: SIGN}`, claims `api_key` (the id), `exp` and `timestamp` in
// milliseconds (Zhipu's own convention, not RFC 7519's seconds). It is made here, not fetched, but kept like an
// exchanged token (relay/credential-cache.ts) so one is signed per key an hour rather than per request, and a new one
// is made after Zhipu refuses it.
import { SignJWT } from 'jose';
import type { ExchangedCredential, ExchangedToken } from '../types.js';
import { splitZhipuKey } from './channel.js';

/** How long a signed token is good for (new-api signs for 24 h; a shorter life bounds a leaked token's use). */
export const ZHIPU_TOKEN_LIFETIME_MS = 3600_000;

export async function signZhipuToken(key: string, now = Date.now()): Promise<ExchangedToken> {
  const parts = splitZhipuKey(key);
  if (!parts) throw new Error('Zhipu key must be "id.secret"');
  const token = await new SignJWT({ api_key: parts.id, exp: now + ZHIPU_TOKEN_LIFETIME_MS, timestamp: now })
    .setProtectedHeader({ alg: 'HS256', sign_type: 'SIGN' })
    .sign(new TextEncoder().encode(parts.secret));
  return { token, lifetimeMs: ZHIPU_TOKEN_LIFETIME_MS };
}

export const zhipuV3Credential: ExchangedCredential = {
  kind: 'exchanged',
  id: 'zhipuv3',
  exchange: (key) => signZhipuToken(key),
};
