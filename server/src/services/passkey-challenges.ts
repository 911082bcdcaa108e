// WebAuthn challenges between a ceremony's begin and its finish (new-api-compat.md §9.8). new-api keeps them in its
// cookie session; here they are short-lived entries every node sees (services/short-lived.ts) for a few minutes, under a random handle that only the browser's signed cookie
// carries, and each is taken once: a replayed finish, or one from a browser that did not begin, finds nothing.
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../context.js';
import { putShortLived, takeShortLived } from './short-lived.js';

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
const storeKey = (handle: string) => `passkey_challenge:${handle}`;

/** Remembers a challenge; returns the handle for the browser's cookie. */
export async function saveChallenge(ctx: AppContext, stored: StoredChallenge): Promise<string> {
  const handle = randomBytes(24).toString('base64url');
  await putShortLived(ctx, storeKey(handle), JSON.stringify(stored), PASSKEY_CHALLENGE_VALID_SEC);
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
 * Either way the handle is spent. Two finishes racing with one handle cannot both pass: taking the entry decides.
 */
export async function takeChallenge(
  ctx: AppContext,
  handle: string,
  purpose: ChallengePurpose,
): Promise<StoredChallenge | null> {
  if (!HANDLE_FORM.test(handle)) return null;
  const raw = await takeShortLived(ctx, storeKey(handle));
  const found = raw === null ? null : parseStored(raw);
  return found && found.purpose === purpose ? found : null;
}
