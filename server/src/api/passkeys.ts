// Passkey routes (new-api-compat.md §9.8): new-api's /api/user/passkey/* and the admin reset, with several passkeys
// per user (DELETE /api/user/passkey/:id removes one; new-api's DELETE /api/user/passkey removes all). The challenge
// of a ceremony is tied to the browser by a signed httpOnly cookie naming where it is kept (services/passkey-challenges.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import { fail, ok } from '../lib/http.js';
import { criticalRateLimit } from '../lib/rate-limit.js';
import { authGuards, caller, loginPayload, writeSession } from './auth.js';
import { bodyOf, guarded, idParam, queryOf } from './route-helpers.js';
import { PASSKEY_CHALLENGE_VALID_SEC } from '../services/passkey-challenges.js';
import { targetFor } from '../services/user-admin.js';
import {
  PASSKEY_DISABLED,
  PASSKEY_NONE,
  PASSKEY_REGISTERED,
  PASSKEY_REMOVED,
  PASSKEY_RESET,
  PASSKEY_UNKNOWN,
  beginLogin,
  beginRegistration,
  finishLogin,
  finishRegistration,
  passkeyStatus,
  passkeysEnabled,
  relyingParty,
  removeAllPasskeys,
  removePasskey,
  type RelyingParty,
} from '../services/passkeys.js';

export const PASSKEY_CHALLENGE_COOKIE = 'passkey_challenge';
const COOKIE_PATH = '/api/user/passkey';

const rpOf = (ctx: AppContext, req: FastifyRequest): RelyingParty =>
  relyingParty(ctx, { protocol: req.protocol, host: req.host });

function keepChallenge(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, handle: string): void {
  reply.setCookie(PASSKEY_CHALLENGE_COOKIE, handle, {
    signed: true,
    path: COOKIE_PATH,
    maxAge: PASSKEY_CHALLENGE_VALID_SEC,
    httpOnly: true,
    secure: ctx.config.sessionCookieSecure || req.protocol === 'https',
    // the ceremony's calls come from the console's own pages
    sameSite: 'strict',
  });
}

/** The handle this browser was given at begin, from its signed cookie; the cookie is spent either way. */
function takeHandle(req: FastifyRequest, reply: FastifyReply): string {
  reply.clearCookie(PASSKEY_CHALLENGE_COOKIE, { path: COOKIE_PATH });
  const raw = req.cookies?.[PASSKEY_CHALLENGE_COOKIE];
  if (!raw) return '';
  const unsigned = req.unsignCookie(raw);
  return unsigned.valid && unsigned.value ? unsigned.value : '';
}

/** new-api's finish body is the browser's credential itself; ours may carry the passkey's label beside it. */
function credentialOf(req: FastifyRequest): unknown {
  const b = bodyOf(req);
  return b.credential && typeof b.credential === 'object' ? b.credential : b;
}

export async function registerPasskeyRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  const critical = criticalRateLimit(ctx);

  // ---- public: username-less login ----

  app.post(
    '/api/user/passkey/login/begin',
    { onRequest: critical },
    guarded(async (req, reply) => {
      if (!passkeysEnabled(ctx)) return fail(PASSKEY_DISABLED);
      const { options, handle } = await beginLogin(ctx, rpOf(ctx, req));
      keepChallenge(ctx, req, reply, handle);
      return ok({ options });
    }),
  );

  app.post(
    '/api/user/passkey/login/finish',
    { onRequest: critical },
    guarded(async (req, reply) => {
      const handle = takeHandle(req, reply);
      if (!passkeysEnabled(ctx)) return fail(PASSKEY_DISABLED);
      const user = await finishLogin(ctx, rpOf(ctx, req), handle, credentialOf(req));
      await writeSession(ctx, req, reply, user.id);
      // the same payload as POST /api/user/login
      return ok(loginPayload(user));
    }),
  );

  // ---- the signed-in user's own passkeys ----

  app.get(
    '/api/user/passkey',
    { preHandler: auth.user },
    guarded(async (req) => ok(await passkeyStatus(ctx, caller(req).id))),
  );

  app.post(
    '/api/user/passkey/register/begin',
    { preHandler: auth.user },
    guarded(async (req, reply) => {
      if (!passkeysEnabled(ctx)) return fail(PASSKEY_DISABLED);
      const { options, handle } = await beginRegistration(ctx, caller(req).user, rpOf(ctx, req));
      keepChallenge(ctx, req, reply, handle);
      return ok({ options });
    }),
  );

  app.post(
    '/api/user/passkey/register/finish',
    { preHandler: auth.user },
    guarded(async (req, reply) => {
      const handle = takeHandle(req, reply);
      if (!passkeysEnabled(ctx)) return fail(PASSKEY_DISABLED);
      const name = bodyOf(req).name ?? queryOf(req).name;
      await finishRegistration(ctx, caller(req).user, rpOf(ctx, req), handle, credentialOf(req), name);
      return ok(undefined, PASSKEY_REGISTERED);
    }),
  );

  app.delete(
    '/api/user/passkey',
    { preHandler: auth.user },
    guarded(async (req) => {
      await removeAllPasskeys(ctx, caller(req).id);
      return ok(undefined, PASSKEY_REMOVED);
    }),
  );

  app.delete(
    '/api/user/passkey/:id',
    { preHandler: auth.user },
    guarded(async (req) => {
      const id = idParam(req);
      if (id === null || !(await removePasskey(ctx, caller(req).id, id))) return fail(PASSKEY_UNKNOWN);
      return ok(undefined, PASSKEY_REMOVED);
    }),
  );

  // ---- admin ----

  app.delete(
    '/api/user/:id/reset_passkey',
    { preHandler: auth.admin },
    guarded(async (req) => {
      const id = idParam(req);
      if (id === null) return fail('无效的用户 ID');
      const target = await targetFor(ctx, caller(req).role, id, '无权更新同权限等级或更高权限等级的用户信息', true);
      if (!(await removeAllPasskeys(ctx, target.id))) return fail(PASSKEY_NONE);
      return ok(undefined, PASSKEY_RESET);
    }),
  );
}
