// WeChat login through a wechat-server (new-api-compat.md §9.4): the user scans the official account's QR code, gets
// a code from it and types it in; the wechat-server turns the code into the user's WeChat id. Its address and token
// are the operator's options (not user input), so no private-address guard applies, but redirects are not followed:
// the token travels in the Authorization header and must not be forwarded elsewhere.
import type { AppContext } from '../../context.js';
import type { LineLog } from '../../lib/request-log.js';
import { OAUTH_HTTP_TIMEOUT_MS, OAuthError, type AccountProvider, type ProviderUser } from './provider.js';

export const WECHAT_NOT_ENABLED = '管理员未开启通过微信登录以及注册';
export const WECHAT_ALREADY_BOUND = '该微信账号已被绑定';
export const WECHAT_CODE_INVALID = '验证码错误或已过期';
export const WECHAT_UNREACHABLE = '无法连接至微信服务器，请稍后重试！';
export const WECHAT_BAD_ANSWER = '微信服务器返回了无效的响应';

export const wechat: AccountProvider = {
  key: 'wechat',
  name: '微信',
  alreadyBoundMessage: WECHAT_ALREADY_BOUND,
  column: 'wechat_id',
  usernamePrefix: 'wechat',
  usesLogin: false,
  defaultDisplayName: 'WeChat User',
};

/** The WeChat id the wechat-server knows the code by; new-api's messages for each failure. */
export async function wechatUserByCode(ctx: AppContext, code: string, log: LineLog): Promise<ProviderUser> {
  if (!code) throw new OAuthError('无效的参数');
  const base = ctx.options.get('WeChatServerAddress').replace(/\/+$/, '');
  let res: Response;
  try {
    res = await fetch(`${base}/api/wechat/user?code=${encodeURIComponent(code)}`, {
      headers: { authorization: ctx.options.get('WeChatServerToken'), accept: 'application/json' },
      redirect: 'manual',
      signal: AbortSignal.timeout(OAUTH_HTTP_TIMEOUT_MS),
    });
  } catch (err) {
    log.warn({ err }, 'wechat server unreachable');
    throw new OAuthError(WECHAT_UNREACHABLE);
  }
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (!body || typeof body !== 'object') {
    log.warn({ status: res.status }, 'wechat server answered no JSON');
    throw new OAuthError(WECHAT_BAD_ANSWER);
  }
  const { success, message, data } = body as { success?: unknown; message?: unknown; data?: unknown };
  if (success !== true) throw new OAuthError(typeof message === 'string' && message ? message : WECHAT_CODE_INVALID);
  const id = typeof data === 'string' ? data.trim() : '';
  if (!id) throw new OAuthError(WECHAT_CODE_INVALID);
  return { id };
}
