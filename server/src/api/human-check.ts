// The Turnstile human check in front of login, register, email verification and password reset
// (new-api-compat.md §9.6). As in new-api, a browser that passed it once is not asked again for the rest of its
// session: the pass is kept in a signed, httpOnly browser-session cookie holding when it was earned, and honoured for
// at most PASS_VALID_SEC so a pass lifted from one browser cannot serve a script for days.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { AppContext } from '../context.js';
import { fail } from '../lib/http.js';
import { nowSec } from '../lib/time.js';
import { checkTurnstile } from '../services/verification.js';
import { queryOf } from './route-helpers.js';

export const HUMAN_CHECK_COOKIE = 'turnstile';
const PASS_VALID_SEC = 12 * 3600;

function passedEarlier(req: FastifyRequest): boolean {
  const raw = req.cookies?.[HUMAN_CHECK_COOKIE];
  if (!raw) return false;
  const unsigned = req.unsignCookie(raw);
  if (!unsigned.valid || !unsigned.value) return false;
  const since = Number(unsigned.value);
  const now = nowSec();
  return Number.isInteger(since) && since <= now && now - since < PASS_VALID_SEC;
}

function rememberPass(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): void {
  reply.setCookie(HUMAN_CHECK_COOKIE, String(nowSec()), {
    signed: true,
    path: '/api',
    httpOnly: true,
    secure: ctx.config.sessionCookieSecure || req.protocol === 'https',
    sameSite: 'strict',
  });
}

/** preHandler: refuses (`{success:false,message}`) a caller who has not passed the check this session. */
export function humanCheck(ctx: AppContext): preHandlerAsyncHookHandler {
  return async function (req, reply) {
    if (!ctx.options.bool('TurnstileCheckEnabled') || passedEarlier(req)) return;
    const problem = await checkTurnstile(ctx, queryOf(req).turnstile, req.ip, req.log);
    if (problem) return reply.send(fail(problem));
    rememberPass(ctx, req, reply);
  };
}
