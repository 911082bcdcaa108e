// Removing a binding (new-api-compat.md §9.4): a third-party account or the email address comes off a user. The user
// may do it only while another way to sign in remains; an admin may always do it for a user below them (new-api's
// DELETE /api/user/:id/bindings/:binding_type), since an admin can also set a password for that user.
//
// "Another way to sign in" is one of:
// - a password the user knows, while password login is on. An account signed up through a third party got a random
//   password its owner never saw; its hash is kept in `unseen_passwords` at sign-up, and while the user's hash is
//   still that one the password does not count. Any change since (a reset, an admin, the user) makes it count.
//   Accounts signed up before this table existed, here or by new-api, are not marked and count as having one.
// - the email address, while password login is on and mail can be sent: a password reset gives a usable password;
// - another bound third-party account whose login is switched on (a built-in one, or a custom provider's);
// - a passkey, while passkey login is on.
import type { AppContext } from '../../context.js';
import type { User } from '../../db/schema.js';
import { PROVIDER_COLUMNS, type ClaimProvider } from '../../db/identity-claims.js';
import { ROLE_ROOT } from '../console-auth.js';
import { loginAvailable } from '../login-methods.js';
import { UserFacingError, getUser } from '../users.js';
import { releaseClaim } from './claims.js';

export const INVALID_BINDING_TYPE = '无效的绑定类型';
export const NOT_BOUND = '该账户未绑定此登录方式';
export const LAST_SIGN_IN_WAY = '解绑后将无法登录此账户，请先设置密码或绑定其他登录方式';
export const NO_PERMISSION = '无权更新同权限等级或更高权限等级的用户信息';

export type BindingType = ClaimProvider | 'email';

/** The option switching on each third-party login (services/login-methods.ts). */
const LOGIN_OPTION: Record<ClaimProvider, string> = {
  github: 'GitHubOAuthEnabled',
  linuxdo: 'LinuxDOOAuthEnabled',
  discord: 'discord.enabled',
  oidc: 'oidc.enabled',
  wechat: 'WeChatAuthEnabled',
  telegram: 'TelegramOAuthEnabled',
};

export function bindingTypeOf(raw: string): BindingType | null {
  const type = raw.trim().toLowerCase();
  if (type === 'email' || Object.hasOwn(PROVIDER_COLUMNS, type)) return type as BindingType;
  return null;
}

const columnOf = (type: BindingType) => (type === 'email' ? 'email' : PROVIDER_COLUMNS[type]);

async function hasKnownPassword(ctx: AppContext, user: User): Promise<boolean> {
  const unseen = await ctx.db
    .selectFrom('unseen_passwords')
    .select('password_hash')
    .where('user_id', '=', user.id)
    .executeTakeFirst();
  return !unseen || unseen.password_hash !== user.password;
}

/** A binding about to come off: a built-in type, or a custom provider's (by its id). */
export type RemovedBinding = BindingType | { customProviderId: number };

/** Whether the user holds an enabled custom provider's binding other than the one being removed. */
async function otherCustomBinding(ctx: AppContext, userId: number, removing: RemovedBinding): Promise<boolean> {
  let q = ctx.db
    .selectFrom('user_oauth_bindings as b')
    .innerJoin('custom_oauth_providers as p', 'p.id', 'b.provider_id')
    .select('b.id')
    .where('b.user_id', '=', userId)
    .where('p.enabled', '=', true);
  if (typeof removing === 'object') q = q.where('b.provider_id', '!=', removing.customProviderId);
  return !!(await q.executeTakeFirst());
}

/** Whether the user can sign in with a passkey (the login is on and one is registered). */
async function hasUsablePasskey(ctx: AppContext, userId: number): Promise<boolean> {
  if (!ctx.options.bool('passkey.enabled')) return false;
  const row = await ctx.db
    .selectFrom('passkey_credentials')
    .select('id')
    .where('user_id', '=', userId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return !!row;
}

/** Whether the user could still sign in without the binding `removing`. */
export async function otherSignInWayLeft(ctx: AppContext, user: User, removing: RemovedBinding): Promise<boolean> {
  for (const [provider, column] of Object.entries(PROVIDER_COLUMNS) as [ClaimProvider, keyof User][]) {
    if (provider !== removing && user[column] && loginAvailable(ctx.options, LOGIN_OPTION[provider])) return true;
  }
  if (await otherCustomBinding(ctx, user.id, removing)) return true;
  if (await hasUsablePasskey(ctx, user.id)) return true;
  if (!ctx.options.bool('PasswordLoginEnabled')) return false;
  if (removing !== 'email' && user.email && ctx.options.get('SMTPServer')) return true;
  return hasKnownPassword(ctx, user);
}

/** Clears the column and, for a third-party account, its claim, together. */
async function clearBinding(ctx: AppContext, userId: number, type: BindingType): Promise<void> {
  await ctx.db.transaction().execute(async (trx) => {
    await trx
      .updateTable('users')
      .set({ [columnOf(type)]: '' })
      .where('id', '=', userId)
      .execute();
    if (type !== 'email') await releaseClaim(trx, type, userId);
  });
  ctx.changes.publish({ kind: 'user', id: userId });
}

/** DELETE /api/user/self/bindings/:binding_type */
export async function unbindSelf(ctx: AppContext, userId: number, rawType: string): Promise<void> {
  const type = bindingTypeOf(rawType);
  if (!type) throw new UserFacingError(INVALID_BINDING_TYPE);
  const user = await getUser(ctx, userId);
  if (!user) throw new UserFacingError('用户不存在');
  if (!user[columnOf(type)]) throw new UserFacingError(NOT_BOUND);
  if (!(await otherSignInWayLeft(ctx, user, type))) throw new UserFacingError(LAST_SIGN_IN_WAY);
  await clearBinding(ctx, userId, type);
}

/** DELETE /api/user/:id/bindings/:binding_type: an admin over a user below them (root over anyone), as new-api. */
export async function adminUnbind(ctx: AppContext, callerRole: number, id: number, rawType: string): Promise<void> {
  const type = bindingTypeOf(rawType);
  if (!type || !Number.isSafeInteger(id) || id <= 0)
    throw new UserFacingError(type ? '无效的参数' : INVALID_BINDING_TYPE);
  const user = await getUser(ctx, id, { includeDeleted: true });
  if (!user) throw new UserFacingError('用户不存在');
  if (callerRole <= user.role && callerRole !== ROLE_ROOT) throw new UserFacingError(NO_PERMISSION);
  await clearBinding(ctx, id, type);
}
