// Telegram Login Widget (new-api-compat.md §9.4): the widget hands the browser the Telegram user's fields signed by
// the bot, and the server checks the signature: HMAC-SHA256 keyed with SHA-256(bot token) over the fields other than
// `hash`, as sorted `key=value` lines. Unlike new-api, a signature older than a day is refused, so a leaked login
// URL (browser history, logs) cannot be replayed for ever; and one dated in the future beyond a small clock skew is
// refused too, else a payload signed ahead of time (a leaked bot token) would outlive that day.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { nowSec } from '../../lib/time.js';
import { OAuthError, type AccountProvider, type ProviderUser } from './provider.js';

export const TELEGRAM_NOT_ENABLED = '管理员未开启通过 Telegram 登录以及注册';
export const TELEGRAM_INVALID = '无效的请求';
export const TELEGRAM_EXPIRED = 'Telegram 授权已过期，请重新登录';
export const TELEGRAM_FROM_FUTURE = 'Telegram 授权时间晚于服务器时间，请检查服务器时钟或重新登录';
export const TELEGRAM_NOT_BOUND = '该 Telegram 账户未绑定';
/** how long a widget signature is accepted */
export const TELEGRAM_AUTH_MAX_AGE_SEC = 24 * 60 * 60;
/** how far ahead of this server's clock a signature may be dated: Telegram's clock and ours may differ that much */
export const TELEGRAM_CLOCK_SKEW_SEC = 5 * 60;

export const telegram: AccountProvider = {
  key: 'telegram',
  name: 'Telegram',
  column: 'telegram_id',
  usernamePrefix: 'telegram',
  usesLogin: false,
  defaultDisplayName: 'Telegram User',
};

/** The widget's signature over `fields` (every query field but `hash`), hex. */
export function telegramSignature(fields: Record<string, string>, botToken: string): string {
  const lines = Object.keys(fields)
    .filter((k) => k !== 'hash')
    .sort()
    .map((k) => `${k}=${fields[k]}`)
    .join('\n');
  const key = createHash('sha256').update(botToken).digest();
  return createHmac('sha256', key).update(lines).digest('hex');
}

/** The signed Telegram user of a widget callback's query, or new-api's "invalid request". */
export function telegramUserOf(ctx: AppContext, query: Record<string, string>): ProviderUser {
  const token = ctx.options.get('TelegramBotToken');
  const hash = (query.hash ?? '').toLowerCase();
  const id = query.id ?? '';
  if (!token || !/^[0-9a-f]{64}$/.test(hash) || !/^\d{1,20}$/.test(id)) throw new OAuthError(TELEGRAM_INVALID);
  const expected = Buffer.from(telegramSignature(query, token), 'hex');
  if (!timingSafeEqual(expected, Buffer.from(hash, 'hex'))) throw new OAuthError(TELEGRAM_INVALID);
  const authDate = Number(query.auth_date);
  const now = nowSec();
  if (!Number.isSafeInteger(authDate) || now - authDate > TELEGRAM_AUTH_MAX_AGE_SEC)
    throw new OAuthError(TELEGRAM_EXPIRED);
  if (authDate - now > TELEGRAM_CLOCK_SKEW_SEC) throw new OAuthError(TELEGRAM_FROM_FUTURE);
  const name = [query.first_name, query.last_name].filter(Boolean).join(' ');
  return { id, login: query.username, displayName: name || undefined };
}
