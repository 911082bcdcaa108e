// The custom-provider accounts bound to a user (new-api-compat.md §9.9): listed for the user and for admins, and
// unbound. A user may not unbind the one link that is their only way back in; an admin may (they can reset the
// password), but only on users below their own role, as every other admin action on users. What counts as a way
// to sign in is decided in one place for every binding (unbind.ts).
import type { AppContext } from '../../context.js';
import { getUser, UserFacingError } from '../users.js';
import { ROLE_ROOT } from '../console-auth.js';
import { LAST_SIGN_IN_WAY, otherSignInWayLeft } from './unbind.js';

export const BINDING_NOT_FOUND = '未找到该绑定';
export const NO_PERMISSION = '无权操作同级或更高等级用户的绑定';

/** The account ids a user holds, with the provider each belongs to. */
export async function bindingsOf(ctx: AppContext, userId: number) {
  const rows = await ctx.db
    .selectFrom('user_oauth_bindings as b')
    .innerJoin('custom_oauth_providers as p', 'p.id', 'b.provider_id')
    .select(['b.provider_id', 'b.provider_user_id', 'p.name', 'p.slug', 'p.icon'])
    .where('b.user_id', '=', userId)
    .orderBy('b.provider_id')
    .execute();
  return rows.map((r) => ({
    provider_id: Number(r.provider_id),
    provider_name: r.name,
    provider_slug: r.slug,
    provider_icon: r.icon ?? '',
    provider_user_id: r.provider_user_id,
  }));
}

async function removeBinding(ctx: AppContext, userId: number, providerId: number): Promise<void> {
  const res = await ctx.db
    .deleteFrom('user_oauth_bindings')
    .where('user_id', '=', userId)
    .where('provider_id', '=', providerId)
    .executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw new UserFacingError(BINDING_NOT_FOUND);
}

/** The user's own unbind; refused when it would leave them no way to sign in. */
export async function unbindOwn(ctx: AppContext, userId: number, providerId: number): Promise<void> {
  const held = await ctx.db
    .selectFrom('user_oauth_bindings')
    .select('id')
    .where('user_id', '=', userId)
    .where('provider_id', '=', providerId)
    .executeTakeFirst();
  if (!held) throw new UserFacingError(BINDING_NOT_FOUND);
  const user = await getUser(ctx, userId);
  if (!user || !(await otherSignInWayLeft(ctx, user, { customProviderId: providerId })))
    throw new UserFacingError(LAST_SIGN_IN_WAY);
  await removeBinding(ctx, userId, providerId);
}

/** An admin's target: an existing user below the caller's role (root may act on anyone). */
export async function adminTarget(ctx: AppContext, callerRole: number, userId: number): Promise<number> {
  const user = await getUser(ctx, userId, { includeDeleted: true });
  if (!user) throw new UserFacingError('用户不存在');
  if (callerRole <= Number(user.role) && callerRole !== ROLE_ROOT) throw new UserFacingError(NO_PERMISSION);
  return userId;
}

export async function unbindByAdmin(ctx: AppContext, userId: number, providerId: number): Promise<void> {
  await removeBinding(ctx, userId, providerId);
}
