// Console authentication (new-api-compat.md §3.2): a signed cookie naming a server-side session (services/sessions.ts),
// or a user access token in Authorization (with or without "Bearer "), plus the New-Api-User header that must name the
// same user (a CSRF guard). The user row is re-read on every console call (with the session, in one query) so a ban or
// role change takes effect at once.
// It lives in services because both the console's guards (api/auth.ts) and the relay's playground use it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { User } from '../db/schema.js';
import { isSessionId, sessionUser } from './sessions.js';

export const ROLE_GUEST = 0;
export const ROLE_COMMON = 1;
export const ROLE_ADMIN = 10;
export const ROLE_ROOT = 100;

export const USER_STATUS_ENABLED = 1;
export const USER_STATUS_DISABLED = 2;

export const SESSION_COOKIE = 'session';

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

/**
 * The session id from the signed cookie, or null. Cookies of the former stateless format (a signed JSON payload) are
 * no session id and so no longer log anyone in.
 */
export function readSession(req: FastifyRequest): string | null {
  const raw = req.cookies?.[SESSION_COOKIE];
  if (!raw) return null;
  const unsigned = req.unsignCookie(raw);
  if (!unsigned.valid || !unsigned.value || !isSessionId(unsigned.value)) return null;
  return unsigned.value;
}

async function findActiveUser(ctx: AppContext, accessToken: string): Promise<User | undefined> {
  return ctx.db
    .selectFrom('users')
    .selectAll()
    .where('deleted_at', 'is', null)
    .where('access_token', '=', accessToken)
    .executeTakeFirst();
}

/**
 * Resolves the caller and enforces `minRole`. Sends the error itself and returns null when the caller may not pass:
 * 401 for a missing/mismatched identity, HTTP 200 `success:false` for an invalid token, a ban or too low a role.
 */
export async function authenticate(
  ctx: AppContext,
  req: FastifyRequest,
  reply: FastifyReply,
  minRole: number,
): Promise<AuthInfo | null> {
  const session = readSession(req);
  let user: User | undefined;
  let useAccessToken = false;
  if (session) {
    user = await sessionUser(ctx, session);
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
    user = await findActiveUser(ctx, header);
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
