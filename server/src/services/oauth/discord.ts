// Discord login (new-api's later provider): a form POST to the token endpoint with the client credentials, then
// /users/@me. The stored id is Discord's numeric snowflake; the username is taken for a sign-up when free.
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

const TOKEN_URL = 'https://discord.com/api/v10/oauth2/token';
const USER_URL = 'https://discord.com/api/v10/users/@me';

export const discord: OAuthProvider = {
  key: 'discord',
  name: 'Discord',
  option: 'discord.enabled',
  column: 'discord_id',
  usernamePrefix: 'discord',
  usesLogin: true,
  defaultDisplayName: 'Discord User',
  async fetchUser(ctx: AppContext, code: string, { log }: CallbackInfo) {
    requireCode(code);
    const urls = ctx.config.oauthEndpoints.discord ?? {};
    const tokenAnswer = await callProvider(log, this.name, urls.token ?? TOKEN_URL, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        client_id: ctx.options.get('discord.client_id'),
        client_secret: ctx.options.get('discord.client_secret'),
        code,
        grant_type: 'authorization_code',
        redirect_uri: `${ctx.options.get('ServerAddress')}/oauth/discord`,
      }),
    });
    const token = accessTokenOf(log, this.name, tokenAnswer);
    const info = userInfoOf(
      log,
      this.name,
      await callProvider(log, this.name, urls.user ?? USER_URL, {
        headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      }),
    );
    const id = textField(info, 'id');
    const username = textField(info, 'username');
    if (!id || !username) throw emptyUserInfo(this.name);
    return { id, login: username, displayName: textField(info, 'global_name'), email: textField(info, 'email') };
  },
};
