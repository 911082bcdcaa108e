// TokenAuth (new-api-compat.md §4.2) and the group / model-limit / IP checks of Distribute (new-api-compat.md §4.3),
// all from caches.
import type { IncomingHttpHeaders } from 'node:http';
import type { AppContext } from '../context.js';
import { ipAllowed } from '../lib/ip-match.js';
import type { RelayServices } from './services.js';
import type { TokenRecord } from '../services/cache/token-cache.js';
import type { UserRecord } from '../services/cache/user-cache.js';
import { RelayError } from './errors.js';
import { isUsableGroup } from '../services/groups.js';

export const ROLE_ADMIN = 10;

export interface RelayCaller {
  user: UserRecord;
  /** null for the playground (session auth, user quota only) */
  token: TokenRecord | null;
  /** `sk-<key>-<channelId>` (admins only) */
  channelId: number | null;
}

const mask = (key: string) => `sk-${key.slice(0, 3)}***${key.slice(-3)}`;

/** Gemini clients send the key as `x-goog-api-key` or `?key=` (new-api-compat.md §4.2). */
function geminiKey(headers: IncomingHttpHeaders, path: string): string {
  const x = headers['x-goog-api-key'];
  if (typeof x === 'string' && x.trim()) return x.trim();
  const q = path.indexOf('?');
  return q < 0 ? '' : (new URLSearchParams(path.slice(q + 1)).get('key') ?? '').trim();
}

export function extractKey(headers: IncomingHttpHeaders, path: string): string {
  let key = headers.authorization ?? '';
  if (
    key.length > 7 &&
    (key.charCodeAt(0) === 66 || key.charCodeAt(0) === 98) &&
    key.slice(0, 7).toLowerCase() === 'bearer '
  )
    key = key.slice(7);
  key = key.trim();
  if (path.includes('/v1/messages')) {
    const x = headers['x-api-key'];
    if (typeof x === 'string' && x) key = x.trim();
  } else if (!key && (path.startsWith('/v1beta/') || path.startsWith('/v1/models'))) {
    // GET /v1/models answers Claude and Gemini clients in their list format, with their own key headers
    const x = headers['x-api-key'];
    key = typeof x === 'string' && x.trim() ? x.trim() : geminiKey(headers, path);
  }
  if (!key || key === 'midjourney-proxy') {
    const mj = headers['mj-api-secret'];
    key = typeof mj === 'string' ? mj.trim() : '';
  }
  return key;
}

/**
 * Resolves the token and its user; throws RelayError with new-api's statuses and messages. Synchronous when both are
 * in memory (the steady state without Redis), a promise when one must be fetched.
 */
export function tokenAuth(
  ctx: AppContext,
  svc: RelayServices,
  headers: IncomingHttpHeaders,
  path: string,
): RelayCaller | Promise<RelayCaller> {
  let key = extractKey(headers, path);
  if (key.startsWith('sk-')) key = key.slice(3);
  let channelPart: string | undefined;
  const dash = key.indexOf('-');
  if (dash >= 0) {
    const parts = key.split('-');
    key = parts[0];
    channelPart = parts[1];
  }
  if (!key) throw new RelayError(401, '未提供令牌');
  const token = svc.tokens.cached(key);
  const user = token ? svc.users.cached(token.userId) : undefined;
  if (token === undefined || (token && !user)) return fetchAndCheck(ctx, svc, key, channelPart);
  return checkCaller(ctx, svc, key, channelPart, token, user ?? null);
}

async function fetchAndCheck(
  ctx: AppContext,
  svc: RelayServices,
  key: string,
  channelPart: string | undefined,
): Promise<RelayCaller> {
  const token = await svc.tokens.get(key);
  return checkCaller(ctx, svc, key, channelPart, token, token ? await svc.users.get(token.userId) : null);
}

function checkCaller(
  ctx: AppContext,
  svc: RelayServices,
  key: string,
  channelPart: string | undefined,
  token: TokenRecord | null,
  user: UserRecord | null,
): RelayCaller {
  if (!token) throw new RelayError(401, '无效的令牌');
  if (token.status === 4) throw new RelayError(401, `该令牌额度已用尽 TokenStatusExhausted[${mask(key)}]`);
  if (token.status === 3) throw new RelayError(401, '该令牌已过期');
  if (token.status !== 1) throw new RelayError(401, '该令牌状态不可用');
  if (token.expiredTime !== -1 && token.expiredTime < Date.now() / 1000) {
    if (!ctx.redis) void svc.tokens.markStatus(token, 3).catch(() => undefined);
    throw new RelayError(401, '该令牌已过期');
  }
  if (!token.unlimited && token.remainQuota <= 0) {
    if (!ctx.redis) void svc.tokens.markStatus(token, 4).catch(() => undefined);
    throw new RelayError(
      401,
      `[${mask(key)}] 该令牌额度已用尽 !token.UnlimitedQuota && token.RemainQuota = ${token.remainQuota}`,
    );
  }
  if (!user) throw new RelayError(500, 'record not found');
  if (user.status !== 1) throw new RelayError(403, '用户已被封禁');
  let channelId: number | null = null;
  if (channelPart !== undefined && channelPart !== '') {
    if (user.role < ROLE_ADMIN) throw new RelayError(403, '普通用户不支持指定渠道');
    const id = Number(channelPart);
    if (!Number.isInteger(id)) throw new RelayError(400, '无效的渠道 Id');
    channelId = id;
  }
  return { user, token, channelId };
}

/** Distribute steps 1, 3 and 4: IP allow list, token group vs user group, model limits. Returns the billing group. */
export function checkAccess(ctx: AppContext, caller: RelayCaller, clientIp: string, model: string): string {
  const token = caller.token;
  let group = caller.user.group;
  if (!token) return group;
  if (token.allowIps && !ipAllowed(token.allowIps, clientIp))
    throw new RelayError(403, '您的 IP 不在令牌允许访问的列表中');
  if (token.group) {
    if (!isUsableGroup(ctx, group, token.group)) throw new RelayError(403, `令牌分组 ${token.group} 已被禁用`);
    const ratios = ctx.options.json<Record<string, number>>('GroupRatio', {});
    if (!(token.group in ratios)) throw new RelayError(403, `分组 ${token.group} 已被弃用`);
    group = token.group;
  }
  if (token.modelLimitsEnabled && !token.modelLimits?.has(model))
    throw new RelayError(403, `该令牌无权访问模型 ${model}`);
  return group;
}
