// Accounts (new-api-compat.md §2.1, §3.4, §9.3): creation with invite rewards, password login, self-service changes,
// the invite reward transfer and the public shape of a user row. Errors meant for the client are UserFacingError;
// handlers turn them into `{success:false, message}`.
import bcrypt from 'bcryptjs';
import type { Kysely } from 'kysely';
import type { AppContext } from '../context.js';
import type { Database, NewUser, User } from '../db/schema.js';
import { generateTokenKey, randomAlnum } from '../lib/random.js';
import { userUrlFetch } from '../lib/safe-fetch.js';
import { nowSec } from '../lib/time.js';
import { numberInput } from '../lib/input.js';
import { LOG_TYPE_SYSTEM, logQuota, recordUserLog } from './user-logs.js';
import { endUserSessions } from './sessions.js';

export class UserFacingError extends Error {}

export const ROOT_INITIAL_QUOTA = 100_000_000;
export const USERNAME_MAX = 12;
export const DISPLAY_NAME_MAX = 20;
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 20;
export const EMAIL_MAX = 50;
const BCRYPT_COST = 10;

/** The one answer for every failed password login, so nobody learns whether an account exists. */
export const LOGIN_FAILED_MESSAGE = '用户名或密码错误，或用户已被封禁';
export const USER_EXISTS_MESSAGE = '用户名已存在，或已注销';

export function hashPassword(password: string): Promise<string> {
  return bcrypt.hash(password, BCRYPT_COST);
}

/** Accepts new-api's Go bcrypt hashes ($2a$) as well as ours. */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  if (!hash) return false;
  try {
    return await bcrypt.compare(password, hash);
  } catch {
    return false;
  }
}

// A fixed hash to compare against when the account does not exist, so both failures take the same time.
let dummyHash: Promise<string> | undefined;
function timingDummy(): Promise<string> {
  dummyHash ??= bcrypt.hash(randomAlnum(16), BCRYPT_COST);
  return dummyHash;
}

/** Length rules of new-api's struct validator; returns an error message or null. */
export function validateUserFields(f: {
  username?: string;
  password?: string;
  display_name?: string;
  email?: string;
}): string | null {
  if (f.username !== undefined && [...f.username].length > USERNAME_MAX)
    return `输入不合法 用户名长度不能超过 ${USERNAME_MAX} 个字符`;
  if (f.password !== undefined && f.password !== '') {
    const n = [...f.password].length;
    if (n < PASSWORD_MIN) return `输入不合法 密码长度不得小于 ${PASSWORD_MIN} 位`;
    if (n > PASSWORD_MAX) return `输入不合法 密码长度不得大于 ${PASSWORD_MAX} 位`;
  }
  if (f.display_name !== undefined && [...f.display_name].length > DISPLAY_NAME_MAX)
    return `输入不合法 显示名称长度不能超过 ${DISPLAY_NAME_MAX} 个字符`;
  if (f.email !== undefined && f.email.length > EMAIL_MAX) return `输入不合法 邮箱长度不能超过 ${EMAIL_MAX} 个字符`;
  return null;
}

export function isValidEmail(email: string): boolean {
  return /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) && email.length <= EMAIL_MAX;
}

/** The caller's own user row as the console receives it: new-api's JSON names, never the password hash. */
export function publicUser(u: User): Record<string, unknown> {
  const { password: _pw, aff_history, deleted_at, access_token, ...rest } = u;
  let deleted: string | null = null;
  if (deleted_at) deleted = deleted_at instanceof Date ? deleted_at.toISOString() : String(deleted_at);
  return {
    ...rest,
    access_token: access_token ? access_token.trim() : access_token,
    aff_history_quota: aff_history,
    DeletedAt: deleted,
  };
}

/**
 * A user row as an admin's user list and user form receive it: only the fields that page shows. Never the access
 * token, the password hash or the settings (a webhook secret): an admin reading root's token could act as root.
 */
export function adminUserView(u: User): Record<string, unknown> {
  const p = publicUser(u);
  const out: Record<string, unknown> = {};
  for (const key of ADMIN_USER_FIELDS) out[key] = p[key];
  return out;
}

const ADMIN_USER_FIELDS = [
  'id',
  'username',
  'display_name',
  'role',
  'status',
  'email',
  'group',
  'quota',
  'used_quota',
  'request_count',
  'aff_count',
  'aff_history_quota',
  'inviter_id',
  'github_id',
  'oidc_id',
  'wechat_id',
  'telegram_id',
  'linux_do_id',
  'DeletedAt',
] as const;

async function insertReturningId(ctx: AppContext, db: Kysely<Database>, values: NewUser): Promise<number> {
  if (ctx.dbKind === 'postgres') {
    const row = await db.insertInto('users').values(values).returning('id').executeTakeFirstOrThrow();
    return Number(row.id);
  }
  const res = await db.insertInto('users').values(values).executeTakeFirstOrThrow();
  return Number(res.insertId);
}

/** A free 4-char invite code (62^4 combinations; a clash is retried). */
export async function newAffCode(db: Kysely<Database>): Promise<string> {
  for (let i = 0; i < 10; i++) {
    const code = randomAlnum(4);
    const taken = await db.selectFrom('users').select('id').where('aff_code', '=', code).executeTakeFirst();
    if (!taken) return code;
  }
  return randomAlnum(8);
}

/** Username or email already used, soft-deleted rows included (new-api-compat.md §9.5). */
export async function userExistsOrDeleted(db: Kysely<Database>, username: string, email = ''): Promise<boolean> {
  let q = db.selectFrom('users').select('id');
  q = email
    ? q.where((eb) => eb.or([eb('username', '=', username), eb('email', '=', email)]))
    : q.where('username', '=', username);
  return !!(await q.executeTakeFirst());
}

export interface CreateUserInput {
  username: string;
  password: string;
  display_name?: string;
  role?: number;
  quota?: number;
  email?: string;
  inviter_id?: number;
}

/** Inserts a user with a hashed password and a fresh invite code; returns the id. */
export async function insertUser(
  ctx: AppContext,
  input: CreateUserInput,
  db: Kysely<Database> = ctx.db,
): Promise<number> {
  const values: NewUser = {
    username: input.username,
    password: await hashPassword(input.password),
    display_name: input.display_name || input.username,
    role: input.role ?? 1,
    status: 1,
    quota: input.quota ?? 0,
    email: input.email ?? '',
    inviter_id: input.inviter_id ?? 0,
    aff_code: await newAffCode(db),
    access_token: null,
    setting: '',
  };
  try {
    const id = await insertReturningId(ctx, db, values);
    ctx.changes.publish({ kind: 'user', id });
    return id;
  } catch (err) {
    if (await userExistsOrDeleted(db, input.username)) throw new UserFacingError(USER_EXISTS_MESSAGE);
    throw err;
  }
}

export interface RegisterInput {
  username: string;
  password: string;
  email?: string;
  affCode?: string;
}

/**
 * Registration: QuotaForNewUser (plus QuotaForInvitee when invited) goes to the new user in the insert itself; the
 * inviter's counters move in one atomic UPDATE (new-api reads, adds and saves the whole row, which loses concurrent
 * updates). Each gift gets a system log, with new-api's texts.
 */
/** QuotaForNewUser: what every new account starts with, registered or created by an admin. */
export function newUserQuota(ctx: AppContext): number {
  return Math.max(0, Math.trunc(ctx.options.num('QuotaForNewUser')));
}

/** The system log line of that gift (new-api's text). */
export function newUserGiftText(ctx: AppContext, quota: number): string {
  return `新用户注册赠送 ${logQuota(ctx, quota)}`;
}

export async function registerUser(ctx: AppContext, input: RegisterInput): Promise<number> {
  const o = ctx.options;
  const quotaForNewUser = newUserQuota(ctx);
  const quotaForInvitee = Math.max(0, Math.trunc(o.num('QuotaForInvitee')));
  const quotaForInviter = Math.max(0, Math.trunc(o.num('QuotaForInviter')));
  let inviterId = 0;
  if (input.affCode) {
    const inviter = await ctx.db
      .selectFrom('users')
      .select('id')
      .where('aff_code', '=', input.affCode)
      .where('deleted_at', 'is', null)
      .executeTakeFirst();
    inviterId = inviter?.id ?? 0;
  }
  const inviteeGift = inviterId ? quotaForInvitee : 0;
  const id = await insertUser(ctx, {
    username: input.username,
    password: input.password,
    display_name: input.username,
    email: input.email,
    inviter_id: inviterId,
    quota: quotaForNewUser + inviteeGift,
  });
  if (quotaForNewUser > 0) await recordUserLog(ctx, id, LOG_TYPE_SYSTEM, newUserGiftText(ctx, quotaForNewUser));
  if (inviterId) {
    if (inviteeGift > 0) await recordUserLog(ctx, id, LOG_TYPE_SYSTEM, `使用邀请码赠送 ${logQuota(ctx, inviteeGift)}`);
    await ctx.db
      .updateTable('users')
      .set((eb) => ({
        aff_count: eb('aff_count', '+', 1),
        aff_quota: eb('aff_quota', '+', quotaForInviter),
        aff_history: eb('aff_history', '+', quotaForInviter),
      }))
      .where('id', '=', inviterId)
      .execute();
    ctx.changes.publish({ kind: 'user', id: inviterId });
    if (quotaForInviter > 0)
      await recordUserLog(ctx, inviterId, LOG_TYPE_SYSTEM, `邀请用户赠送 ${logQuota(ctx, quotaForInviter)}`);
  }
  if (ctx.config.generateDefaultToken) await createDefaultToken(ctx, id, input.username);
  return id;
}

/** GENERATE_DEFAULT_TOKEN: an unlimited, never-expiring token named "<username>的初始令牌" (as new-api). */
export async function createDefaultToken(ctx: AppContext, userId: number, username: string): Promise<void> {
  const now = nowSec();
  await ctx.db
    .insertInto('tokens')
    .values({
      user_id: userId,
      name: `${username}的初始令牌`,
      key: generateTokenKey(),
      created_time: now,
      accessed_time: now,
      expired_time: -1,
      remain_quota: 500000,
      unlimited_quota: true,
      model_limits_enabled: false,
    })
    .execute();
  ctx.changes.publish({ kind: 'token', userId });
}

/** Password login by username, or by email when no username matches. Throws the single failure message. */
export async function authenticatePassword(ctx: AppContext, login: string, password: string): Promise<User> {
  const name = login.trim();
  let user = await ctx.db
    .selectFrom('users')
    .selectAll()
    .where('username', '=', name)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  if (!user && name.includes('@')) {
    user = await ctx.db
      .selectFrom('users')
      .selectAll()
      .where('email', '=', name)
      .where('deleted_at', 'is', null)
      .orderBy('id')
      .executeTakeFirst();
  }
  const ok = await verifyPassword(password, user ? user.password : await timingDummy());
  if (!user || !ok || Number(user.status) !== 1) throw new UserFacingError(LOGIN_FAILED_MESSAGE);
  return user;
}

/** Adds `quota` to a live (not deleted) user's balance, inside the caller's transaction; false when there is none. */
export async function creditLiveUser(trx: Kysely<Database>, userId: number, quota: number): Promise<boolean> {
  const credit = await trx
    .updateTable('users')
    .set((eb) => ({ quota: eb('quota', '+', quota) }))
    .where('id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return Number(credit.numUpdatedRows) === 1;
}

export async function getUser(
  ctx: AppContext,
  id: number,
  opts: { includeDeleted?: boolean } = {},
): Promise<User | undefined> {
  let q = ctx.db.selectFrom('users').selectAll().where('id', '=', id);
  if (!opts.includeDeleted) q = q.where('deleted_at', 'is', null);
  return q.executeTakeFirst();
}

/** Soft delete (sets deleted_at); the row stays so the name and email remain taken. */
export async function softDeleteUser(ctx: AppContext, id: number): Promise<void> {
  await ctx.db.updateTable('users').set({ deleted_at: new Date() }).where('id', '=', id).execute();
  await endUserSessions(ctx, id);
  ctx.changes.publish({ kind: 'user', id });
  ctx.changes.publish({ kind: 'token', userId: id });
}

/**
 * Self-service profile change; empty fields are left alone (new-api's Updates semantics). A new password ends every
 * session of the user; returns whether it did.
 */
export async function updateSelf(
  ctx: AppContext,
  id: number,
  input: { username?: string; display_name?: string; password?: string; original_password?: string },
): Promise<{ passwordChanged: boolean }> {
  const patch: { username?: string; display_name?: string; password?: string } = {};
  if (input.username) patch.username = input.username.trim();
  if (input.display_name) patch.display_name = input.display_name;
  if (input.password) {
    // The current password is always required, so a stolen session or access token cannot take the account over.
    if (!input.original_password) throw new UserFacingError('请输入原密码');
    const current = await getUser(ctx, id);
    if (!current || !(await verifyPassword(input.original_password, current.password)))
      throw new UserFacingError('原密码错误');
    patch.password = await hashPassword(input.password);
  }
  if (!Object.keys(patch).length) return { passwordChanged: false };
  if (patch.username) {
    const other = await ctx.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', patch.username)
      .where('id', '!=', id)
      .executeTakeFirst();
    if (other) throw new UserFacingError(USER_EXISTS_MESSAGE);
  }
  await ctx.db.updateTable('users').set(patch).where('id', '=', id).execute();
  ctx.changes.publish({ kind: 'user', id });
  if (patch.password) await endUserSessions(ctx, id);
  return { passwordChanged: !!patch.password };
}

/** A new console access token (exactly 32 chars, so a char(32) column never pads it). */
export async function regenerateAccessToken(ctx: AppContext, id: number): Promise<string> {
  for (let i = 0; i < 5; i++) {
    const token = randomAlnum(32);
    const taken = await ctx.db.selectFrom('users').select('id').where('access_token', '=', token).executeTakeFirst();
    if (taken) continue;
    await ctx.db.updateTable('users').set({ access_token: token }).where('id', '=', id).execute();
    ctx.changes.publish({ kind: 'user', id });
    return token;
  }
  throw new UserFacingError('请重试，系统生成的 UUID 竟然重复了！');
}

/** The caller's invite code, created on first use for users that predate codes. */
export async function ensureAffCode(ctx: AppContext, id: number): Promise<string> {
  const user = await getUser(ctx, id);
  if (!user) throw new UserFacingError('用户不存在');
  if (user.aff_code) return user.aff_code;
  const code = await newAffCode(ctx.db);
  await ctx.db
    .updateTable('users')
    .set({ aff_code: code })
    .where('id', '=', id)
    .where('aff_code', 'is', null)
    .execute();
  ctx.changes.publish({ kind: 'user', id });
  return (await getUser(ctx, id))?.aff_code ?? code;
}

/**
 * Moves invite rewards into spendable quota: one conditional UPDATE, so two concurrent transfers can never spend the
 * same aff_quota twice (the WHERE re-checks the balance inside the write).
 */
export async function transferAffQuota(ctx: AppContext, id: number, quota: number): Promise<void> {
  const perUnit = ctx.options.num('QuotaPerUnit', 500000);
  if (!Number.isInteger(quota) || quota < perUnit)
    throw new UserFacingError(`划转失败 转移额度最小为${logQuota(ctx, perUnit)}！`);
  const res = await ctx.db
    .updateTable('users')
    .set((eb) => ({ aff_quota: eb('aff_quota', '-', quota), quota: eb('quota', '+', quota) }))
    .where('id', '=', id)
    .where('aff_quota', '>=', quota)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1) throw new UserFacingError('划转失败 邀请额度不足！');
  ctx.changes.publish({ kind: 'user', id });
}

export interface UserSetting {
  notify_type?: string;
  quota_warning_threshold?: number;
  webhook_url?: string;
  webhook_secret?: string;
  notification_email?: string;
  accept_unset_model_ratio_model?: boolean;
  /** the subscription billing preference (services/subscriptions/self.ts), not edited here */
  billing_preference?: unknown;
}

/** The billing_preference stored in a users.setting JSON, undefined when none or unreadable. */
function billingPreferenceIn(raw: string | null | undefined): unknown {
  try {
    const v: unknown = JSON.parse(raw || '{}');
    return v && typeof v === 'object' ? (v as Record<string, unknown>).billing_preference : undefined;
  } catch {
    return undefined;
  }
}

/** Validates and stores the notification settings as JSON in users.setting. */
export async function updateUserSetting(ctx: AppContext, id: number, input: Record<string, unknown>): Promise<void> {
  const notifyType = typeof input.notify_type === 'string' && input.notify_type ? input.notify_type : 'email';
  if (notifyType !== 'email' && notifyType !== 'webhook') throw new UserFacingError('无效的通知类型');
  const threshold = numberInput(input.quota_warning_threshold);
  if (threshold === null || threshold <= 0) throw new UserFacingError('预警阈值必须大于0');
  const setting: UserSetting = { notify_type: notifyType, quota_warning_threshold: threshold };
  if (notifyType === 'webhook') {
    const url = typeof input.webhook_url === 'string' ? input.webhook_url.trim() : '';
    if (!url) throw new UserFacingError('Webhook地址不能为空');
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new UserFacingError('无效的Webhook地址');
    }
    if (parsed.protocol !== 'https:') throw new UserFacingError('Webhook地址必须以https://开头');
    // a name that does not resolve now is kept: the address is checked again at every delivery
    if ((await userUrlFetch(ctx).check(url)) === 'forbidden')
      throw new UserFacingError('Webhook地址不能指向本机、内网或保留地址');
    setting.webhook_url = url;
    if (typeof input.webhook_secret === 'string' && input.webhook_secret) setting.webhook_secret = input.webhook_secret;
  }
  if (notifyType === 'email') {
    const email = typeof input.notification_email === 'string' ? input.notification_email.trim() : '';
    if (email && !isValidEmail(email)) throw new UserFacingError('无效的邮箱地址');
    if (email) setting.notification_email = email;
  }
  setting.accept_unset_model_ratio_model =
    input.accept_unset_model_ratio_model === true || input.accept_unset_model_ratio_model === 'true';
  // the subscription billing preference lives in the same JSON (services/subscriptions/self.ts): kept as it was
  const stored = await ctx.db.selectFrom('users').select('setting').where('id', '=', id).executeTakeFirst();
  const preference = billingPreferenceIn(stored?.setting);
  if (preference !== undefined) setting.billing_preference = preference;
  await ctx.db
    .updateTable('users')
    .set({ setting: JSON.stringify(setting) })
    .where('id', '=', id)
    .execute();
  ctx.changes.publish({ kind: 'user', id });
}

/** Resets a forgotten password to a random 12-char one (returned to the caller, as new-api does); ends the sessions. */
export async function resetPasswordByEmail(ctx: AppContext, email: string): Promise<string> {
  const password = randomAlnum(12);
  const hash = await hashPassword(password);
  const users = await ctx.db
    .selectFrom('users')
    .select('id')
    .where('email', '=', email)
    .where('deleted_at', 'is', null)
    .execute();
  await ctx.db
    .updateTable('users')
    .set({ password: hash })
    .where('email', '=', email)
    .where('deleted_at', 'is', null)
    .execute();
  for (const u of users) {
    ctx.changes.publish({ kind: 'user', id: u.id });
    await endUserSessions(ctx, u.id);
  }
  return password;
}

export async function emailRegistered(ctx: AppContext, email: string, includeDeleted = false): Promise<boolean> {
  let q = ctx.db.selectFrom('users').select('id').where('email', '=', email);
  if (!includeDeleted) q = q.where('deleted_at', 'is', null);
  return !!(await q.executeTakeFirst());
}

/** Used by setup: whether a (not deleted) root account exists. */
export async function rootUserExists(db: Kysely<Database>): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('role', '=', 100)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return !!row;
}
