// Field lists of the declarative settings sections (option keys: spec §3, server/src/services/options.ts).
// Labels are keys of the `setting` namespace: `f.<option key>` unless noted.
import type { FieldDef, FieldKind } from './logic.js';

const f = (key: string, kind: FieldKind, more: Partial<FieldDef> = {}): FieldDef => ({
  key,
  kind,
  label: `f.${key}`,
  ...more,
});

// ---- operation tab ----

export const GENERAL_FIELDS: FieldDef[] = [
  f('TopUpLink', 'text', { placeholder: 'ph.TopUpLink' }),
  f('general_setting.docs_link', 'text', { placeholder: 'ph.docsLink' }),
  f('QuotaPerUnit', 'number', { min: 1, warning: 'warn.QuotaPerUnit' }),
  f('RetryTimes', 'number', { min: 0 }),
  f('DisplayInCurrencyEnabled', 'switch'),
  f('DisplayTokenStatEnabled', 'switch'),
  f('DefaultCollapseSidebar', 'switch'),
  f('DemoSiteEnabled', 'switch'),
  f('SelfUseModeEnabled', 'switch', { extra: 'extra.SelfUseModeEnabled' }),
  f('RelayErrorLanguage', 'select', {
    choices: [
      { value: 'zh', label: 'lang.zh' },
      { value: 'en', label: 'lang.en' },
    ],
    extra: 'extra.RelayErrorLanguage',
  }),
];

export const QUOTA_FIELDS: FieldDef[] = [
  f('QuotaForNewUser', 'number', { min: 0, extra: 'extra.quotaUnit' }),
  f('PreConsumedQuota', 'number', { min: 0, extra: 'extra.PreConsumedQuota' }),
  f('QuotaForInviter', 'number', { min: 0, extra: 'extra.QuotaForInviter' }),
  f('QuotaForInvitee', 'number', { min: 0, extra: 'extra.QuotaForInvitee' }),
  f('QuotaRemindThreshold', 'number', { min: 0, extra: 'extra.QuotaRemindThreshold' }),
  // new-api's option, kept editable for a shared database; streams here have no such queue (the note says so)
  f('StreamCacheQueueLength', 'number', { min: 0, extra: 'extra.StreamCacheQueueLength' }),
];

export const GROUP_FIELDS: FieldDef[] = [
  f('GroupRatio', 'json', { extra: 'extra.GroupRatio' }),
  f('UserUsableGroups', 'json', { extra: 'extra.UserUsableGroups' }),
  f('TopupGroupRatio', 'json', { extra: 'extra.TopupGroupRatio', rows: 4 }),
];

export const RATIO_JSON_FIELDS: FieldDef[] = [
  f('ModelPrice', 'json', { extra: 'extra.ModelPrice', rows: 10 }),
  f('ModelRatio', 'json', { extra: 'extra.ModelRatio', rows: 10 }),
  f('CacheRatio', 'json', { extra: 'extra.CacheRatio', rows: 10 }),
  f('CompletionRatio', 'json', { extra: 'extra.CompletionRatio', rows: 10 }),
];

export const CHATS_FIELDS: FieldDef[] = [f('Chats', 'json', { extra: 'extra.Chats', rows: 10 })];

export const DRAWING_FIELDS: FieldDef[] = [
  f('DrawingEnabled', 'switch'),
  f('MjNotifyEnabled', 'switch'),
  f('MjAccountFilterEnabled', 'switch'),
  f('MjForwardUrlEnabled', 'switch'),
  f('MjModeClearEnabled', 'switch'),
  f('MjActionCheckSuccessEnabled', 'switch'),
];

export const SENSITIVE_FIELDS: FieldDef[] = [
  f('CheckSensitiveEnabled', 'switch'),
  f('CheckSensitiveOnPromptEnabled', 'switch'),
  f('CheckSensitiveOnCompletionEnabled', 'switch'),
  f('StopOnSensitiveEnabled', 'switch'),
  f('SensitiveWords', 'textarea', { extra: 'extra.onePerLine', rows: 6 }),
];

export const LOG_FIELDS: FieldDef[] = [
  f('LogConsumeEnabled', 'switch'),
  // 0 keeps everything; the master deletes older rows in the background (server/src/services/log-retention.ts)
  f('LogRetentionDays', 'number', { min: 0, step: 1, extra: 'extra.LogRetentionDays' }),
  f('QuotaDataRetentionDays', 'number', { min: 0, step: 1, extra: 'extra.QuotaDataRetentionDays' }),
];

export const DASHBOARD_FIELDS: FieldDef[] = [
  f('DataExportEnabled', 'switch'),
  f('DataExportInterval', 'number', { min: 1, extra: 'extra.DataExportInterval' }),
  f('DataExportDefaultTime', 'select', {
    choices: [
      { value: 'hour', label: 'time.hour' },
      { value: 'day', label: 'time.day' },
      { value: 'week', label: 'time.week' },
    ],
  }),
];

/** new-api's daily check-in (wallet page): a reward drawn from [min, max] once a day of the site's calendar. */
export const CHECKIN_FIELDS: FieldDef[] = [
  f('checkin_setting.enabled', 'switch', { span: 24 }),
  f('checkin_setting.min_quota', 'number', { min: 0, visibleWhen: 'checkin_setting.enabled' }),
  f('checkin_setting.max_quota', 'number', { min: 0, visibleWhen: 'checkin_setting.enabled' }),
];

export const MONITOR_FIELDS: FieldDef[] = [
  f('ChannelDisableThreshold', 'number', { min: 0, step: 0.5, extra: 'extra.ChannelDisableThreshold' }),
  f('AutomaticDisableChannelEnabled', 'switch'),
  f('AutomaticEnableChannelEnabled', 'switch'),
  f('AutomaticDisableKeywords', 'textarea', { extra: 'extra.AutomaticDisableKeywords', rows: 6 }),
];

// ---- rate limit tab ----

export const RATE_LIMIT_FIELDS: FieldDef[] = [
  f('ModelRequestRateLimitEnabled', 'switch', { span: 24 }),
  f('ModelRequestRateLimitDurationMinutes', 'number', { min: 0, extra: 'extra.rateDuration' }),
  f('ModelRequestRateLimitCount', 'number', { min: 0, extra: 'extra.rateCount' }),
  f('ModelRequestRateLimitSuccessCount', 'number', { min: 1, extra: 'extra.rateSuccess' }),
];

/** Usage limits (server/src/services/limits/): the time zone of their periods and the groups' default limits. */
export const USAGE_LIMIT_FIELDS: FieldDef[] = [
  f('UsageLimitTimeZone', 'text', { placeholder: 'ph.UsageLimitTimeZone', extra: 'extra.UsageLimitTimeZone' }),
];

// ---- models tab ----

export const GLOBAL_MODEL_FIELDS: FieldDef[] = [
  f('global.pass_through_request_enabled', 'switch', { extra: 'extra.passThrough', span: 24 }),
  f('general_setting.ping_interval_enabled', 'switch', { extra: 'extra.ping' }),
  f('general_setting.ping_interval_seconds', 'number', {
    min: 1,
    visibleWhen: 'general_setting.ping_interval_enabled',
  }),
];

export const GEMINI_FIELDS: FieldDef[] = [
  f('gemini.safety_settings', 'json', { extra: 'extra.geminiSafety' }),
  f('gemini.version_settings', 'json', { extra: 'extra.geminiVersion' }),
  f('gemini.supported_imagine_models', 'json', { extra: 'extra.geminiImagine', rows: 3 }),
  f('gemini.thinking_adapter_enabled', 'switch', { extra: 'extra.geminiThinking' }),
  f('gemini.thinking_adapter_budget_tokens_percentage', 'number', {
    min: 0.1,
    max: 0.99,
    step: 0.1,
    extra: 'extra.budget',
  }),
];

export const CLAUDE_FIELDS: FieldDef[] = [
  f('claude.model_headers_settings', 'json', { extra: 'extra.claudeHeaders' }),
  f('claude.default_max_tokens', 'json', { extra: 'extra.claudeMaxTokens' }),
  f('claude.thinking_adapter_enabled', 'switch', { extra: 'extra.claudeThinking' }),
  f('claude.thinking_adapter_budget_tokens_percentage', 'number', {
    min: 0.1,
    max: 0.99,
    step: 0.1,
    extra: 'extra.budget',
  }),
];

// ---- system tab ----

export const SERVER_FIELDS: FieldDef[] = [
  f('ServerAddress', 'text', {
    trimSlash: true,
    placeholder: 'ph.ServerAddress',
    extra: 'extra.ServerAddress',
    span: 24,
  }),
];

export const WORKER_FIELDS: FieldDef[] = [
  f('WorkerUrl', 'text', { trimSlash: true, placeholder: 'ph.WorkerUrl', span: 12 }),
  f('WorkerValidKey', 'secret', { span: 12 }),
];

export const PAYMENT_FIELDS: FieldDef[] = [
  f('PayAddress', 'text', { trimSlash: true, placeholder: 'ph.PayAddress' }),
  f('EpayId', 'text', { placeholder: 'ph.EpayId' }),
  f('EpayKey', 'secret'),
  f('Price', 'number', { min: 0, step: 0.1, extra: 'extra.Price' }),
  f('MinTopUp', 'number', { min: 1, extra: 'extra.MinTopUp' }),
  f('CustomCallbackAddress', 'text', {
    trimSlash: true,
    placeholder: 'ph.CustomCallbackAddress',
    extra: 'extra.CustomCallbackAddress',
  }),
  f('TopupGroupRatio', 'json', { extra: 'extra.TopupGroupRatio', rows: 4 }),
];

// new-api's Stripe and Creem options (new-api-compat.md §29, §31); the secrets are never read back
export const STRIPE_FIELDS: FieldDef[] = [
  f('StripeApiSecret', 'secret'),
  f('StripeWebhookSecret', 'secret'),
  f('StripePriceId', 'text', { placeholder: 'ph.StripePriceId' }),
  f('StripeUnitPrice', 'number', { min: 0, step: 0.1 }),
  f('StripeMinTopUp', 'number', { min: 1 }),
  f('StripePromotionCodesEnabled', 'switch'),
];

export const CREEM_FIELDS: FieldDef[] = [
  f('CreemApiKey', 'secret'),
  f('CreemWebhookSecret', 'secret'),
  f('CreemTestMode', 'switch'),
  f('CreemProducts', 'json', { rows: 6, span: 24 }),
];

export const LOGIN_TOGGLES = [
  'PasswordLoginEnabled',
  'PasswordRegisterEnabled',
  'EmailVerificationEnabled',
  'RegisterEnabled',
  'GitHubOAuthEnabled',
  'LinuxDOOAuthEnabled',
  'WeChatAuthEnabled',
  'TelegramOAuthEnabled',
  'TurnstileCheckEnabled',
  'oidc.enabled',
  'passkey.enabled',
] as const;

export const EMAIL_RESTRICTION_FIELDS: FieldDef[] = [
  f('EmailDomainRestrictionEnabled', 'switch', { span: 12 }),
  f('EmailAliasRestrictionEnabled', 'switch', { span: 12 }),
];

export const SMTP_FIELDS: FieldDef[] = [
  f('SMTPServer', 'text', { placeholder: 'ph.SMTPServer' }),
  f('SMTPPort', 'number', { min: 1, max: 65535 }),
  f('SMTPAccount', 'text'),
  f('SMTPFrom', 'text'),
  f('SMTPToken', 'secret'),
  f('SMTPSSLEnabled', 'switch', { extra: 'extra.SMTPSSLEnabled' }),
];

export const OIDC_FIELDS: FieldDef[] = [
  f('oidc.well_known', 'text', { placeholder: 'ph.wellKnown', extra: 'extra.wellKnown', span: 24 }),
  f('oidc.client_id', 'text', { span: 12 }),
  f('oidc.client_secret', 'secret', { span: 12 }),
  f('oidc.authorization_endpoint', 'text'),
  f('oidc.token_endpoint', 'text'),
  f('oidc.user_info_endpoint', 'text'),
];

export const GITHUB_FIELDS: FieldDef[] = [
  f('GitHubClientId', 'text', { span: 12 }),
  f('GitHubClientSecret', 'secret', { span: 12 }),
];

export const LINUXDO_FIELDS: FieldDef[] = [
  f('LinuxDOClientId', 'text', { span: 12 }),
  f('LinuxDOClientSecret', 'secret', { span: 12 }),
];

export const WECHAT_FIELDS: FieldDef[] = [
  f('WeChatServerAddress', 'text', { trimSlash: true }),
  f('WeChatServerToken', 'secret'),
  f('WeChatAccountQRCodeImageURL', 'text'),
];

export const TELEGRAM_FIELDS: FieldDef[] = [
  f('TelegramBotToken', 'secret', { span: 12 }),
  f('TelegramBotName', 'text', { span: 12 }),
];

export const TURNSTILE_FIELDS: FieldDef[] = [
  f('TurnstileSiteKey', 'secret', { span: 12 }),
  f('TurnstileSecretKey', 'secret', { span: 12 }),
];

// ---- other tab ----

export const NOTICE_FIELDS: FieldDef[] = [f('Notice', 'textarea', { extra: 'extra.markdown', rows: 6 })];

export const BRANDING_FIELDS: FieldDef[] = [
  f('SystemName', 'text', { span: 12 }),
  f('Logo', 'text', { span: 12, placeholder: 'ph.Logo' }),
  f('HomePageContent', 'textarea', { extra: 'extra.HomePageContent', rows: 6 }),
  f('About', 'textarea', { extra: 'extra.About', rows: 6 }),
  f('Footer', 'textarea', { extra: 'extra.Footer', rows: 3 }),
];
