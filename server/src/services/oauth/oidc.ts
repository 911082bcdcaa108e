// OpenID Connect login (new-api-compat.md §9.4). The token and userinfo endpoints are the options' when set, else
// read from the `oidc.well_known` discovery document at each login (an operator changing the provider's document
// needs no restart). The provider must return `sub` and `email`. The discovery document is fetched like any URL
// chosen for someone (lib/safe-fetch.ts: public addresses only, not this host, no redirects, root's worker when set),
// as the custom providers' is; an identity provider on a private network gets its two endpoints typed in instead.
import type { AppContext } from '../../context.js';
import type { LineLog } from '../../lib/request-log.js';
import { userUrlFetch } from '../../lib/safe-fetch.js';
import { readLimited } from './custom-discovery.js';
import {
  OAUTH_HTTP_TIMEOUT_MS,
  OAuthError,
  accessTokenOf,
  callProvider,
  emptyUserInfo,
  requireCode,
  textField,
  userInfoOf,
  type CallbackInfo,
  type OAuthProvider,
} from './provider.js';

export const OIDC_DISCOVERY_FAILED = '获取 OIDC 配置失败，请检查网络状况和 Well-Known URL 是否正确';

interface OidcEndpoints {
  token: string;
  userInfo: string;
}

async function oidcEndpoints(ctx: AppContext, log: LineLog): Promise<OidcEndpoints> {
  const token = ctx.options.get('oidc.token_endpoint');
  const userInfo = ctx.options.get('oidc.user_info_endpoint');
  if (token && userInfo) return { token, userInfo };
  const wellKnown = ctx.options.get('oidc.well_known');
  if (!wellKnown) throw new OAuthError(OIDC_DISCOVERY_FAILED);
  let doc: Record<string, unknown>;
  try {
    const res = await userUrlFetch(ctx).get(wellKnown, { accept: 'application/json' }, OAUTH_HTTP_TIMEOUT_MS);
    const raw = await readLimited(res.body);
    if (res.statusCode !== 200) throw new Error(`status ${res.statusCode}`);
    const parsed: unknown = JSON.parse(raw);
    doc = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch (err) {
    log.warn({ err }, 'oidc discovery failed');
    throw new OAuthError(OIDC_DISCOVERY_FAILED);
  }
  const found = {
    token: token || textField(doc, 'token_endpoint'),
    userInfo: userInfo || textField(doc, 'userinfo_endpoint'),
  };
  if (!found.token || !found.userInfo) throw new OAuthError(OIDC_DISCOVERY_FAILED);
  return found;
}

export const oidc: OAuthProvider = {
  key: 'oidc',
  name: 'OIDC',
  option: 'oidc.enabled',
  column: 'oidc_id',
  usernamePrefix: 'oidc',
  usesLogin: true,
  defaultDisplayName: 'OIDC User',
  async fetchUser(ctx: AppContext, code: string, { log }: CallbackInfo) {
    requireCode(code);
    const endpoints = await oidcEndpoints(ctx, log);
    const tokenAnswer = await callProvider(log, this.name, endpoints.token, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        client_id: ctx.options.get('oidc.client_id'),
        client_secret: ctx.options.get('oidc.client_secret'),
        code,
        grant_type: 'authorization_code',
        redirect_uri: `${ctx.options.get('ServerAddress')}/oauth/oidc`,
      }),
    });
    const token = accessTokenOf(log, this.name, tokenAnswer);
    const info = userInfoOf(
      log,
      this.name,
      await callProvider(log, this.name, endpoints.userInfo, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      }),
    );
    const sub = textField(info, 'sub');
    const email = textField(info, 'email');
    if (!sub || !email) throw emptyUserInfo(this.name);
    return { id: sub, login: textField(info, 'preferred_username'), displayName: textField(info, 'name'), email };
  },
};
