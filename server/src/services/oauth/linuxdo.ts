// Linux DO Connect login (new-api-compat.md §9.4): client credentials in HTTP Basic, a form body, and the
// redirect_uri new-api sends (this server's /api/oauth/linuxdo as the request reached it).
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

const TOKEN_URL = 'https://connect.linux.do/oauth2/token';
const USER_URL = 'https://connect.linux.do/api/user';

export const linuxdo: OAuthProvider = {
  key: 'linuxdo',
  name: 'Linux DO',
  option: 'LinuxDOOAuthEnabled',
  column: 'linux_do_id',
  usernamePrefix: 'linuxdo',
  usesLogin: false,
  defaultDisplayName: 'LinuxDO User',
  async fetchUser(ctx: AppContext, code: string, callback: CallbackInfo) {
    const { log } = callback;
    requireCode(code);
    const urls = ctx.config.oauthEndpoints.linuxdo ?? {};
    const basic = Buffer.from(
      `${ctx.options.get('LinuxDOClientId')}:${ctx.options.get('LinuxDOClientSecret')}`,
    ).toString('base64');
    const tokenAnswer = await callProvider(log, this.name, urls.token ?? TOKEN_URL, {
      method: 'POST',
      headers: {
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: new URLSearchParams({
        code,
        grant_type: 'authorization_code',
        redirect_uri: `${callback.protocol}://${callback.host}/api/oauth/linuxdo`,
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
    if (!id || id === '0') throw emptyUserInfo(this.name);
    return { id, login: textField(info, 'username'), displayName: textField(info, 'name') };
  },
};
