// Console authentication (facts §3.2): a signed cookie session, or a user access token in Authorization
// (with or without "Bearer "), plus the New-Api-User header that must name the same user (a CSRF guard).
// The user row is re-read on every console call so a ban or role change takes effect at once.
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { AppContext } from '../context.js';
import type { User } from '../db/schema.js';

export const ROLE_GUEST = 0;
export const ROLE_COMMON = 1;
export const ROLE_ADMIN = 10;
export const ROLE_ROOT = 100;

export const USER_STATUS_ENABLED = 1;
export const USER_STATUS_DISABLED = 2;

export const SESSION_COOKIE = 'session';
export const SESSION_MAX_AGE_SEC = 30 * 24 * 3600;

export interface SessionData {
  id: number;
  username: string;
  role: number;
  status: number;
  group: string;
  /** issued at, unix seconds */
  iat: number;
}

export interface AuthInfo {
  id: number;
  username: string;
  role: number;
  status: number;
  group: string;
  user: User;
  useAccessToken: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthInfo;
  }
}

export function readSession(req: FastifyRequest): SessionData | null {
  const raw = req.cookies?.[SESSION_COOKIE];
  if (!raw) return null;
  const unsigned = req.unsignCookie(raw);
  if (!unsigned.valid || !unsigned.value) return null;
  try {
    const data = JSON.parse(Buffer.from(unsigned.value, 'base64url').toString('utf8')) as SessionData;
    if (typeof data.id !== 'number' || !data.username) return null;
    if (Math.floor(Date.now() / 1000) - (data.iat ?? 0) > SESSION_MAX_AGE_SEC) return null;
    return data;
  } catch {
    return null;
  }
}

export function writeSession(reply: FastifyReply, user: Pick<User, 'id' | 'username' | 'role' | 'status' | 'group'>): void {
  const data: SessionData = {
    id: user.id,
    username: user.username,
    role: user.role,
    status: user.status,
    group: user.group,
    iat: Math.floor(Date.now() / 1000),
  };
  reply.setCookie(SESSION_COOKIE, Buffer.from(JSON.stringify(data)).toString('base64url'), {
    signed: true,
    path: '/',
    maxAge: SESSION_MAX_AGE_SEC,
    httpOnly: true,
    secure: false,
    sameSite: 'strict',
  });
}

export function clearSession(reply: FastifyReply): void {
  reply.clearCookie(SESSION_COOKIE, { path: '/' });
}

async function findActiveUser(ctx: AppContext, where: { id?: number; accessToken?: string }): Promise<User | undefined> {
  let q = ctx.db.selectFrom('users').selectAll().where('deleted_at', 'is', null);
  if (where.id !== undefined) q = q.where('id', '=', where.id);
  if (where.accessToken !== undefined) q = q.where('access_token', '=', where.accessToken);
  return q.executeTakeFirst();
}

/**
 * Resolves the caller and enforces `minRole`. Sends the error itself and returns null when the caller may not pass:
 * 401 for a missing/mismatched identity, HTTP 200 `success:false` for an invalid token, a ban or too low a role.
 */
export async function authenticate(ctx: AppContext, req: FastifyRequest, reply: FastifyReply, minRole: number): Promise<AuthInfo | null> {
  const session = readSession(req);
  let user: User | undefined;
  let useAccessToken = false;
  if (session) {
    user = await findActiveUser(ctx, { id: session.id });
    if (!user) {
      reply.status(401).send({ success: false, message: '无权进行此操作，未登录且未提供 access token' });
      return null;
    }
  } else {
    let header = (req.headers.authorization ?? '').trim();
    if (header.toLowerCase().startsWith('bearer ')) header = header.slice(7).trim();
    if (!header) {
      reply.status(401).send({ success: false, message: '无权进行此操作，未登录且未提供 access token' });
      return null;
    }
    user = await findActiveUser(ctx, { accessToken: header });
    if (!user) {
      reply.send({ success: false, message: '无权进行此操作，access token 无效' });
      return null;
    }
    useAccessToken = true;
  }
  const headerId = req.headers['new-api-user'];
  const claimed = typeof headerId === 'string' && /^-?\d+$/.test(headerId.trim()) ? Number(headerId.trim()) : NaN;
  if (Number.isNaN(claimed)) {
    reply.status(401).send({ success: false, message: '无权进行此操作，未提供 New-Api-User' });
    return null;
  }
  if (claimed !== user.id) {
    reply.status(401).send({ success: false, message: '无权进行此操作，New-Api-User 与登录用户不匹配' });
    return null;
  }
  if (user.status === USER_STATUS_DISABLED) {
    reply.send({ success: false, message: '用户已被封禁' });
    return null;
  }
  if (user.role < minRole) {
    reply.send({ success: false, message: '无权进行此操作，权限不足' });
    return null;
  }
  const info: AuthInfo = {
    id: user.id,
    username: user.username,
    role: user.role,
    status: user.status,
    group: user.group,
    user,
    useAccessToken,
  };
  req.auth = info;
  return info;
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
    /** Reads the session if present, never refuses (facts §3.2 TryUserAuth). */
    try: (async function (req) {
      const s = readSession(req);
      if (!s) return;
      const user = await findActiveUser(ctx, { id: s.id });
      if (user && user.status !== USER_STATUS_DISABLED) {
        req.auth = { id: user.id, username: user.username, role: user.role, status: user.status, group: user.group, user, useAccessToken: false };
      }
    }) as preHandlerAsyncHookHandler,
  };
}

/** The authenticated caller; only valid in handlers behind one of the guards. */
export function caller(req: FastifyRequest): AuthInfo {
  if (!req.auth) throw new Error('route is missing an auth guard');
  return req.auth;
}
