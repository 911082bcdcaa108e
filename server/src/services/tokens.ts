// API tokens as their owner manages them (new-api-compat.md §2.2, §3.4; spec §4 token states, §5 Token form).
// Every query is scoped to the caller's user id; after each write a `token` change is announced so the relay's
// token cache drops its copy.
import type { Kysely } from 'kysely';
import { isIpEntry } from '../lib/ip-match.js';
import type { AppContext } from '../context.js';
import type { Database, Token } from '../db/schema.js';
import { generateTokenKey } from '../lib/random.js';
import { nowSec } from '../lib/time.js';
import { splitCommaList } from './abilities.js';
import { likeContains, likePrefix } from '../db/like.js';
import { intInput } from '../lib/input.js';
import { isUsableGroup } from './groups.js';
import {
  isEmpty as noLimits,
  LimitInputError,
  parseSettingsInput,
  usageLimits,
  writeLimitSettings,
  type LimitSettings,
} from './limits/index.js';

export class TokenInputError extends Error {}

export const TOKEN_STATUS_ENABLED = 1;
export const TOKEN_STATUS_DISABLED = 2;
export const TOKEN_STATUS_EXPIRED = 3;
export const TOKEN_STATUS_EXHAUSTED = 4;

export const TOKEN_NAME_MAX = 30;

export type PublicToken = Omit<Token, 'deleted_at' | 'unlimited_quota' | 'model_limits_enabled'> & {
  unlimited_quota: boolean;
  model_limits_enabled: boolean;
};

/** SQLite and MySQL hand booleans back as 0/1; the wire carries true/false as new-api does. */
function view<T extends { unlimited_quota: boolean | number; model_limits_enabled: boolean | number }>(row: T) {
  return { ...row, unlimited_quota: !!row.unlimited_quota, model_limits_enabled: !!row.model_limits_enabled };
}

type Body = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------------------
// allow_ips: one IP or CIDR range per line

/** Validates and normalises allow_ips (newline list; a list value is accepted too). Throws on a bad entry. */
export function normalizeAllowIps(value: unknown): string {
  const text = Array.isArray(value) ? value.map(String).join('\n') : typeof value === 'string' ? value : '';
  const entries = text
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
  for (const e of entries) {
    if (!isIpEntry(e)) throw new TokenInputError(`IP 白名单格式错误：${e}（每行一个 IP 地址或 CIDR 网段）`);
  }
  return [...new Set(entries)].join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// field parsing

function bool(v: unknown, field: string): boolean {
  if (typeof v === 'boolean') return v;
  if (v === 1 || v === '1' || v === 'true') return true;
  if (v === 0 || v === '0' || v === 'false') return false;
  throw new TokenInputError(`${field} 必须是布尔值`);
}

const int = (v: unknown) => intInput(v);

function tokenName(v: unknown): string {
  const name = typeof v === 'string' ? v.trim() : '';
  if (!name) throw new TokenInputError('令牌名称不能为空');
  if ([...name].length > TOKEN_NAME_MAX) throw new TokenInputError('令牌名称过长');
  return name;
}

/** model_limits: new-api's comma-separated string, or a list of names (stored joined by commas) */
function modelLimitsText(v: unknown): string {
  if (v === null) return '';
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((m) => typeof m === 'string')) return v.join(',');
  throw new TokenInputError('model_limits 必须是字符串或字符串列表');
}

type TokenFields = Partial<
  Pick<Token, 'name' | 'expired_time' | 'remain_quota' | 'model_limits' | 'allow_ips' | 'group'>
> & {
  unlimited_quota?: boolean;
  model_limits_enabled?: boolean;
};

function tokenFields(ctx: AppContext, userGroup: string, body: Body): TokenFields {
  const out: TokenFields = {};
  const has = (k: string) => body[k] !== undefined && body[k] !== null;
  if (body.name !== undefined) out.name = tokenName(body.name);
  if (has('expired_time')) {
    const n = int(body.expired_time);
    if (n === null || (n !== -1 && n <= 0)) throw new TokenInputError('过期时间格式错误！');
    out.expired_time = n;
  }
  if (has('remain_quota')) {
    const n = int(body.remain_quota);
    if (n === null || n < 0) throw new TokenInputError('额度必须是非负整数');
    out.remain_quota = n;
  }
  if (has('unlimited_quota')) out.unlimited_quota = bool(body.unlimited_quota, 'unlimited_quota');
  if (has('model_limits_enabled')) out.model_limits_enabled = bool(body.model_limits_enabled, 'model_limits_enabled');
  if (body.model_limits !== undefined) {
    out.model_limits = splitCommaList(modelLimitsText(body.model_limits)).join(',');
  }
  if (body.allow_ips !== undefined) out.allow_ips = body.allow_ips === null ? '' : normalizeAllowIps(body.allow_ips);
  if (body.group !== undefined) {
    const group = body.group === null ? '' : String(body.group).trim();
    if (group && !isUsableGroup(ctx, userGroup, group)) throw new TokenInputError('无权使用指定的分组');
    out.group = group;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------
// reads

function own(db: Kysely<Database>, userId: number) {
  return db
    .selectFrom('tokens')
    .select([
      'id',
      'user_id',
      'key',
      'status',
      'name',
      'created_time',
      'accessed_time',
      'expired_time',
      'remain_quota',
      'unlimited_quota',
      'model_limits_enabled',
      'model_limits',
      'allow_ips',
      'used_quota',
      'group',
    ])
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null);
}

export async function listTokens(
  db: Kysely<Database>,
  userId: number,
  page: number,
  size: number,
): Promise<PublicToken[]> {
  const rows = await own(db, userId)
    .orderBy('id', 'desc')
    .limit(size)
    .offset(page * size)
    .execute();
  return rows.map(view);
}

/** GET /api/token/search: name contains the keyword, key starts with the token (an `sk-` prefix is ignored). */
export async function searchTokens(
  db: Kysely<Database>,
  userId: number,
  keyword: string,
  token: string,
): Promise<PublicToken[]> {
  let q = own(db, userId);
  const kw = keyword.trim();
  if (kw) q = q.where(likeContains('name', kw));
  const key = token.trim().replace(/^sk-/, '');
  if (key) q = q.where(likePrefix('key', key));
  return (await q.orderBy('id', 'desc').limit(1000).execute()).map(view);
}

export async function getToken(db: Kysely<Database>, userId: number, id: number): Promise<PublicToken | undefined> {
  const row = await own(db, userId).where('id', '=', id).executeTakeFirst();
  return row && view(row);
}

// ---------------------------------------------------------------------------------------------------------
// writes

/** Answered once every node's next request sees the change (the shared Redis entry is gone): disabled is refused at once. */
function announce(ctx: AppContext, t: { id: number; key: string; user_id: number }): Promise<void> {
  return ctx.changes.publishSettled({ kind: 'token', id: t.id, key: t.key, userId: t.user_id });
}

export async function createToken(
  ctx: AppContext,
  user: { id: number; group: string },
  body: Body,
): Promise<PublicToken> {
  if (body.name === undefined) throw new TokenInputError('令牌名称不能为空');
  const fields = tokenFields(ctx, user.group, body);
  const limits = createLimits(body.usage_limits);
  const now = nowSec();
  const values = {
    user_id: user.id,
    key: generateTokenKey(),
    status: TOKEN_STATUS_ENABLED,
    name: fields.name!,
    created_time: now,
    accessed_time: now,
    expired_time: fields.expired_time ?? -1,
    remain_quota: fields.remain_quota ?? 0,
    unlimited_quota: fields.unlimited_quota ?? false,
    model_limits_enabled: fields.model_limits_enabled ?? false,
    model_limits: fields.model_limits ?? '',
    allow_ips: fields.allow_ips ?? '',
    group: fields.group ?? '',
  };
  // the token and its limits commit together: a failure leaves neither, never a token without the limits asked for
  const row = await ctx.db.transaction().execute(async (trx) => {
    await trx.insertInto('tokens').values(values).execute();
    const created = view(await own(trx, user.id).where('key', '=', values.key).executeTakeFirstOrThrow());
    if (limits) await writeLimitSettings(trx, 'token', created.id, limits);
    return created;
  });
  if (limits) await usageLimits(ctx).changed();
  await announce(ctx, row);
  return row;
}

/**
 * `usage_limits` of POST /api/token/ (ours, beyond new-api: new-api-compat.md §13.3): {rpm, tpm, budget, period} as
 * PUT /api/token/:id/limits takes them, checked before anything is written. Absent, null or all zero: none.
 */
function createLimits(v: unknown): LimitSettings | null {
  if (v === undefined || v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v))
    throw new TokenInputError('usage_limits must be an object {rpm, tpm, budget, period, reset}');
  let settings: LimitSettings;
  try {
    settings = parseSettingsInput(v as Body);
  } catch (e) {
    if (e instanceof LimitInputError) throw new TokenInputError(`usage_limits: ${e.message}`);
    throw e;
  }
  return noLimits(settings) ? null : settings;
}

/**
 * PUT /api/token/. With status_only only the status moves (users may set 1 or 2). Re-enabling is refused while
 * the token is past its expiry, or exhausted without quota (new-api's messages). A full update writes the
 * fields present in the body; new-api copies absent ones as zero values (e.g. expired_time 0 = expired at
 * once), which we do not repeat.
 */
export async function updateToken(
  ctx: AppContext,
  user: { id: number; group: string },
  body: Body,
  statusOnly: boolean,
): Promise<PublicToken> {
  const id = int(body?.id);
  if (id === null || id <= 0) throw new TokenInputError('令牌 ID 无效');
  const current = await getToken(ctx.db, user.id, id);
  if (!current) throw new TokenInputError('令牌不存在');
  if (statusOnly) {
    const status = int(body.status);
    if (status !== TOKEN_STATUS_ENABLED && status !== TOKEN_STATUS_DISABLED)
      throw new TokenInputError('无效的令牌状态');
    if (status === TOKEN_STATUS_ENABLED) {
      if (current.expired_time !== -1 && current.expired_time <= nowSec()) {
        throw new TokenInputError('令牌已过期，无法启用，请先修改令牌过期时间，或者设置为永不过期');
      }
      if (current.status === TOKEN_STATUS_EXHAUSTED && !current.unlimited_quota && current.remain_quota <= 0) {
        throw new TokenInputError('令牌可用额度已用尽，无法启用，请先修改令牌剩余额度，或者设置为无限额度');
      }
    }
    await ctx.db.updateTable('tokens').set({ status }).where('id', '=', id).where('user_id', '=', user.id).execute();
  } else {
    const fields = tokenFields(ctx, user.group, body);
    if (Object.keys(fields).length)
      await ctx.db.updateTable('tokens').set(fields).where('id', '=', id).where('user_id', '=', user.id).execute();
  }
  const row = (await getToken(ctx.db, user.id, id))!;
  await announce(ctx, row);
  return row;
}

/** Soft delete, as new-api (deleted_at); the key stays reserved. */
export async function deleteToken(ctx: AppContext, userId: number, id: number): Promise<boolean> {
  const current = await getToken(ctx.db, userId, id);
  if (!current) return false;
  await ctx.db
    .updateTable('tokens')
    .set({ deleted_at: new Date() })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .execute();
  await announce(ctx, current);
  return true;
}
