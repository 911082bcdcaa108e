// Third-party login routes (new-api-compat.md §9.4, §9.5): the OAuth state, each provider's callback and email
// binding. The account logic is in services/oauth/; these handlers check the state and the switches, and answer
// as password login does.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { fail, ok } from '../lib/http.js';
import { criticalRateLimit } from '../lib/rate-limit.js';
import { authGuards, caller, loginPayload, writeSession } from './auth.js';
import { bodyOf, guarded, queryOf } from './route-helpers.js';
import { readSession } from '../services/console-auth.js';
import { sessionUser } from '../services/sessions.js';
import { loginAvailable } from '../services/login-methods.js';
import { OAUTH_PROVIDERS } from '../services/oauth/index.js';
import type { OAuthProvider } from '../services/oauth/provider.js';
import {
  OAUTH_STATE_COOKIE,
  OAUTH_STATE_VALID_SEC,
  consumeOAuthState,
  issueOAuthState,
} from '../services/oauth/state.js';
import { USER_BANNED, bindProviderAccount, loginWithProviderAccount, notEnabled } from '../services/oauth/accounts.js';
import { PURPOSE_EMAIL_VERIFICATION, spendCode, verifyCode } from '../services/verification.js';
import { isValidEmail } from '../services/users.js';

const STATE_MISMATCH = 'state is empty or not same';
const STATE_COOKIE_PATH = '/api/oauth';

/** The state this browser was given, from its signed cookie. */
function browserState(req: FastifyRequest): string {
  const raw = req.cookies?.[OAUTH_STATE_COOKIE];
  if (!raw) return '';
  const unsigned = req.unsignCookie(raw);
  return unsigned.valid && unsigned.value ? unsigned.value : '';
}

export async function handleCallback(
  ctx: AppContext,
  provider: OAuthProvider,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<unknown> {
  const q = queryOf(req);
  const state = q.state ?? '';
  // the state must be the one issued to this browser, and unused: consumed before the provider is called
  const issued = state && state === browserState(req) ? await consumeOAuthState(ctx, state) : null;
  reply.clearCookie(OAUTH_STATE_COOKIE, { path: STATE_COOKIE_PATH });
  if (!issued) return reply.status(403).send(fail(STATE_MISMATCH));

  const session = readSession(req);
  const signedIn = session ? await sessionUser(ctx, session) : undefined;
  const enabled = provider.enabled ? provider.enabled(ctx) : loginAvailable(ctx.options, provider.option);
  if (!enabled) return fail(notEnabled(provider));
  const account = await provider.fetchUser(ctx, (q.code ?? '').trim(), {
    protocol: req.protocol,
    host: req.host,
    log: req.log,
  });

  if (signedIn) {
    if (Number(signedIn.status) !== 1) return fail(USER_BANNED);
    await bindProviderAccount(ctx, provider, signedIn.id, account);
    return ok(undefined, 'bind');
  }
  const user = await loginWithProviderAccount(ctx, provider, account, issued.aff);
  await writeSession(ctx, req, reply, user.id);
  // the same payload as POST /api/user/login
  return ok(loginPayload(user));
}

export async function registerOAuthRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const critical = criticalRateLimit(ctx);

  app.get(
    '/api/oauth/state',
    { onRequest: critical },
    guarded(async (req, reply) => {
      const state = await issueOAuthState(ctx, queryOf(req).aff);
      reply.setCookie(OAUTH_STATE_COOKIE, state, {
        signed: true,
        path: STATE_COOKIE_PATH,
        maxAge: OAUTH_STATE_VALID_SEC,
        httpOnly: true,
        secure: ctx.config.sessionCookieSecure || req.protocol === 'https',
        // the provider sends the browser back with a cross-site navigation; lax lets the cookie follow it
        sameSite: 'lax',
      });
      return ok(state);
    }),
  );

  for (const provider of OAUTH_PROVIDERS) {
    app.get(
      `/api/oauth/${provider.key}`,
      { onRequest: critical },
      guarded((req, reply) => handleCallback(ctx, provider, req, reply)),
    );
  }

  // GET with the query (new-api), or POST with a JSON body {email, code} (new-api's later form)
  const emailBind = guarded(async (req) => {
    const input = req.method === 'POST' ? bodyOf(req) : queryOf(req);
    const email = (typeof input.email === 'string' ? input.email : '').trim();
    const code = (typeof input.code === 'string' ? input.code : '').trim();
    if (!isValidEmail(email) || !(await verifyCode(ctx, email, code, PURPOSE_EMAIL_VERIFICATION)))
      return fail('验证码错误或已过期');
    const me = caller(req);
    const taken = await ctx.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', email)
      .where('id', '!=', me.id)
      .executeTakeFirst();
    // soft-deleted accounts included, as the verification call counts them
    if (taken) return fail('邮箱地址已被占用');
    if (!(await spendCode(ctx, email, code, PURPOSE_EMAIL_VERIFICATION))) return fail('验证码错误或已过期');
    await ctx.db.updateTable('users').set({ email }).where('id', '=', me.id).execute();
    ctx.changes.publish({ kind: 'user', id: me.id });
    return ok(undefined, '');
  });
  app.get('/api/oauth/email/bind', { onRequest: critical, preHandler: auth.user }, emailBind);
  app.post('/api/oauth/email/bind', { onRequest: critical, preHandler: auth.user }, emailBind);
}
