// What a provider's answer does to accounts (new-api-compat.md §9.4): a signed-in caller binds the provider account;
// otherwise the account bound to it logs in, or, with registration open, a new account is made for it.
import type { AppContext } from '../../context.js';
import type { User } from '../../db/schema.js';
import { randomAlnum } from '../../lib/random.js';
import {
  DISPLAY_NAME_MAX,
  USERNAME_MAX,
  emailRegistered,
  getUser,
  registerUser,
  userExistsOrDeleted,
} from '../users.js';
import { USER_STATUS_ENABLED } from '../console-auth.js';
// every login provider (OAuth, WeChat, Telegram, custom OAuth) goes through these functions
import { OAuthError, type AccountProvider, type BindingStore, type ProviderUser } from './provider.js';
import { bindClaimed, rememberUnseenPassword, signUpClaimed } from './claims.js';
import { PROVIDER_COLUMNS, type ClaimProvider } from '../../db/identity-claims.js';

export const REGISTRATION_CLOSED = '管理员关闭了新用户注册';
export const USER_BANNED = '用户已被封禁';
export const USER_DELETED = '用户已注销';

export const alreadyBound = (provider: AccountProvider) =>
  provider.alreadyBoundMessage ?? `该 ${provider.name} 账户已被绑定`;
export const notEnabled = (provider: AccountProvider) => `管理员未开启通过 ${provider.name} 登录以及注册`;

/** A built-in provider's binding type in identity_claims (its key names its users column). */
function claimProvider(provider: AccountProvider): ClaimProvider {
  if (!(provider.key in PROVIDER_COLUMNS) || PROVIDER_COLUMNS[provider.key as ClaimProvider] !== provider.column)
    throw new Error(`provider ${provider.key} has neither a claimable users column nor a binding store`);
  return provider.key as ClaimProvider;
}

/** The users column as a binding store, for the built-in providers; the claim decides between racing bindings. */
function columnStore(provider: AccountProvider): BindingStore {
  const claim = claimProvider(provider);
  const column = PROVIDER_COLUMNS[claim];
  return {
    boundUsers: (ctx, id) =>
      ctx.db.selectFrom('users').select(['id', 'deleted_at']).where(column, '=', id).orderBy('id').execute(),
    bind: async (ctx, userId, id) => {
      if (!(await bindClaimed(ctx, claim, id, userId))) throw new OAuthError(alreadyBound(provider));
    },
  };
}

const storeOf = (provider: AccountProvider): BindingStore => provider.bindings ?? columnStore(provider);

/** The rows bound to the provider id, soft-deleted ones included (a deleted account keeps its binding, as new-api). */
async function boundRows(ctx: AppContext, provider: AccountProvider, id: string) {
  return storeOf(provider).boundUsers(ctx, id);
}

/** The rows holding new-api's form of the account (GitHub: its login name), not yet moved to `account.id`. */
async function legacyRows(ctx: AppContext, provider: AccountProvider, account: ProviderUser) {
  if (!account.legacyId || account.legacyId === account.id) return [];
  return boundRows(ctx, provider, account.legacyId);
}

/**
 * Binds the provider account to the signed-in user; refused when any account (even a deleted one) holds it, or
 * holds new-api's form of it: that may be the same person, whose binding moves to the id at their next login.
 */
export async function bindProviderAccount(
  ctx: AppContext,
  provider: AccountProvider,
  userId: number,
  account: ProviderUser,
): Promise<void> {
  if ((await boundRows(ctx, provider, account.id)).length || (await legacyRows(ctx, provider, account)).length)
    throw new OAuthError(alreadyBound(provider));
  await storeOf(provider).bind(ctx, userId, account.id);
  ctx.changes.publish({ kind: 'user', id: userId });
}

/**
 * The user the provider account logs in as, signing one up when none is bound and registration is open. A banned
 * user is refused here; the caller starts the session.
 */
export async function loginWithProviderAccount(
  ctx: AppContext,
  provider: AccountProvider,
  account: ProviderUser,
  affCode: string,
): Promise<User> {
  let bound = await boundRows(ctx, provider, account.id);
  if (!bound.length) bound = await moveLegacyBinding(ctx, provider, account);
  let user: User | undefined;
  if (bound.length) {
    const live = bound.find((row) => !row.deleted_at);
    if (!live) throw new OAuthError(USER_DELETED);
    user = await getUser(ctx, live.id);
    if (!user) throw new OAuthError(USER_DELETED);
  } else {
    if (!ctx.options.bool('RegisterEnabled')) throw new OAuthError(REGISTRATION_CLOSED);
    user = await signUp(ctx, provider, account, affCode);
  }
  if (Number(user.status) !== USER_STATUS_ENABLED) throw new OAuthError(USER_BANNED);
  return user;
}

/**
 * A binding new-api made (GitHub: by login name) stands for the account only while it carries no id of its own, so a
 * recycled name cannot reach an account already moved to another id. Such a binding is moved to `account.id` (claim
 * and column together, services/oauth/claims.ts); the rows now bound to the id are returned (none: no legacy one).
 */
async function moveLegacyBinding(ctx: AppContext, provider: AccountProvider, account: ProviderUser) {
  const legacy = await legacyRows(ctx, provider, account);
  if (!legacy.length) return legacy;
  const holder = legacy.find((row) => !row.deleted_at);
  // a deleted user keeps its binding, as new-api: the login is refused below, nothing is moved
  if (!holder) return legacy;
  await storeOf(provider)
    .bind(ctx, holder.id, account.id)
    .catch((err: unknown) => {
      // lost to a concurrent move or sign-up of the same account: whoever holds the id now is answered below
      if (!(err instanceof OAuthError)) throw err;
    });
  ctx.changes.publish({ kind: 'user', id: holder.id });
  const moved = await boundRows(ctx, provider, account.id);
  if (!moved.length) throw new OAuthError(alreadyBound(provider));
  return moved;
}

/**
 * Makes the user and binds the account to it. For a built-in provider the claim makes this safe against a second
 * callback for the same account: only one creates a user, the other logs in as it. A custom provider's binding
 * table refuses the second binding by its unique index.
 */
async function signUp(
  ctx: AppContext,
  provider: AccountProvider,
  account: ProviderUser,
  affCode: string,
): Promise<User> {
  const username = await chooseUsername(ctx, provider, account);
  // an address already on another account is not copied: it would make password reset ambiguous
  const email = account.email && !(await emailRegistered(ctx, account.email, true)) ? account.email : '';
  // the password is random and never shown: the account signs in through the provider until its owner sets one
  const create = () => registerUser(ctx, { username, password: randomAlnum(20), email, affCode: affCode || undefined });
  let id: number;
  if (provider.bindings) {
    id = await create();
    await rememberUnseenPassword(ctx.db, id);
    await provider.bindings.bind(ctx, id, account.id);
  } else {
    const claimed = await signUpClaimed(ctx, claimProvider(provider), account.id, create);
    id = claimed.userId;
    if (!claimed.created) {
      const existing = await getUser(ctx, id);
      if (!existing) throw new OAuthError(USER_DELETED);
      return existing;
    }
  }
  const displayName = [...(account.displayName || provider.defaultDisplayName)].slice(0, DISPLAY_NAME_MAX).join('');
  await ctx.db.updateTable('users').set({ display_name: displayName }).where('id', '=', id).execute();
  ctx.changes.publish({ kind: 'user', id });
  const user = await getUser(ctx, id);
  if (!user) throw new Error(`user ${id} vanished after sign-up`);
  return user;
}

/**
 * new-api's names: the provider's login for providers that use it, when it is a valid, free username; else
 * `<prefix>_<largest user id + 1>` (moving on while that is taken).
 */
async function chooseUsername(ctx: AppContext, provider: AccountProvider, account: ProviderUser): Promise<string> {
  const login = account.login?.trim() ?? '';
  if (provider.usesLogin && login && [...login].length <= USERNAME_MAX && !(await userExistsOrDeleted(ctx.db, login)))
    return login;
  const max = await ctx.db
    .selectFrom('users')
    .select((eb) => eb.fn.max('id').as('max'))
    .executeTakeFirst();
  let n = Number(max?.max ?? 0) + 1;
  for (let i = 0; i < 20; i++, n++) {
    const name = `${provider.usernamePrefix}_${n}`;
    if (!(await userExistsOrDeleted(ctx.db, name))) return name;
  }
  return `${provider.usernamePrefix}_${randomAlnum(4)}`;
}
