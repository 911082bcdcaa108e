// WeChat and Telegram logins and the binding actions of personal settings (new-api-compat.md §9.4).
export { default as ExtraLoginButtons, extraLoginsOn } from './LoginButtons.js';
export { TelegramBindButton, UnbindButton, WeChatBindButton, WithUnbind, type BindingType } from './BindingActions.js';
