// Custom OAuth providers an operator adds in the settings (new-api-compat.md §9.9): the rows of
// custom_oauth_providers, their validation, and the views the console and the login page get. The client secret is
// write-only: no view carries it.
import { isUniqueViolation } from '../../db/errors.js';
import type { AppContext } from '../../context.js';
import type { CustomOAuthProvidersTable } from '../../db/schema.js';
import type { Selectable } from 'kysely';
import { UserFacingError } from '../users.js';
import type { ProviderInput } from './custom-provider-input.js';

export type CustomProviderRow = Selectable<CustomOAuthProvidersTable>;

export const PROVIDER_NOT_FOUND = '未找到该 OAuth 提供商';
export const SLUG_TAKEN = '该 Slug 已被使用';
export const SLUG_BUILT_IN = '该 Slug 与内置 OAuth 提供商冲突';
export const PROVIDER_HAS_BINDINGS = '该 OAuth 提供商还有用户绑定，无法删除。请先解除所有用户绑定。';

/** Route segments that belong to the built-in logins or to /api/oauth's own routes. */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set([
  'github',
  'oidc',
  'linuxdo',
  'discord',
  'wechat',
  'telegram',
  'state',
  'email',
]);

/** How the client credentials reach the token endpoint: 0 and 1 in the form body (client_secret_post), 2 Basic. */
export const AUTH_STYLE_BASIC = 2;

const DEFAULTS = {
  icon: '',
  kind: 'oauth_code',
  enabled: false,
  client_id: '',
  client_secret: '',
  authorization_endpoint: '',
  token_endpoint: '',
  user_info_endpoint: '',
  scopes: 'openid profile email',
  user_id_field: 'sub',
  username_field: 'preferred_username',
  display_name_field: 'name',
  email_field: 'email',
  well_known: '',
  auth_style: 0,
} satisfies Omit<ProviderInput, 'name' | 'slug'>;

/** What a provider must have to log anyone in (new-api refuses to save one without them). */
type LoginFields = 'client_id' | 'authorization_endpoint' | 'token_endpoint' | 'user_info_endpoint' | 'user_id_field';

function requireLoginFields(p: Record<LoginFields, string>): void {
  const missing: Array<[LoginFields, string]> = [
    ['client_id', 'Client ID 不能为空'],
    ['authorization_endpoint', '授权端点不能为空'],
    ['token_endpoint', 'Token 端点不能为空'],
    ['user_info_endpoint', '用户信息端点不能为空'],
    ['user_id_field', '用户 ID 字段不能为空'],
  ];
  for (const [key, message] of missing) if (!p[key]) throw new UserFacingError(message);
}

async function checkSlugFree(ctx: AppContext, slug: string, exceptId = 0): Promise<void> {
  if (RESERVED_SLUGS.has(slug)) throw new UserFacingError(SLUG_BUILT_IN);
  const taken = await ctx.db
    .selectFrom('custom_oauth_providers')
    .select('id')
    .where('slug', '=', slug)
    .where('id', '!=', exceptId)
    .executeTakeFirst();
  if (taken) throw new UserFacingError(SLUG_TAKEN);
}

/** The console's view: every field but the secret. */
export function adminView(row: CustomProviderRow) {
  return {
    id: Number(row.id),
    name: row.name,
    slug: row.slug,
    icon: row.icon ?? '',
    kind: row.kind || 'oauth_code',
    enabled: Boolean(row.enabled),
    client_id: row.client_id ?? '',
    authorization_endpoint: row.authorization_endpoint ?? '',
    token_endpoint: row.token_endpoint ?? '',
    user_info_endpoint: row.user_info_endpoint ?? '',
    scopes: row.scopes ?? '',
    user_id_field: row.user_id_field ?? '',
    username_field: row.username_field ?? '',
    display_name_field: row.display_name_field ?? '',
    email_field: row.email_field ?? '',
    well_known: row.well_known ?? '',
    auth_style: Number(row.auth_style ?? 0),
  };
}

/** What the login page needs to build the authorize URL; nothing an anonymous visitor should not see. */
export function publicView(row: CustomProviderRow) {
  return {
    id: Number(row.id),
    name: row.name,
    slug: row.slug,
    icon: row.icon ?? '',
    client_id: row.client_id ?? '',
    authorization_endpoint: row.authorization_endpoint ?? '',
    scopes: row.scopes ?? '',
  };
}

/** Whether the provider can log anyone in now: switched on, of the kind served here, and addressable. */
export function loginReady(row: CustomProviderRow): boolean {
  return (
    Boolean(row.enabled) &&
    (row.kind || 'oauth_code') === 'oauth_code' &&
    Boolean(row.client_id) &&
    Boolean(row.authorization_endpoint)
  );
}

export async function listProviders(ctx: AppContext): Promise<CustomProviderRow[]> {
  return ctx.db.selectFrom('custom_oauth_providers').selectAll().orderBy('id').execute();
}

/** The providers the login page offers (GET /api/status). */
export async function loginPageProviders(ctx: AppContext) {
  return (await listProviders(ctx)).filter(loginReady).map(publicView);
}

export async function providerById(ctx: AppContext, id: number): Promise<CustomProviderRow | undefined> {
  return ctx.db.selectFrom('custom_oauth_providers').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function providerBySlug(ctx: AppContext, slug: string): Promise<CustomProviderRow | undefined> {
  return ctx.db.selectFrom('custom_oauth_providers').selectAll().where('slug', '=', slug).executeTakeFirst();
}

async function requireProvider(ctx: AppContext, id: number): Promise<CustomProviderRow> {
  const row = await providerById(ctx, id);
  if (!row) throw new UserFacingError(PROVIDER_NOT_FOUND);
  return row;
}

export async function createProvider(ctx: AppContext, body: unknown): Promise<CustomProviderRow> {
  const input = (await import('./custom-provider-input.js')).parseCreate(body);
  const values = { ...DEFAULTS, ...input };
  requireLoginFields(values);
  await checkSlugFree(ctx, values.slug);
  const now = new Date();
  try {
    await ctx.db
      .insertInto('custom_oauth_providers')
      .values({ ...values, created_at: now, updated_at: now })
      .execute();
  } catch (err) {
    // two saves racing for one slug: the unique index decides
    if (isUniqueViolation(err)) throw new UserFacingError(SLUG_TAKEN);
    throw err;
  }
  const row = await providerBySlug(ctx, values.slug);
  if (!row) throw new Error(`custom OAuth provider ${values.slug} vanished after insert`);
  return row;
}

/** Changes the fields given; an empty or missing client_secret keeps the stored one (the console never sees it). */
export async function updateProvider(ctx: AppContext, id: number, body: unknown): Promise<CustomProviderRow> {
  const input = (await import('./custom-provider-input.js')).parseUpdate(body);
  const current = await requireProvider(ctx, id);
  const { client_secret: secret, ...rest } = input;
  const merged = { ...DEFAULTS, ...withoutNulls(adminView(current)), ...rest };
  requireLoginFields(merged);
  if (merged.slug !== current.slug) await checkSlugFree(ctx, merged.slug, id);
  const changes = { ...rest, ...(secret ? { client_secret: secret } : {}), updated_at: new Date() };
  try {
    await ctx.db.updateTable('custom_oauth_providers').set(changes).where('id', '=', id).execute();
  } catch (err) {
    if (isUniqueViolation(err)) throw new UserFacingError(SLUG_TAKEN);
    throw err;
  }
  return requireProvider(ctx, id);
}

const withoutNulls = <T extends Record<string, unknown>>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) as T;

/** Refused while accounts are bound to it, as new-api: deleting it would strand them. */
export async function deleteProvider(ctx: AppContext, id: number): Promise<void> {
  await requireProvider(ctx, id);
  const bound = await ctx.db
    .selectFrom('user_oauth_bindings')
    .select('id')
    .where('provider_id', '=', id)
    .executeTakeFirst();
  if (bound) throw new UserFacingError(PROVIDER_HAS_BINDINGS);
  await ctx.db.deleteFrom('custom_oauth_providers').where('id', '=', id).execute();
}
