// GitHub login (new-api-compat.md §9.4): the code is exchanged with a JSON POST, the user read from the REST API.
// The stored id is the GitHub login, as new-api stores it, so accounts bound by new-api keep working.
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
    if (!login) throw emptyUserInfo(this.name);
    return { id: login, login, displayName: textField(info, 'name'), email: textField(info, 'email') };
  },
};
