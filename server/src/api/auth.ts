// The console's Fastify-facing guards over the authentication core in services/console-auth.ts: route preHandlers,
// session cookies at login and logout, and the caller of a guarded handler.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { AppContext } from '../context.js';
import type { User } from '../db/schema.js';
import { SESSION_TTL_SEC, createSession, endSession, sessionUser } from '../services/sessions.js';
import {
  ROLE_ADMIN,
  ROLE_COMMON,
  ROLE_ROOT,
  SESSION_COOKIE,
  USER_STATUS_DISABLED,
  authenticate,
  readSession,
  type AuthInfo,
} from '../services/console-auth.js';

/** Starts a server-side session for the user and sets its cookie (Secure over HTTPS or with SESSION_COOKIE_SECURE). */
export async function writeSession(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  userId: number,
): Promise<void> {
  const id = await createSession(ctx, userId);
  reply.setCookie(SESSION_COOKIE, id, {
    signed: true,
    path: '/',
    maxAge: SESSION_TTL_SEC,
    httpOnly: true,
    // request.protocol follows X-Forwarded-Proto only from trusted proxies, so a client cannot switch it
    secure: ctx.config.sessionCookieSecure || req.protocol === 'https',
    sameSite: 'strict',
  });
}

/** The answer of every login (password, second factor, passkey, third-party): new-api's session payload. */
export function loginPayload(user: Pick<User, 'id' | 'username' | 'display_name' | 'role' | 'status' | 'group'>) {
  return {
    id: user.id,
    username: user.username,
    display_name: user.display_name,
    role: user.role,
    status: user.status,
    group: user.group,
  };
}

/** Logout: ends the request's session on the server (every node) and clears the cookie. */
export async function clearSession(ctx: AppContext, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const id = readSession(req);
  if (id) await endSession(ctx, id);
  reply.clearCookie(SESSION_COOKIE, { path: '/' });
}

/** the guards that refuse a caller: api/index.ts runs them before the request body is read */
const refusingGuards = new WeakSet<object>();

export function isRefusingGuard(hook: unknown): hook is preHandlerAsyncHookHandler {
  return typeof hook === 'function' && refusingGuards.has(hook);
}

function guard(ctx: AppContext, minRole: number): preHandlerAsyncHookHandler {
  const hook: preHandlerAsyncHookHandler = async function (req, reply) {
    const info = await authenticate(ctx, req, reply, minRole);
    if (!info) return reply;
  };
  refusingGuards.add(hook);
  return hook;
}

/** preHandlers for route options: `{ preHandler: auth.user }`. */
export function authGuards(ctx: AppContext) {
  return {
    user: guard(ctx, ROLE_COMMON),
    admin: guard(ctx, ROLE_ADMIN),
    root: guard(ctx, ROLE_ROOT),
    /** Reads the session if present, never refuses (new-api-compat.md §3.2 TryUserAuth). */
    try: async function (req) {
      const s = readSession(req);
      if (!s) return;
      const user = await sessionUser(ctx, s);
      if (user && user.status !== USER_STATUS_DISABLED) {
        req.auth = {
          id: user.id,
          username: user.username,
          role: user.role,
          status: user.status,
          group: user.group,
          user,
          useAccessToken: false,
        };
      }
    } as preHandlerAsyncHookHandler,
  };
}

/** The authenticated caller; only valid in handlers behind one of the guards. */
export function caller(req: FastifyRequest): AuthInfo {
  if (!req.auth) throw new Error('route is missing an auth guard');
  return req.auth;
}
