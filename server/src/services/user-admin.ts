// User administration (new-api-compat.md §3.4 AdminAuth routes). The role rules are enforced here, not only in the UI:
// an admin never sees or changes a peer or a superior, only root promotes, root is never disabled, deleted or demoted,
// and nobody hands out a role at or above their own.
import type { Expression, SqlBool } from 'kysely';
import type { AppContext } from '../context.js';
import type { User } from '../db/schema.js';
import { ROLE_ADMIN, ROLE_COMMON, ROLE_ROOT, USER_STATUS_DISABLED, USER_STATUS_ENABLED } from './console-auth.js';
import { LOG_TYPE_MANAGE, LOG_TYPE_SYSTEM, logQuota, recordUserLog } from './user-logs.js';
import { endUserSessions } from './sessions.js';
import { deleteTwoFactor } from './two-factor.js';
import { likeContains } from '../db/like.js';
import { intInput } from '../lib/input.js';
import {
  UserFacingError,
  USER_EXISTS_MESSAGE,
  getUser,
  hashPassword,
  insertUser,
  newUserGiftText,
  newUserQuota,
  adminUserView,
  softDeleteUser,
  userExistsOrDeleted,
  validateUserFields,
} from './users.js';

export const DEFAULT_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 100;

export interface Page {
  items: Record<string, unknown>[];
  total: number;
  page: number;
  page_size: number;
}

/** 1-based `p`, `page_size` defaulting to 10 (new-api-compat.md §3.5). */
export function pageParams(q: { p?: unknown; page_size?: unknown }): { page: number; pageSize: number } {
  let page = Number.parseInt(String(q.p ?? ''), 10);
  if (!Number.isFinite(page) || page < 1) page = 1;
  let pageSize = Number.parseInt(String(q.page_size ?? ''), 10);
  if (!Number.isFinite(pageSize) || pageSize < 1) pageSize = DEFAULT_PAGE_SIZE;
  if (pageSize > MAX_PAGE_SIZE) pageSize = MAX_PAGE_SIZE;
  return { page, pageSize };
}

/**
 * Lists or searches users, soft-deleted ones included (the console shows them as 已注销). A numeric keyword matches
 * the id as well as names (new-api matches only the id then, so a user named "2024" could not be found).
 */
export async function searchUsers(
  ctx: AppContext,
  opts: { keyword?: string; group?: string; page: number; pageSize: number },
): Promise<Page> {
  let q = ctx.db.selectFrom('users');
  const keyword = opts.keyword?.trim() ?? '';
  if (keyword) {
    const asId = /^\d+$/.test(keyword) ? Number(keyword) : null;
    q = q.where((eb) => {
      // the keyword's `%` and `_` match themselves (new-api let them match anything)
      const ors: Expression<SqlBool>[] = [
        likeContains('username', keyword),
        likeContains('email', keyword),
        likeContains('display_name', keyword),
      ];
      if (asId !== null && Number.isSafeInteger(asId)) ors.push(eb('id', '=', asId));
      return eb.or(ors);
    });
  }
  if (opts.group) q = q.where('group', '=', opts.group);
  const countRow = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst();
  const rows = await q
    .selectAll()
    .orderBy('id', 'desc')
    .limit(opts.pageSize)
    .offset((opts.page - 1) * opts.pageSize)
    .execute();
  return { items: rows.map(adminUserView), total: Number(countRow?.n ?? 0), page: opts.page, page_size: opts.pageSize };
}

/** Loads a target user and checks that the caller outranks it (root may act on anyone, as in new-api). */
export async function targetFor(
  ctx: AppContext,
  callerRole: number,
  id: number,
  refusal: string,
  includeDeleted = false,
): Promise<User> {
  if (!Number.isSafeInteger(id) || id <= 0) throw new UserFacingError('无效的参数');
  const user = await getUser(ctx, id, { includeDeleted });
  if (!user) throw new UserFacingError('用户不存在');
  if (callerRole <= user.role && callerRole !== ROLE_ROOT) throw new UserFacingError(refusal);
  return user;
}

export async function adminGetUser(ctx: AppContext, callerRole: number, id: number): Promise<Record<string, unknown>> {
  const user = await targetFor(ctx, callerRole, id, '无权获取同级或更高等级用户的信息', true);
  return adminUserView(user);
}

export interface AdminCreateInput {
  username?: unknown;
  password?: unknown;
  display_name?: unknown;
  role?: unknown;
}

export async function adminCreateUser(ctx: AppContext, callerRole: number, body: AdminCreateInput): Promise<number> {
  const username = typeof body.username === 'string' ? body.username.trim() : '';
  const password = typeof body.password === 'string' ? body.password : '';
  if (!username || !password) throw new UserFacingError('用户名和密码不能为空！');
  const displayName = typeof body.display_name === 'string' ? body.display_name : '';
  const invalid = validateUserFields({ username, password, display_name: displayName });
  if (invalid) throw new UserFacingError(invalid);
  const role = body.role === undefined || body.role === null || body.role === '' ? ROLE_COMMON : intInput(body.role);
  if (role === null) throw new UserFacingError('无效的参数');
  if (role >= callerRole) throw new UserFacingError('无法创建权限大于等于自己的用户');
  if (role !== ROLE_COMMON && role !== ROLE_ADMIN) throw new UserFacingError('无效的参数');
  if (await userExistsOrDeleted(ctx.db, username)) throw new UserFacingError(USER_EXISTS_MESSAGE);
  // as new-api (its User.Insert serves both): a user an admin creates gets the new users' quota too, with its log
  const quota = newUserQuota(ctx);
  const id = await insertUser(ctx, { username, password, display_name: displayName || username, role, quota });
  if (quota > 0) await recordUserLog(ctx, id, LOG_TYPE_SYSTEM, newUserGiftText(ctx, quota));
  return id;
}

export interface AdminUpdateInput {
  id?: unknown;
  username?: unknown;
  display_name?: unknown;
  group?: unknown;
  quota?: unknown;
  password?: unknown;
  role?: unknown;
}

/**
 * Edits username / display name / group / quota / password. Fields left out keep their value (new-api writes all four,
 * so a partial form zeroes the quota). A quota edit is applied as a delta so spending that happens between the form
 * load and the save is not undone, and it writes a manage log.
 */
export async function adminUpdateUser(ctx: AppContext, callerRole: number, body: AdminUpdateInput): Promise<void> {
  const id = intInput(body.id);
  if (id === null || id <= 0) throw new UserFacingError('无效的参数');
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const username = str(body.username)?.trim();
  const displayName = str(body.display_name);
  const group = str(body.group)?.trim();
  const password = str(body.password);
  const invalid = validateUserFields({ username, display_name: displayName, password });
  if (invalid) throw new UserFacingError(invalid);
  const origin = await targetFor(ctx, callerRole, id, '无权更新同权限等级或更高权限等级的用户信息');
  if (
    body.role !== undefined &&
    body.role !== null &&
    body.role !== '' &&
    (intInput(body.role) ?? Infinity) >= callerRole &&
    callerRole !== ROLE_ROOT
  ) {
    throw new UserFacingError('无权将其他用户权限等级提升到大于等于自己的权限等级');
  }
  let quota: number | undefined;
  if (body.quota !== undefined && body.quota !== null && body.quota !== '') {
    // a number, or a decimal string as new-api's console sends the form's value; not "0x10" or "1e3"
    const n = intInput(body.quota);
    if (n === null) throw new UserFacingError('额度必须是整数');
    quota = n;
    if (quota < 0) throw new UserFacingError('额度不能为负数');
  }
  if (group !== undefined && (group === '' || group.length > 64)) throw new UserFacingError('无效的分组');
  const patch: { username?: string; display_name?: string; group?: string; password?: string } = {};
  if (username) patch.username = username;
  if (displayName !== undefined) patch.display_name = displayName || patch.username || origin.username;
  if (group !== undefined) patch.group = group;
  if (password) patch.password = await hashPassword(password);
  if (patch.username && patch.username !== origin.username) {
    const other = await ctx.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', patch.username)
      .where('id', '!=', id)
      .executeTakeFirst();
    if (other) throw new UserFacingError(USER_EXISTS_MESSAGE);
  }
  const delta = quota === undefined ? 0 : quota - origin.quota;
  if (!Object.keys(patch).length && delta === 0) return;
  await ctx.db
    .updateTable('users')
    .set((eb) => (delta !== 0 ? { ...patch, quota: eb('quota', '+', delta) } : patch))
    .where('id', '=', id)
    .execute();
  // settled: a ban or role change is seen by every node's next request, not a cached copy from before
  await ctx.changes.publishSettled({ kind: 'user', id });
  if (patch.password) await endUserSessions(ctx, id);
  if (delta !== 0) {
    await recordUserLog(
      ctx,
      id,
      LOG_TYPE_MANAGE,
      `管理员将用户额度从 ${logQuota(ctx, origin.quota)}修改为 ${logQuota(ctx, quota!)}`,
    );
  }
}

export type ManageAction = 'disable' | 'enable' | 'delete' | 'promote' | 'demote';

export async function manageUser(
  ctx: AppContext,
  callerRole: number,
  id: number,
  action: string,
): Promise<{ role: number; status: number }> {
  const user = await targetFor(ctx, callerRole, id, '无权更新同权限等级或更高权限等级的用户信息', true);
  if (user.deleted_at) throw new UserFacingError('用户已注销');
  let { role, status } = user;
  switch (action) {
    case 'disable':
      if (user.role === ROLE_ROOT) throw new UserFacingError('无法禁用超级管理员用户');
      status = USER_STATUS_DISABLED;
      break;
    case 'enable':
      status = USER_STATUS_ENABLED;
      break;
    case 'delete':
      if (user.role === ROLE_ROOT) throw new UserFacingError('无法删除超级管理员用户');
      await softDeleteUser(ctx, id);
      return { role, status };
    case 'promote':
      if (callerRole !== ROLE_ROOT) throw new UserFacingError('普通管理员用户无法提升其他用户为管理员');
      if (user.role >= ROLE_ADMIN) throw new UserFacingError('该用户已经是管理员');
      role = ROLE_ADMIN;
      break;
    case 'demote':
      if (user.role === ROLE_ROOT) throw new UserFacingError('无法降级超级管理员用户');
      if (user.role === ROLE_COMMON) throw new UserFacingError('该用户已经是普通用户');
      role = ROLE_COMMON;
      break;
    default:
      throw new UserFacingError('无效的参数');
  }
  await ctx.db.updateTable('users').set({ role, status }).where('id', '=', id).execute();
  // settled: a ban or role change is seen by every node's next request, not a cached copy from before
  await ctx.changes.publishSettled({ kind: 'user', id });
  // a ban or a role change ends the user's sessions: whoever holds one logs in again under the new rules
  if (role !== user.role || status === USER_STATUS_DISABLED) await endUserSessions(ctx, id);
  return { role, status };
}

/** Hard delete (new-api's DELETE /api/user/:id); even root cannot remove a peer this way. */
export async function hardDeleteUser(ctx: AppContext, callerRole: number, id: number): Promise<void> {
  if (!Number.isSafeInteger(id) || id <= 0) throw new UserFacingError('无效的参数');
  const user = await getUser(ctx, id, { includeDeleted: true });
  if (!user) throw new UserFacingError('用户不存在');
  if (callerRole <= user.role) throw new UserFacingError('无权删除同权限等级或更高权限等级的用户');
  await ctx.db.deleteFrom('users').where('id', '=', id).execute();
  await deleteTwoFactor(ctx, id);
  await endUserSessions(ctx, id);
  // settled: a ban or role change is seen by every node's next request, not a cached copy from before
  await ctx.changes.publishSettled({ kind: 'user', id });
  ctx.changes.publish({ kind: 'token', userId: id });
}
