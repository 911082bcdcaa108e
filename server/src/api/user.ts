// /api/user/* plus the email verification and password reset calls (new-api-compat.md §3.4, §9.3, §9.5).
import type { FastifyInstance, RouteHandlerMethod } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards, caller, clearSession, loginPayload, writeSession } from './auth.js';
import { ROLE_ROOT } from '../services/console-auth.js';
import { fail, ok } from '../lib/http.js';
import { bodyOf, guarded, queryOf } from './route-helpers.js';
import { criticalRateLimit } from '../lib/rate-limit.js';
import { intInput } from '../lib/input.js';
import {
  USER_EXISTS_MESSAGE,
  authenticatePassword,
  emailRegistered,
  ensureAffCode,
  getUser,
  isValidEmail,
  publicUser,
  regenerateAccessToken,
  registerUser,
  resetPasswordByEmail,
  softDeleteUser,
  transferAffQuota,
  updateSelf,
  updateUserSetting,
  userExistsOrDeleted,
  validateUserFields,
} from '../services/users.js';
import { usableGroupsWithRatio } from '../services/groups.js';
import {
  adminCreateUser,
  adminGetUser,
  adminUpdateUser,
  hardDeleteUser,
  manageUser,
  pageParams,
  searchUsers,
} from '../services/user-admin.js';
import {
  PURPOSE_EMAIL_VERIFICATION,
  PURPOSE_PASSWORD_RESET,
  VERIFICATION_VALID_SEC,
  newVerificationCode,
  registerVerificationCode,
  spendCode,
  verifyCode,
} from '../services/verification.js';
import { sendEmail } from '../services/mail.js';
import { humanCheck } from './human-check.js';
import { requireSecondStep } from './two-factor.js';

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Email checks shared by the verification call (new-api-compat.md §9.5). Returns an error message or null. */
function emailPolicyError(ctx: AppContext, email: string): string | null {
  if (!isValidEmail(email)) return '无效的参数';
  const [local, domain] = [
    email.slice(0, email.lastIndexOf('@')),
    email.slice(email.lastIndexOf('@') + 1).toLowerCase(),
  ];
  if (ctx.options.bool('EmailDomainRestrictionEnabled')) {
    const allowed = ctx.options
      .get('EmailDomainWhitelist')
      .split(',')
      .map((d) => d.trim().toLowerCase())
      .filter(Boolean);
    if (!allowed.includes(domain)) return '管理员启用了邮箱域名白名单，您的邮箱地址的域名不在白名单中';
  }
  if (ctx.options.bool('EmailAliasRestrictionEnabled') && /[+.]/.test(local)) {
    return '管理员已启用邮箱地址别名限制，您的邮箱地址由于包含特殊符号而被拒绝。';
  }
  return null;
}

export async function registerUserRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const critical = criticalRateLimit(ctx);
  const human = humanCheck(ctx);

  // ---- public: register, login, logout, verification, password reset ----

  app.post(
    '/api/user/register',
    { onRequest: critical, preHandler: human },
    guarded(async (req) => {
      if (!ctx.options.bool('RegisterEnabled')) return fail('管理员关闭了新用户注册');
      if (!ctx.options.bool('PasswordRegisterEnabled'))
        return fail('管理员关闭了通过密码进行注册，请使用第三方账户验证的形式进行注册');
      const b = bodyOf(req);
      const username = str(b.username).trim();
      const password = str(b.password);
      if (!username || !password) return fail('无效的参数');
      const invalid = validateUserFields({ username, password });
      if (invalid) return fail(invalid);
      let email = '';
      if (ctx.options.bool('EmailVerificationEnabled')) {
        email = str(b.email).trim();
        const code = str(b.verification_code).trim();
        if (!email || !code) return fail('管理员开启了邮箱验证，请输入邮箱地址和验证码');
        if (!(await verifyCode(ctx, email, code, PURPOSE_EMAIL_VERIFICATION))) return fail('验证码错误或已过期');
      }
      if (await userExistsOrDeleted(ctx.db, username, email)) return fail(USER_EXISTS_MESSAGE);
      // the code is used up here, once: two sign-ups racing with it cannot both pass
      if (email && !(await spendCode(ctx, email, str(b.verification_code).trim(), PURPOSE_EMAIL_VERIFICATION)))
        return fail('验证码错误或已过期');
      await registerUser(ctx, { username, password, email, affCode: str(b.aff_code).trim() || undefined });
      return ok(undefined, '');
    }),
  );

  app.post(
    '/api/user/login',
    { onRequest: critical, preHandler: human },
    guarded(async (req, reply) => {
      if (!ctx.options.bool('PasswordLoginEnabled')) return fail('管理员关闭了密码登录');
      const b = bodyOf(req);
      const username = str(b.username);
      const password = str(b.password);
      if (!username.trim() || !password) return fail('无效的参数');
      const user = await authenticatePassword(ctx, username, password);
      // two-factor users get no session yet, only a pending login for POST /api/user/login/2fa
      const secondStep = await requireSecondStep(ctx, req, reply, user.id);
      if (secondStep) return secondStep;
      await writeSession(ctx, req, reply, user.id);
      return ok(loginPayload(user));
    }),
  );

  app.get('/api/user/logout', async (req, reply) => {
    await clearSession(ctx, req, reply);
    return ok(undefined, '');
  });

  app.get(
    '/api/verification',
    { onRequest: critical, preHandler: human },
    guarded(async (req) => {
      const email = str(queryOf(req).email).trim();
      const policy = emailPolicyError(ctx, email);
      if (policy) return fail(policy);
      if (await emailRegistered(ctx, email, true)) return fail('邮箱地址已被占用');
      const code = newVerificationCode(6);
      await registerVerificationCode(ctx, email, code, PURPOSE_EMAIL_VERIFICATION);
      const system = ctx.options.get('SystemName');
      const html =
        `<p>您好，你正在进行${system}邮箱验证。</p>` +
        `<p>您的验证码为: <strong>${code}</strong></p>` +
        `<p>验证码 ${VERIFICATION_VALID_SEC / 60} 分钟内有效，如果不是本人操作，请忽略。</p>`;
      try {
        await sendEmail(ctx, `${system}邮箱验证邮件`, email, html);
      } catch (err) {
        req.log.warn({ err }, 'verification email failed');
        return fail(`发送邮件失败：${(err as Error).message}`);
      }
      return ok(undefined, '');
    }),
  );

  // The answer does not depend on whether the address is registered, so the call cannot be used to probe accounts
  // (new-api answers "该邮箱地址未注册").
  app.get(
    '/api/reset_password',
    { onRequest: critical, preHandler: human },
    guarded(async (req) => {
      const email = str(queryOf(req).email).trim();
      if (!isValidEmail(email)) return fail('无效的参数');
      if (!ctx.options.get('SMTPServer') || !ctx.options.get('SMTPAccount')) return fail('SMTP 服务器未配置');
      if (await emailRegistered(ctx, email)) {
        const token = newVerificationCode(32);
        await registerVerificationCode(ctx, email, token, PURPOSE_PASSWORD_RESET);
        const system = ctx.options.get('SystemName');
        const link = `${ctx.options.get('ServerAddress')}/user/reset?email=${encodeURIComponent(email)}&token=${token}`;
        const html =
          `<p>您好，你正在进行${system}密码重置。</p>` +
          `<p>点击 <a href='${link}'>此处</a> 进行密码重置。</p>` +
          `<p>如果链接无法点击，请尝试点击下面的链接或将其复制到浏览器中打开：<br> ${link} </p>` +
          `<p>重置链接 ${VERIFICATION_VALID_SEC / 60} 分钟内有效，如果不是本人操作，请忽略。</p>`;
        try {
          await sendEmail(ctx, `${system}密码重置`, email, html);
        } catch (err) {
          req.log.error({ err }, 'password reset email failed');
        }
      }
      return ok(undefined, '');
    }),
  );

  app.post(
    '/api/user/reset',
    { onRequest: critical },
    guarded(async (req) => {
      const b = bodyOf(req);
      const email = str(b.email).trim();
      const token = str(b.token).trim();
      if (!email || !token) return fail('无效的参数');
      // checked and spent in one step: of concurrent submits of the same link, one resets
      if (!(await spendCode(ctx, email, token, PURPOSE_PASSWORD_RESET))) return fail('重置链接非法或已过期');
      const password = await resetPasswordByEmail(ctx, email);
      return ok(password);
    }),
  );

  // ---- groups ----

  const groupsHandler: RouteHandlerMethod = async (req) => ok(usableGroupsWithRatio(ctx, req.auth?.group ?? ''));
  app.get('/api/user/groups', { preHandler: auth.try }, groupsHandler);
  app.get('/api/user/self/groups', { preHandler: auth.user }, groupsHandler);

  // ---- self ----

  app.get(
    '/api/user/self',
    { preHandler: auth.user },
    guarded(async (req) => {
      const user = await getUser(ctx, caller(req).id);
      if (!user) return fail('用户不存在');
      return ok(publicUser(user));
    }),
  );

  app.put(
    '/api/user/self',
    { preHandler: auth.user },
    guarded(async (req, reply) => {
      const b = bodyOf(req);
      const input = {
        username: b.username === undefined ? undefined : str(b.username),
        display_name: b.display_name === undefined ? undefined : str(b.display_name),
        password: b.password === undefined ? undefined : str(b.password),
        original_password: b.original_password === undefined ? undefined : str(b.original_password),
      };
      const invalid = validateUserFields({
        username: input.username?.trim(),
        display_name: input.display_name,
        password: input.password,
      });
      if (invalid) return fail(invalid);
      const me = caller(req);
      const { passwordChanged } = await updateSelf(ctx, me.id, input);
      // every session ended with the password change; the console that changed it gets a fresh one
      if (passwordChanged && !me.useAccessToken) await writeSession(ctx, req, reply, me.id);
      return ok(undefined, '');
    }),
  );

  app.delete(
    '/api/user/self',
    { preHandler: auth.user },
    guarded(async (req, reply) => {
      const me = caller(req);
      if (me.role === ROLE_ROOT) return fail('不能删除超级管理员账户');
      await softDeleteUser(ctx, me.id);
      await clearSession(ctx, req, reply);
      return ok(undefined, '');
    }),
  );

  app.get(
    '/api/user/token',
    { preHandler: auth.user },
    guarded(async (req) => ok(await regenerateAccessToken(ctx, caller(req).id))),
  );

  app.get(
    '/api/user/aff',
    { preHandler: auth.user },
    guarded(async (req) => ok(await ensureAffCode(ctx, caller(req).id))),
  );

  app.post(
    '/api/user/aff_transfer',
    { preHandler: auth.user },
    guarded(async (req) => {
      const quota = bodyOf(req).quota;
      const n = intInput(quota);
      if (n === null) return fail('无效的参数');
      await transferAffQuota(ctx, caller(req).id, n);
      return ok(undefined, '划转成功');
    }),
  );

  app.put(
    '/api/user/setting',
    { preHandler: auth.user },
    guarded(async (req) => {
      await updateUserSetting(ctx, caller(req).id, bodyOf(req));
      return ok(undefined, '设置已更新');
    }),
  );

  // ---- admin ----

  app.get('/api/user/', { preHandler: auth.admin }, async (req) => {
    const { page, pageSize } = pageParams(queryOf(req));
    return ok(await searchUsers(ctx, { page, pageSize }));
  });
  app.post(
    '/api/user/',
    { preHandler: auth.admin },
    guarded(async (req) => {
      await adminCreateUser(ctx, caller(req).role, bodyOf(req));
      return ok(undefined, '');
    }),
  );
  app.put(
    '/api/user/',
    { preHandler: auth.admin },
    guarded(async (req) => {
      await adminUpdateUser(ctx, caller(req).role, bodyOf(req));
      return ok(undefined, '');
    }),
  );

  app.get('/api/user/search', { preHandler: auth.admin }, async (req) => {
    const q = queryOf(req);
    const { page, pageSize } = pageParams(q);
    return ok(await searchUsers(ctx, { keyword: q.keyword, group: q.group, page, pageSize }));
  });

  app.post(
    '/api/user/manage',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const b = bodyOf(req);
      return ok(await manageUser(ctx, caller(req).role, Number(b.id), str(b.action)));
    }),
  );

  app.get(
    '/api/user/:id',
    { preHandler: auth.admin },
    guarded(async (req) => ok(await adminGetUser(ctx, caller(req).role, Number((req.params as { id: string }).id)))),
  );

  app.delete(
    '/api/user/:id',
    { preHandler: auth.admin },
    guarded(async (req) => {
      // new-api reports success only when the delete fails; this answers properly.
      await hardDeleteUser(ctx, caller(req).role, Number((req.params as { id: string }).id));
      return ok(undefined, '');
    }),
  );
}
