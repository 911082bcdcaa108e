// What every third-party login provider has in common: the shape of the user it returns, how it is described to the
// account logic (services/oauth/accounts.ts), and the outbound HTTP calls to its endpoints, always with a timeout so
// a provider that hangs cannot hold a login request (and its rate-limit slot) open.
import type { AppContext } from '../../context.js';
import type { LineLog } from '../../lib/request-log.js';
import { UserFacingError } from '../users.js';
import type { ProviderColumnName } from '../../db/identity-claims.js';

/** new-api's timeout for every call to a login provider. */
export const OAUTH_HTTP_TIMEOUT_MS = 5_000;

/** A failure shown to the user as new-api words it (`{success:false,message}`). */
export class OAuthError extends UserFacingError {}

/** The provider's account, reduced to what a login needs. */
export interface ProviderUser {
  /** the value stored in the user's provider column (GitHub: `id:<numeric id>`) */
  id: string;
  /**
   * What new-api stored for this account when it differs from `id` (GitHub: the login name). A binding holding it
   * logs in and is moved to `id`; a binding already holding another `id` is another account, whatever its name.
   */
  legacyId?: string;
  /** the provider's user name, for providers whose sign-ups take it as the username when free */
  login?: string;
  displayName?: string;
  email?: string;
}

export type ProviderColumn = ProviderColumnName;

/**
 * Where a provider's account ids are kept when it has no users column (custom providers: user_oauth_bindings).
 * Rows of soft-deleted users count as bound, as a users column would.
 */
export interface BindingStore {
  /** the users (soft-deleted ones included) bound to the provider account */
  boundUsers(ctx: AppContext, accountId: string): Promise<Array<{ id: number; deleted_at: unknown }>>;
  /** binds the account to the user; throws OAuthError when it is already bound (a race lost to the unique index) */
  bind(ctx: AppContext, userId: number, accountId: string): Promise<void>;
}

/** What the account logic (accounts.ts) needs of any third-party login, OAuth or not (WeChat, Telegram). */
export interface AccountProvider {
  /** the binding type: /api/oauth/<key>, identity_claims.provider for the built-ins, a custom provider's slug */
  key: string;
  /** the name in messages */
  name: string;
  /** new-api's "already bound" message when it is not `该 <name> 账户已被绑定` */
  alreadyBoundMessage?: string;
  /**
   * The built-ins: the users column holding the account id (identity_claims keep two callbacks from both taking the
   * account). A provider without one keeps its bindings in `bindings`, whose unique index does the same.
   */
  column?: ProviderColumn;
  bindings?: BindingStore;
  /** sign-ups without a usable login are named `<prefix>_<n>` */
  usernamePrefix: string;
  /** whether a sign-up takes the provider's login as its username when it is free (else always the prefix form) */
  usesLogin: boolean;
  defaultDisplayName: string;
}

export interface OAuthProvider extends AccountProvider {
  /** the option that switches the login on (custom providers: their own enabled flag, see api/custom-oauth.ts) */
  option: string;
  /** whether the login is on now, for providers switched by something else than an option (custom providers) */
  enabled?: (ctx: AppContext) => boolean;
  /** Exchanges the authorization code and reads the user; throws OAuthError with new-api's messages. */
  fetchUser(ctx: AppContext, code: string, callback: CallbackInfo): Promise<ProviderUser>;
}

/** The callback request: where it came in (for providers whose redirect_uri names this server's own address), its logger. */
export interface CallbackInfo {
  protocol: string;
  host: string;
  /** the callback request's logger: the lines about the exchange carry its request id (lib/request-log.ts) */
  log: LineLog;
}

export interface JsonAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** One call to a provider: a network failure or timeout becomes new-api's "cannot connect" message. */
export async function callProvider(log: LineLog, name: string, url: string, init: RequestInit): Promise<JsonAnswer> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(OAUTH_HTTP_TIMEOUT_MS) });
  } catch (err) {
    log.warn({ err, provider: name }, 'oauth provider unreachable');
    throw new OAuthError(`无法连接至 ${name} 服务器，请稍后重试！`);
  }
  let body: unknown = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  return {
    status: res.status,
    body: body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {},
  };
}

/** A JSON field as text: ids arrive as numbers from some providers (Linux DO) and as strings from others. */
export function textField(body: Record<string, unknown>, key: string): string {
  const v = body[key];
  if (typeof v === 'string') return v.trim();
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return '';
}

/** The access token of a token-endpoint answer, or new-api's "failed to get the token" message. */
export function accessTokenOf(log: LineLog, name: string, answer: JsonAnswer): string {
  const token = textField(answer.body, 'access_token');
  if (!token) {
    log.warn({ provider: name, status: answer.status, error: answer.body.error }, 'oauth token exchange failed');
    throw new OAuthError(`${name} 获取 Token 失败，请检查设置！`);
  }
  return token;
}

/** The user-info answer's body, or new-api's "failed to get the user" message on a non-200. */
export function userInfoOf(log: LineLog, name: string, answer: JsonAnswer): Record<string, unknown> {
  if (answer.status !== 200) {
    log.warn({ provider: name, status: answer.status }, 'oauth user info failed');
    throw new OAuthError(`${name} 获取用户信息失败！请检查设置！`);
  }
  return answer.body;
}

export function requireCode(code: string): void {
  if (!code) throw new OAuthError('无效的参数');
}

export const emptyUserInfo = (name: string) => new OAuthError(`${name} 获取用户信息为空！请检查设置！`);
