// One-time codes for email verification (purpose `v`) and password reset (purpose `r`), valid 10 minutes
// (new-api-compat.md §9.5). new-api keeps them in process memory, which breaks behind a load balancer; here they are
// short-lived entries every node sees (Redis, else the database).
import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../context.js';
import type { LineLog } from '../lib/request-log.js';
import { getShortLived, putShortLived, takeShortLivedIf } from './short-lived.js';

export const PURPOSE_EMAIL_VERIFICATION = 'v';
export const PURPOSE_PASSWORD_RESET = 'r';
export const VERIFICATION_VALID_SEC = 10 * 60;

const storeKey = (email: string, purpose: string) => `verification:${purpose}:${email}`;

/** Code = the first `length` chars of a dashless UUID (6 for email codes, 32 for reset tokens). */
export function newVerificationCode(length: number): string {
  return randomUUID().replace(/-/g, '').slice(0, length);
}

export async function registerVerificationCode(
  ctx: AppContext,
  email: string,
  code: string,
  purpose: string,
): Promise<void> {
  await putShortLived(ctx, storeKey(email, purpose), code, VERIFICATION_VALID_SEC);
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export async function verifyCode(ctx: AppContext, email: string, code: string, purpose: string): Promise<boolean> {
  if (!email || !code) return false;
  const stored = await getShortLived(ctx, storeKey(email, purpose));
  return stored !== null && sameText(stored, code);
}

/**
 * Checks the code and uses it up in one step: of requests racing with the same right code, exactly one gets true
 * (a check followed by a separate delete let them all through). A wrong code leaves the code in place.
 */
export async function spendCode(ctx: AppContext, email: string, code: string, purpose: string): Promise<boolean> {
  if (!email || !code) return false;
  return takeShortLivedIf(ctx, storeKey(email, purpose), (stored) => sameText(stored, code));
}

const TURNSTILE_VERIFY_URL = 'https://challenges.cloudflare.com/turnstile/v0/siteverify';

/**
 * Cloudflare Turnstile check (new-api-compat.md §9.6) for login, register, verification and reset when
 * TurnstileCheckEnabled. Returns an error message, or null when the token passes. The routes reach it through
 * api/human-check.ts, which remembers a pass for the rest of the browser's session as new-api does.
 */
export async function checkTurnstile(
  ctx: AppContext,
  token: string | undefined,
  remoteIp: string,
  log: LineLog,
): Promise<string | null> {
  if (!ctx.options.bool('TurnstileCheckEnabled')) return null;
  if (!token) return 'Turnstile token 为空';
  try {
    const res = await fetch(ctx.turnstileVerifyUrl ?? TURNSTILE_VERIFY_URL, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ secret: ctx.options.get('TurnstileSecretKey'), response: token, remoteip: remoteIp }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await res.json()) as { success?: boolean };
    return body.success ? null : 'Turnstile 校验失败，请刷新重试！';
  } catch (err) {
    log.warn({ err }, 'turnstile verification failed');
    return 'Turnstile 校验失败，请刷新重试！';
  }
}
