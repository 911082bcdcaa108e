// GitHub login (new-api-compat.md §9.4): the code is exchanged with a JSON POST, the user read from the REST API.
// The binding is GitHub's numeric user id, stored in github_id as `id:<n>`: a login name can be renamed and then
// taken by someone else, the id never changes. new-api stored the login name there; such a binding still logs in
// and is moved to the id at its next login (services/oauth/accounts.ts, legacyId).
import type { AppContext } from '../../context.js';
import {
  accessTokenOf,
  callProvider,
  emptyUserInfo,
  requireCode,
  textField,
  userInfoOf,
  type CallbackInfo,
  type OAuthProvider,
} from './provider.js';

const TOKEN_URL = 'https://github.com/login/oauth/access_token';
const USER_URL = 'https://api.github.com/user';

/**
 * The github_id value of a GitHub account: its numeric id behind a prefix that no login name can carry (GitHub
 * allows only letters, digits and hyphens), so new-api, looking up login names, never mistakes one for the other.
 */
export const githubBindingId = (numericId: string | number) => `id:${numericId}`;

export const github: OAuthProvider = {
  key: 'github',
  name: 'GitHub',
  option: 'GitHubOAuthEnabled',
  column: 'github_id',
  usernamePrefix: 'github',
  usesLogin: false,
  defaultDisplayName: 'GitHub User',
  async fetchUser(ctx: AppContext, code: string, { log }: CallbackInfo) {
    requireCode(code);
    const urls = ctx.config.oauthEndpoints.github ?? {};
    const tokenAnswer = await callProvider(log, this.name, urls.token ?? TOKEN_URL, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        client_id: ctx.options.get('GitHubClientId'),
        client_secret: ctx.options.get('GitHubClientSecret'),
        code,
      }),
    });
    const token = accessTokenOf(log, this.name, tokenAnswer);
    const info = userInfoOf(
      log,
      this.name,
      await callProvider(log, this.name, urls.user ?? USER_URL, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/vnd.github+json' },
      }),
    );
    const login = textField(info, 'login');
    const numericId = textField(info, 'id');
    if (!login || !/^\d{1,20}$/.test(numericId)) throw emptyUserInfo(this.name);
    return {
      id: githubBindingId(numericId),
      legacyId: login,
      login,
      displayName: textField(info, 'name'),
      email: textField(info, 'email'),
    };
  },
};
