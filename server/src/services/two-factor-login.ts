// Password logins waiting for their second step (new-api-compat.md §9.7). The password step leaves a random id in the
// browser's signed cookie; the login it stands for is a short-lived entry every node sees (services/short-lived.ts),
// kept under the id's SHA-256 for five minutes and used up by the code step that completes it, so neither a second
// node nor a second browser nor a second try can reuse it.
import { createHash, randomBytes } from 'node:crypto';
import type { AppContext } from '../context.js';
import { getShortLived, putShortLived, takeShortLived } from './short-lived.js';

export const PENDING_LOGIN_VALID_SEC = 5 * 60;

/** 32 random bytes, base64url */
const LOGIN_ID = /^[A-Za-z0-9_-]{43}$/;

const storeKey = (id: string) => `twofa_login:${createHash('sha256').update(id).digest('hex')}`;

/** Records a login that passed its password step; returns the id for the browser's cookie. */
export async function createPendingLogin(ctx: AppContext, userId: number): Promise<string> {
  const id = randomBytes(32).toString('base64url');
  await putShortLived(ctx, storeKey(id), String(userId), PENDING_LOGIN_VALID_SEC);
  return id;
}

/** The user of a live pending login, without using it up (a wrong code may be corrected). */
export async function pendingLoginUser(ctx: AppContext, id: string): Promise<number | null> {
  if (!LOGIN_ID.test(id)) return null;
  const raw = await getShortLived(ctx, storeKey(id));
  const userId = Number(raw);
  return raw && Number.isSafeInteger(userId) ? userId : null;
}

/** Uses the pending login up; true for exactly one caller, however many race for it. */
export async function consumePendingLogin(ctx: AppContext, id: string): Promise<boolean> {
  if (!LOGIN_ID.test(id)) return false;
  return (await takeShortLived(ctx, storeKey(id))) !== null;
}
