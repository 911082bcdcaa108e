// Two-factor routes (new-api-compat.md §9.7): the user's own enrolment under /api/user/2fa/*, the second login step
// POST /api/user/login/2fa, and the admin's reset and statistics. The logic is in services/two-factor.ts and
// services/two-factor-login.ts; POST /api/user/login calls requireSecondStep before it would start a session.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { fail, ok, type Envelope } from '../lib/http.js';
import { criticalRateLimit } from '../lib/rate-limit.js';
import { authGuards, caller, loginPayload, writeSession } from './auth.js';
import { bodyOf, guarded, queryOf } from './route-helpers.js';
import { USER_STATUS_ENABLED } from '../services/console-auth.js';
import { getUser } from '../services/users.js';
import {
  adminResetTwoFactor,
  beginSetup,
  disableTwoFactor,
  enableTwoFactor,
  isTwoFactorEnabled,
  proveSecondFactor,
  regenerateBackupCodes,
  twoFactorStats,
  twoFactorStatus,
  usersWithTwoFactor,
} from '../services/two-factor.js';
import {
  PENDING_LOGIN_VALID_SEC,
  consumePendingLogin,
  createPendingLogin,
  pendingLoginUser,
} from '../services/two-factor-login.js';

export const TWO_FA_LOGIN_COOKIE = 'twofa_login';
/** the cookie goes back only to the login routes (/api/user/login and /api/user/login/2fa) */
const COOKIE_PATH = '/api/user/login';
const LOGIN_EXPIRED = '会话已过期，请重新登录';
const MAX_LISTED_IDS = 100;

/** The `code` field of the body; new-api refuses a body without one as 参数错误. */
function codeOf(req: FastifyRequest): string | null {
  const code = bodyOf(req).code;
  return typeof code === 'string' && code.trim() ? code : null;
}

/** The pending login id this browser was given, from its signed cookie. */
function browserLoginId(req: FastifyRequest): string {
  const raw = req.cookies?.[TWO_FA_LOGIN_COOKIE];
  if (!raw) return '';
  const unsigned = req.unsignCookie(raw);
  return unsigned.valid && unsigned.value ? unsigned.value : '';
}

/**
 * For a user with two-factor in force, the password step ends here: no session, but a pending login bound to this
 * browser and the answer new-api gives (`require_2fa: true`). Null when the user has no second factor.
 */
export async function requireSecondStep(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  userId: number,
): Promise<Envelope | null> {
  if (!(await isTwoFactorEnabled(ctx, userId))) return null;
  const id = await createPendingLogin(ctx, userId);
  reply.setCookie(TWO_FA_LOGIN_COOKIE, id, {
    signed: true,
    path: COOKIE_PATH,
    maxAge: PENDING_LOGIN_VALID_SEC,
    httpOnly: true,
    secure: ctx.config.sessionCookieSecure || req.protocol === 'https',
    sameSite: 'strict',
  });
  const expiresAt = Math.floor(Date.now() / 1000) + PENDING_LOGIN_VALID_SEC;
  return ok({ require_2fa: true, expires_at: expiresAt }, '请输入两步验证码');
}

export async function registerTwoFactorRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const critical = criticalRateLimit(ctx);

  app.post(
    '/api/user/login/2fa',
    { onRequest: critical },
    guarded(async (req, reply) => {
      const code = codeOf(req);
      if (!code) return fail('参数错误');
      const loginId = browserLoginId(req);
      const userId = loginId ? await pendingLoginUser(ctx, loginId) : null;
      if (userId === null) return fail(LOGIN_EXPIRED);
      const user = await getUser(ctx, userId);
      if (!user) return fail('用户不存在');
      if (user.status !== USER_STATUS_ENABLED) return fail('用户已被禁用');
      await proveSecondFactor(ctx, user.id, code, { allowBackupCode: true });
      // the code is good: exactly one request may turn this pending login into a session
      if (!(await consumePendingLogin(ctx, loginId))) return fail(LOGIN_EXPIRED);
      reply.clearCookie(TWO_FA_LOGIN_COOKIE, { path: COOKIE_PATH });
      await writeSession(ctx, req, reply, user.id);
      return ok(loginPayload(user));
    }),
  );

  app.get(
    '/api/user/2fa/status',
    { preHandler: auth.user },
    guarded(async (req) => ok(await twoFactorStatus(ctx, caller(req).id))),
  );

  app.post(
    '/api/user/2fa/setup',
    { preHandler: auth.user },
    guarded(async (req) => {
      const me = caller(req);
      const answer = await beginSetup(ctx, { id: me.id, username: me.username });
      return ok(answer, '2FA设置初始化成功，请使用认证器扫描二维码并输入验证码完成设置');
    }),
  );

  app.post(
    '/api/user/2fa/enable',
    { onRequest: critical, preHandler: auth.user },
    guarded(async (req) => {
      const code = codeOf(req);
      if (!code) return fail('参数错误');
      await enableTwoFactor(ctx, caller(req).id, code);
      return ok(undefined, '两步验证启用成功');
    }),
  );

  app.post(
    '/api/user/2fa/disable',
    { onRequest: critical, preHandler: auth.user },
    guarded(async (req) => {
      const code = codeOf(req);
      if (!code) return fail('参数错误');
      await disableTwoFactor(ctx, caller(req).id, code);
      return ok(undefined, '两步验证已禁用');
    }),
  );

  app.post(
    '/api/user/2fa/backup_codes',
    { onRequest: critical, preHandler: auth.user },
    guarded(async (req) => {
      const code = codeOf(req);
      if (!code) return fail('参数错误');
      const codes = await regenerateBackupCodes(ctx, caller(req).id, code);
      return ok({ backup_codes: codes }, '备用码重新生成成功');
    }),
  );

  // ---- admin ----

  app.get(
    '/api/user/2fa/stats',
    { preHandler: auth.admin },
    guarded(async () => ok(await twoFactorStats(ctx))),
  );

  // ours: which of the listed users have two-factor in force (?ids=1,2,3), for the user list's reset action
  app.get(
    '/api/user/2fa/enabled',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const ids = (queryOf(req).ids ?? '')
        .split(',')
        .filter((s) => /^\d{1,15}$/.test(s.trim()))
        .map(Number)
        .slice(0, MAX_LISTED_IDS);
      return ok(await usersWithTwoFactor(ctx, ids));
    }),
  );

  app.delete(
    '/api/user/:id/2fa',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const raw = (req.params as { id: string }).id;
      await adminResetTwoFactor(ctx, caller(req).role, /^\d+$/.test(raw) ? Number(raw) : NaN);
      return ok(undefined, '用户2FA已被强制禁用');
    }),
  );
}
