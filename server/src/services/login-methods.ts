// Third-party login methods and whether this server implements them. A toggle stored in the options (by this console
// or by new-api before the switch) only takes effect for a method whose routes exist here: the option API refuses to
// switch on any other, and /api/status never advertises one, so the login page shows no button that cannot work.
// When a method's routes are added, its option key goes into IMPLEMENTED_LOGINS.
import type { OptionStore } from './options.js';

export interface LoginMethod {
  /** the option that switches it on */
  option: string;
  /** the name shown in messages */
  name: string;
}

export const THIRD_PARTY_LOGINS: readonly LoginMethod[] = [
  { option: 'GitHubOAuthEnabled', name: 'GitHub' },
  { option: 'oidc.enabled', name: 'OIDC' },
  { option: 'LinuxDOOAuthEnabled', name: 'Linux DO' },
  { option: 'WeChatAuthEnabled', name: '微信' },
  { option: 'TelegramOAuthEnabled', name: 'Telegram' },
  { option: 'discord.enabled', name: 'Discord' },
];

/** Option keys of the third-party logins whose routes this server serves (api/oauth.ts, api/login-bindings.ts). */
const IMPLEMENTED_LOGINS = new Set<string>([
  'GitHubOAuthEnabled',
  'oidc.enabled',
  'LinuxDOOAuthEnabled',
  'discord.enabled',
  // api/login-bindings.ts
  'WeChatAuthEnabled',
  'TelegramOAuthEnabled',
]);

export function loginMethodOf(option: string): LoginMethod | undefined {
  return THIRD_PARTY_LOGINS.find((m) => m.option === option);
}

/** Whether the login switched by `option` is both implemented here and switched on. */
export function loginAvailable(options: OptionStore, option: string): boolean {
  return IMPLEMENTED_LOGINS.has(option) && options.bool(option);
}

/** The refusal for switching on a login that has no route here, or null when it may be switched on. */
export function loginSwitchProblem(option: string, value: string): string | null {
  const method = loginMethodOf(option);
  if (!method || value !== 'true' || IMPLEMENTED_LOGINS.has(option)) return null;
  return `无法启用 ${method.name} 登录：本网关尚未实现该登录方式`;
}
