// Runtime settings (new-api-compat.md §6.1): compiled defaults overridden by the `options` table, held in memory and
// re-read every SYNC_FREQUENCY so several nodes converge. Listeners hear every change (caches depend on them).
import { EventEmitter } from 'node:events';
import type { Kysely } from 'kysely';
import type { DbKind } from '../config.js';
import type { Database } from '../db/schema.js';
import {
  DEFAULT_CACHE_RATIO,
  DEFAULT_COMPLETION_RATIO,
  DEFAULT_MODEL_PRICE,
  DEFAULT_MODEL_RATIO,
} from './pricing/defaults.js';
import { affinityDefaults } from './channel-affinity/setting.js';

export const DEFAULT_DISABLE_KEYWORDS = [
  'Your credit balance is too low',
  'This organization has been disabled.',
  'You exceeded your current quota',
  'Permission denied',
  'The security token included in the request is invalid',
  'Operation not allowed',
  'Your account is not authorized',
].join('\n');

/** Every option key with new-api's default value, as the string stored in the `options` table. */
export function defaultOptions(): Record<string, string> {
  const b = (v: boolean) => (v ? 'true' : 'false');
  const j = (v: unknown) => JSON.stringify(v);
  return {
    // auth and registration
    PasswordLoginEnabled: b(true),
    PasswordRegisterEnabled: b(true),
    RegisterEnabled: b(true),
    EmailVerificationEnabled: b(false),
    GitHubOAuthEnabled: b(false),
    LinuxDOOAuthEnabled: b(false),
    TelegramOAuthEnabled: b(false),
    WeChatAuthEnabled: b(false),
    TurnstileCheckEnabled: b(false),
    EmailDomainRestrictionEnabled: b(false),
    EmailAliasRestrictionEnabled: b(false),
    EmailDomainWhitelist: 'gmail.com,163.com,126.com,qq.com,outlook.com,hotmail.com,icloud.com,yahoo.com,foxmail.com',
    // credentials
    GitHubClientId: '',
    GitHubClientSecret: '',
    LinuxDOClientId: '',
    LinuxDOClientSecret: '',
    WeChatServerAddress: '',
    WeChatServerToken: '',
    WeChatAccountQRCodeImageURL: '',
    TelegramBotToken: '',
    TelegramBotName: '',
    TurnstileSiteKey: '',
    TurnstileSecretKey: '',
    SMTPServer: '',
    SMTPPort: '587',
    SMTPAccount: '',
    SMTPFrom: '',
    SMTPToken: '',
    SMTPSSLEnabled: b(false),
    EpayId: '',
    EpayKey: '',
    'oidc.enabled': b(false),
    'oidc.client_id': '',
    'oidc.client_secret': '',
    'oidc.well_known': '',
    'oidc.authorization_endpoint': '',
    'oidc.token_endpoint': '',
    'oidc.user_info_endpoint': '',
    'discord.enabled': b(false),
    'discord.client_id': '',
    'discord.client_secret': '',
    // passkey sign-in (new-api-compat.md §9.8)
    'passkey.enabled': b(false),
    // site content
    Notice: '',
    About: '',
    HomePageContent: '',
    Footer: '',
    SystemName: 'New API',
    Logo: '',
    ServerAddress: 'http://localhost:3000',
    WorkerUrl: '',
    WorkerValidKey: '',
    TopUpLink: '',
    // none by default (the spec's default; new-api's current one too): links named in one language only are an
    // operator's choice
    Chats: '[]',
    'general_setting.docs_link': 'https://docs.newapi.pro',
    // the language of relay errors for clients whose Accept-Language names neither zh nor en (lib/relay-english.ts)
    RelayErrorLanguage: 'zh',
    'general_setting.ping_interval_enabled': b(false),
    'general_setting.ping_interval_seconds': '60',
    DefaultCollapseSidebar: b(false),
    // quota and economy
    QuotaPerUnit: '500000',
    DisplayInCurrencyEnabled: b(true),
    DisplayTokenStatEnabled: b(true),
    QuotaForNewUser: '0',
    QuotaForInviter: '0',
    QuotaForInvitee: '0',
    QuotaRemindThreshold: '1000',
    PreConsumedQuota: '500',
    Price: '7.3',
    MinTopUp: '1',
    TopupGroupRatio: j({ default: 1, vip: 1, svip: 1 }),
    PayAddress: '',
    CustomCallbackAddress: '',
    // new-api's Stripe top-up (services/stripe-topup.ts): on when the secret, the webhook secret and the price are set
    StripeApiSecret: '',
    StripeWebhookSecret: '',
    StripePriceId: '',
    StripeUnitPrice: '8.0',
    StripeMinTopUp: '1',
    StripePromotionCodesEnabled: b(false),
    // new-api's Creem top-up (services/creem-topup.ts): on when the key, the webhook secret and a product are set
    CreemApiKey: '',
    CreemWebhookSecret: '',
    CreemProducts: '[]',
    CreemTestMode: b(false),
    // relay and operations
    RetryTimes: '0',
    AutomaticDisableChannelEnabled: b(false),
    AutomaticEnableChannelEnabled: b(false),
    ChannelDisableThreshold: '5',
    AutomaticDisableKeywords: DEFAULT_DISABLE_KEYWORDS,
    LogConsumeEnabled: b(true),
    // days of consume/error logs and of dashboard buckets kept (0: forever; services/log-retention.ts)
    LogRetentionDays: '0',
    QuotaDataRetentionDays: '0',
    DataExportEnabled: b(true),
    DataExportInterval: '5',
    DataExportDefaultTime: 'hour',
    DrawingEnabled: b(true),
    TaskEnabled: b(true),
    DemoSiteEnabled: b(false),
    SelfUseModeEnabled: b(false),
    StreamCacheQueueLength: '0',
    CheckSensitiveEnabled: b(true),
    CheckSensitiveOnPromptEnabled: b(true),
    CheckSensitiveOnCompletionEnabled: b(false),
    StopOnSensitiveEnabled: b(true),
    SensitiveWords: 'test_sensitive',
    // model rate limit
    ModelRequestRateLimitEnabled: b(false),
    ModelRequestRateLimitDurationMinutes: '1',
    ModelRequestRateLimitCount: '0',
    ModelRequestRateLimitSuccessCount: '1000',
    // midjourney
    MjNotifyEnabled: b(false),
    MjAccountFilterEnabled: b(false),
    MjModeClearEnabled: b(false),
    MjForwardUrlEnabled: b(true),
    MjActionCheckSuccessEnabled: b(true),
    // pricing maps
    ModelRatio: j(DEFAULT_MODEL_RATIO),
    ModelPrice: j(DEFAULT_MODEL_PRICE),
    CompletionRatio: j(DEFAULT_COMPLETION_RATIO),
    CacheRatio: j(DEFAULT_CACHE_RATIO),
    GroupRatio: j({ default: 1, vip: 1, svip: 1 }),
    UserUsableGroups: j({ default: '默认分组', vip: 'vip分组' }),
    // hierarchical settings
    'claude.model_headers_settings': '{}',
    'claude.default_max_tokens': j({ default: 8192 }),
    'claude.thinking_adapter_enabled': b(true),
    'claude.thinking_adapter_budget_tokens_percentage': '0.8',
    'gemini.safety_settings': j({ default: 'OFF', HARM_CATEGORY_CIVIC_INTEGRITY: 'BLOCK_NONE' }),
    'gemini.version_settings': j({ default: 'v1beta', 'gemini-1.0-pro': 'v1' }),
    'gemini.supported_imagine_models': j(['gemini-2.0-flash-exp-image-generation']),
    'gemini.thinking_adapter_enabled': b(false),
    'gemini.thinking_adapter_budget_tokens_percentage': '0.6',
    'global.pass_through_request_enabled': b(false),
    // new-api's daily check-in (services/checkin.ts): off by default, a reward drawn from [min_quota, max_quota]
    'checkin_setting.enabled': b(false),
    'checkin_setting.min_quota': '1000',
    'checkin_setting.max_quota': '10000',
    // ours: per-group default usage limits, {group: {rpm, tpm, budget, period, reset}} (services/limits/)
    UsageLimitGroupDefaults: '{}',
    // ours: the IANA time zone of the limits' calendar periods and the channels' daily caps; '' = the server's own
    UsageLimitTimeZone: '',
    // new-api's channel affinity, one row per field (services/channel-affinity/setting.ts)
    ...affinityDefaults(),
  };
}

/** Keys whose value must be valid JSON (spec §5 Settings). */
export const JSON_OPTION_KEYS = new Set([
  'ModelRatio',
  'ModelPrice',
  'CompletionRatio',
  'CacheRatio',
  'GroupRatio',
  'UserUsableGroups',
  'TopupGroupRatio',
  'CreemProducts',
  'Chats',
  'claude.model_headers_settings',
  'claude.default_max_tokens',
  'gemini.safety_settings',
  'gemini.version_settings',
  'gemini.supported_imagine_models',
  'UsageLimitGroupDefaults',
]);

/** Option keys never returned by GET /api/option/ (new-api-compat.md §3.4). */
export function isSecretOptionKey(key: string): boolean {
  return /(Token|Secret|Key)$/.test(key) || key === 'oidc.client_secret' || key === 'discord.client_secret';
}

export class OptionStore extends EventEmitter {
  private readonly values = new Map<string, string>();
  private readonly parsed = new Map<string, { raw: string; value: unknown }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly kind: DbKind,
  ) {
    super();
    this.setMaxListeners(100);
    for (const [k, v] of Object.entries(defaultOptions())) this.values.set(k, v);
  }

  /** Applies every stored row over the defaults; emits `change` for values that differ. */
  async load(): Promise<void> {
    const rows = await this.db.selectFrom('options').select(['key', 'value']).execute();
    for (const row of rows) this.apply(row.key, row.value ?? '');
  }

  startSync(intervalSec: number): void {
    this.stopSync();
    this.timer = setInterval(() => {
      this.load().catch((err) => this.emit('error', err));
    }, intervalSec * 1000);
    this.timer.unref();
  }

  stopSync(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private apply(key: string, value: string): void {
    if (this.values.get(key) === value) return;
    this.values.set(key, value);
    this.emit('change', key, value);
  }

  has(key: string): boolean {
    return this.values.has(key);
  }

  get(key: string): string {
    return this.values.get(key) ?? '';
  }

  bool(key: string): boolean {
    return this.get(key) === 'true';
  }

  num(key: string, fallback = 0): number {
    const n = Number(this.get(key));
    return Number.isFinite(n) && this.get(key).trim() !== '' ? n : fallback;
  }

  /** Parsed JSON value, cached until the raw text changes. Invalid JSON yields the fallback. */
  json<T>(key: string, fallback: T): T {
    const raw = this.get(key);
    const hit = this.parsed.get(key);
    if (hit && hit.raw === raw) return hit.value as T;
    let value: unknown = fallback;
    try {
      value = raw.trim() === '' ? fallback : JSON.parse(raw);
    } catch {
      value = fallback;
    }
    this.parsed.set(key, { raw, value });
    return value as T;
  }

  entries(): Array<[string, string]> {
    return [...this.values.entries()];
  }

  /** Persists one option and updates memory. Validation is the caller's job (api/option.ts). */
  async set(key: string, value: string): Promise<void> {
    await this.upsert(key, value);
    this.apply(key, value);
  }

  private async upsert(key: string, value: string): Promise<void> {
    if (this.kind === 'mysql') {
      await this.db.insertInto('options').values({ key, value }).onDuplicateKeyUpdate({ value }).execute();
    } else {
      await this.db
        .insertInto('options')
        .values({ key, value })
        .onConflict((oc) => oc.column('key').doUpdateSet({ value }))
        .execute();
    }
  }
}
