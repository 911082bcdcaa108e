// One-time codes for email verification (purpose `v`) and password reset (purpose `r`), valid 10 minutes
// (new-api-compat.md §9.5). new-api keeps them in process memory, which breaks behind a load balancer; with Redis
// configured they are shared between nodes here.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../context.js';

export const PURPOSE_EMAIL_VERIFICATION = 'v';
export const PURPOSE_PASSWORD_RESET = 'r';
export const VERIFICATION_VALID_SEC = 10 * 60;

interface Entry {
  code: string;
  expiresAt: number;
}

const memoryStores = new WeakMap<AppContext, Map<string, Entry>>();

function memory(ctx: AppContext): Map<string, Entry> {
  let m = memoryStores.get(ctx);
  if (!m) {
    m = new Map();
    memoryStores.set(ctx, m);
  }
  return m;
}

function pruneExpired(store: Map<string, Entry>, now: number): void {
  if (store.size <= 10) return;
  for (const [k, e] of store) if (e.expiresAt <= now) store.delete(k);
}

const redisKey = (ctx: AppContext, key: string) => `${ctx.redisPrefix}verification:${key}`;
const storeKey = (email: string, purpose: string) => `${purpose}:${email}`;

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
  const key = storeKey(email, purpose);
  if (ctx.redis) {
    await ctx.redis.set(redisKey(ctx, key), code, 'EX', VERIFICATION_VALID_SEC);
    return;
  }
  const store = memory(ctx);
  const now = Date.now();
  pruneExpired(store, now);
  store.set(key, { code, expiresAt: now + VERIFICATION_VALID_SEC * 1000 });
}

export async function verifyCode(ctx: AppContext, email: string, code: string, purpose: string): Promise<boolean> {
  if (!email || !code) return false;
  const key = storeKey(email, purpose);
  if (ctx.redis) {
    const stored = await ctx.redis.get(redisKey(ctx, key));
    return stored !== null && stored === code;
  }
  const entry = memory(ctx).get(key);
  return !!entry && entry.expiresAt > Date.now() && entry.code === code;
}

export async function deleteCode(ctx: AppContext, email: string, purpose: string): Promise<void> {
  const key = storeKey(email, purpose);
  if (ctx.redis) await ctx.redis.del(redisKey(ctx, key));
  else memory(ctx).delete(key);
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
    ctx.log.warn({ err }, 'turnstile verification failed');
    return 'Turnstile 校验失败，请刷新重试！';
  }
}
