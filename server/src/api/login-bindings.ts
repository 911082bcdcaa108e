// WeChat and Telegram logins and the removal of bindings (new-api-compat.md §9.4). WeChat's code and Telegram's
// widget signature stand in for the OAuth state: neither goes through /api/oauth/state. The account logic is the
// OAuth providers' (services/oauth/accounts.ts), so the claims that settle racing sign-ups apply here too.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { User } from '../db/schema.js';
import { fail, ok } from '../lib/http.js';
import { criticalRateLimit } from '../lib/rate-limit.js';
import { authGuards, caller, loginPayload, writeSession } from './auth.js';
import { bodyOf, guarded, idParam, queryOf } from './route-helpers.js';
import { loginAvailable } from '../services/login-methods.js';
import { USER_STATUS_ENABLED } from '../services/console-auth.js';
import { getUser } from '../services/users.js';
import {
  USER_BANNED,
  USER_DELETED,
  bindProviderAccount,
  loginWithProviderAccount,
} from '../services/oauth/accounts.js';
import { WECHAT_NOT_ENABLED, wechat, wechatUserByCode } from '../services/oauth/wechat.js';
import { TELEGRAM_NOT_BOUND, TELEGRAM_NOT_ENABLED, telegram, telegramUserOf } from '../services/oauth/telegram.js';
import { adminUnbind, unbindSelf } from '../services/oauth/unbind.js';

/** Where the Telegram widget's bind redirect lands: the page the OAuth bindings return to (oauth/Callback.tsx). */
export const TELEGRAM_BIND_RETURN = '/setting';

/** Starts the session and answers as POST /api/user/login does. */
async function loggedIn(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, user: User) {
  await writeSession(ctx, req, reply, user.id);
  return ok(loginPayload(user));
}

/** The query as plain strings (a repeated field counts once, its first value, as new-api reads it). */
function plainQuery(req: FastifyRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.query ?? {})) {
    const first: unknown = Array.isArray(v) ? v[0] : v;
    if (typeof first === 'string') out[k] = first;
  }
  return out;
}

/** Telegram logs in only an account a user bound before: it never signs anyone up (new-api). */
async function telegramLogin(ctx: AppContext, telegramId: string): Promise<User | string> {
  const rows = await ctx.db
    .selectFrom('users')
    .select(['id', 'deleted_at'])
    .where('telegram_id', '=', telegramId)
    .orderBy('id')
    .execute();
  if (!rows.length) return TELEGRAM_NOT_BOUND;
  const live = rows.find((row) => !row.deleted_at);
  const user = live ? await getUser(ctx, live.id) : undefined;
  if (!user) return USER_DELETED;
  if (Number(user.status) !== USER_STATUS_ENABLED) return USER_BANNED;
  return user;
}

export async function registerLoginBindingRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const critical = criticalRateLimit(ctx);
  const wechatOn = () => loginAvailable(ctx.options, 'WeChatAuthEnabled');
  const telegramOn = () => loginAvailable(ctx.options, 'TelegramOAuthEnabled');

  app.get(
    '/api/oauth/wechat',
    { onRequest: critical },
    guarded(async (req, reply) => {
      if (!wechatOn()) return fail(WECHAT_NOT_ENABLED);
      const account = await wechatUserByCode(ctx, (queryOf(req).code ?? '').trim(), req.log);
      const user = await loginWithProviderAccount(ctx, wechat, account, '');
      return loggedIn(ctx, req, reply, user);
    }),
  );

  // new-api's first versions take ?code= on a GET, later ones a JSON body {code} on a POST: both are served
  const wechatBind = guarded(async (req) => {
    if (!wechatOn()) return fail(WECHAT_NOT_ENABLED);
    const fromBody = bodyOf(req).code;
    const code = typeof fromBody === 'string' ? fromBody : (queryOf(req).code ?? '');
    const account = await wechatUserByCode(ctx, code.trim(), req.log);
    await bindProviderAccount(ctx, wechat, caller(req).id, account);
    return ok(undefined, '');
  });
  app.get('/api/oauth/wechat/bind', { onRequest: critical, preHandler: auth.user }, wechatBind);
  app.post('/api/oauth/wechat/bind', { onRequest: critical, preHandler: auth.user }, wechatBind);

  app.get(
    '/api/oauth/telegram/login',
    { onRequest: critical },
    guarded(async (req, reply) => {
      if (!telegramOn()) return fail(TELEGRAM_NOT_ENABLED);
      const account = telegramUserOf(ctx, plainQuery(req));
      const found = await telegramLogin(ctx, account.id);
      if (typeof found === 'string') return fail(found);
      return loggedIn(ctx, req, reply, found);
    }),
  );

  // the widget sends the browser here (data-auth-url) with the signed fields; success returns it to the console
  app.get(
    '/api/oauth/telegram/bind',
    { onRequest: critical, preHandler: auth.user },
    guarded(async (req, reply) => {
      if (!telegramOn()) return fail(TELEGRAM_NOT_ENABLED);
      const account = telegramUserOf(ctx, plainQuery(req));
      await bindProviderAccount(ctx, telegram, caller(req).id, account);
      return reply.redirect(TELEGRAM_BIND_RETURN, 302);
    }),
  );

  // ours: a user removes one of their own bindings while another way to sign in remains
  app.delete(
    '/api/user/self/bindings/:binding_type',
    { preHandler: auth.user },
    guarded(async (req) => {
      await unbindSelf(ctx, caller(req).id, (req.params as { binding_type: string }).binding_type);
      return ok(undefined, '');
    }),
  );

  app.delete(
    '/api/user/:id/bindings/:binding_type',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const { binding_type: type } = req.params as { binding_type: string };
      await adminUnbind(ctx, caller(req).role, idParam(req) ?? 0, type);
      return ok(undefined, 'success');
    }),
  );
}
