// A custom OAuth provider as a login provider (new-api-compat.md §9.9): the authorization code exchanged at the
// operator's token endpoint (credentials in the form body, or HTTP Basic when configured), the user read from the
// user-info endpoint and mapped with the operator's dotted field paths, and the binding kept in user_oauth_bindings
// rather than in a users column. The account outcomes (login, sign-up, bind and their refusals) are accounts.ts's,
// the same as for the built-in providers.
import type { AppContext } from '../../context.js';
import type { LineLog } from '../../lib/request-log.js';
import { OAuthError, accessTokenOf, callProvider, emptyUserInfo, requireCode, userInfoOf } from './provider.js';
import type { BindingStore, OAuthProvider, ProviderUser } from './provider.js';
import { isUniqueViolation } from '../../db/errors.js';
import { AUTH_STYLE_BASIC, loginReady, type CustomProviderRow } from './custom-providers.js';
import { alreadyBound } from './accounts.js';

/** The value at a dotted path (`data.user.id`, `emails.0.value`); numbers become text, anything else is empty. */
export function valueAtPath(body: unknown, path: string): string {
  if (!path) return '';
  let v: unknown = body;
  for (const part of path.split('.')) {
    if (v === null || typeof v !== 'object') return '';
    v = Array.isArray(v) ? (/^\d+$/.test(part) ? v[Number(part)] : undefined) : (v as Record<string, unknown>)[part];
  }
  if (typeof v === 'string') return v.trim();
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'bigint') return String(v);
  return '';
}

/** user_oauth_bindings as the provider's binding store; a user holds at most one account of each provider. */
function bindingStore(providerId: number, provider: () => OAuthProvider): BindingStore {
  return {
    async boundUsers(ctx, accountId) {
      return ctx.db
        .selectFrom('user_oauth_bindings as b')
        .innerJoin('users as u', 'u.id', 'b.user_id')
        .select(['u.id as id', 'u.deleted_at as deleted_at'])
        .where('b.provider_id', '=', providerId)
        .where('b.provider_user_id', '=', accountId)
        .orderBy('u.id')
        .execute();
    },
    async bind(ctx, userId, accountId) {
      try {
        // binding another account of the same provider replaces the user's earlier one, as new-api does
        const replaced = await ctx.db
          .updateTable('user_oauth_bindings')
          .set({ provider_user_id: accountId })
          .where('user_id', '=', userId)
          .where('provider_id', '=', providerId)
          .executeTakeFirst();
        if (Number(replaced.numUpdatedRows) > 0) return;
        await ctx.db
          .insertInto('user_oauth_bindings')
          .values({ user_id: userId, provider_id: providerId, provider_user_id: accountId, created_at: new Date() })
          .execute();
      } catch (err) {
        // another request bound the same account first: the unique index on (provider_id, provider_user_id) decides
        if (isUniqueViolation(err)) throw new OAuthError(alreadyBound(provider()));
        throw err;
      }
    },
  };
}

async function exchangeCode(
  ctx: AppContext,
  row: CustomProviderRow,
  name: string,
  code: string,
  log: LineLog,
): Promise<string> {
  const form = new URLSearchParams({
    grant_type: 'authorization_code',
    code,
    redirect_uri: `${ctx.options.get('ServerAddress')}/oauth/${row.slug}`,
  });
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  const clientId = row.client_id ?? '';
  const secret = row.client_secret ?? '';
  if (Number(row.auth_style) === AUTH_STYLE_BASIC) {
    // RFC 6749 §2.3.1: both parts form-encoded before they are joined
    const pair = `${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`;
    headers.authorization = `Basic ${Buffer.from(pair).toString('base64')}`;
  } else {
    form.set('client_id', clientId);
    form.set('client_secret', secret);
  }
  const answer = await callProvider(log, name, row.token_endpoint ?? '', { method: 'POST', headers, body: form });
  return accessTokenOf(log, name, answer);
}

async function fetchCustomUser(
  ctx: AppContext,
  row: CustomProviderRow,
  code: string,
  log: LineLog,
): Promise<ProviderUser> {
  requireCode(code);
  const name = row.name;
  const token = await exchangeCode(ctx, row, name, code, log);
  const info = userInfoOf(
    log,
    name,
    await callProvider(log, name, row.user_info_endpoint ?? '', {
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    }),
  );
  const id = valueAtPath(info, row.user_id_field || 'sub');
  if (!id) throw emptyUserInfo(name);
  return {
    id,
    login: valueAtPath(info, row.username_field ?? ''),
    displayName: valueAtPath(info, row.display_name_field ?? ''),
    email: valueAtPath(info, row.email_field ?? ''),
  };
}

/** The provider as accounts.ts and the callback route see it; read from its row at each callback. */
export function customLoginProvider(row: CustomProviderRow): OAuthProvider {
  const provider: OAuthProvider = {
    key: row.slug,
    name: row.name,
    option: `custom_oauth.${row.slug}`,
    bindings: bindingStore(Number(row.id), () => provider),
    enabled: () => loginReady(row),
    usernamePrefix: row.slug,
    usesLogin: true,
    defaultDisplayName: `${row.name} User`,
    fetchUser: (ctx, code, { log }) => fetchCustomUser(ctx, row, code, log),
  };
  return provider;
}
