// Public site status (new-api-compat.md §3.4) and the content options shown to anonymous visitors.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { ok } from '../lib/http.js';
import { isSetupDone } from './setup.js';
import { loginAvailable } from '../services/login-methods.js';
import { loginPageProviders } from '../services/oauth/custom-providers.js';
import { stripeEnabled } from '../services/stripe-topup.js';
import { creemEnabled, creemProducts } from '../services/creem-topup.js';

/** Third-party logins are advertised only when their routes exist here (services/login-methods.ts). */
export async function buildStatus(ctx: AppContext): Promise<Record<string, unknown>> {
  const o = ctx.options;
  return {
    version: ctx.config.version,
    start_time: ctx.startTime,
    email_verification: o.bool('EmailVerificationEnabled'),
    github_oauth: loginAvailable(o, 'GitHubOAuthEnabled'),
    github_client_id: o.get('GitHubClientId'),
    linuxdo_oauth: loginAvailable(o, 'LinuxDOOAuthEnabled'),
    linuxdo_client_id: o.get('LinuxDOClientId'),
    discord_oauth: loginAvailable(o, 'discord.enabled'),
    discord_client_id: o.get('discord.client_id'),
    telegram_oauth: loginAvailable(o, 'TelegramOAuthEnabled'),
    telegram_bot_name: o.get('TelegramBotName'),
    system_name: o.get('SystemName'),
    logo: o.get('Logo'),
    footer_html: o.get('Footer'),
    wechat_qrcode: o.get('WeChatAccountQRCodeImageURL'),
    wechat_login: loginAvailable(o, 'WeChatAuthEnabled'),
    server_address: o.get('ServerAddress'),
    price: o.num('Price', 7.3),
    min_topup: o.num('MinTopUp', 1),
    turnstile_check: o.bool('TurnstileCheckEnabled'),
    turnstile_site_key: o.get('TurnstileSiteKey'),
    top_up_link: o.get('TopUpLink'),
    docs_link: o.get('general_setting.docs_link'),
    quota_per_unit: o.num('QuotaPerUnit', 500000),
    display_in_currency: o.bool('DisplayInCurrencyEnabled'),
    enable_batch_update: ctx.config.batchUpdateEnabled,
    enable_drawing: o.bool('DrawingEnabled'),
    enable_task: o.bool('TaskEnabled'),
    enable_data_export: o.bool('DataExportEnabled'),
    data_export_default_time: o.get('DataExportDefaultTime'),
    default_collapse_sidebar: o.bool('DefaultCollapseSidebar'),
    enable_online_topup: o.get('PayAddress') !== '' && o.get('EpayId') !== '' && o.get('EpayKey') !== '',
    // new-api has the last two in /api/user/topup/info, which this gateway does not serve (new-api-compat.md §29)
    enable_stripe_topup: stripeEnabled(ctx),
    stripe_unit_price: o.num('StripeUnitPrice', 8),
    stripe_min_topup: o.num('StripeMinTopUp', 1),
    // new-api has these in /api/user/topup/info too (new-api-compat.md §31)
    enable_creem_topup: creemEnabled(ctx),
    creem_products: creemEnabled(ctx) ? creemProducts(ctx) : [],
    mj_notify_enabled: o.bool('MjNotifyEnabled'),
    chats: o.json<unknown[]>('Chats', []),
    chat_link: o.get('ChatLink'),
    chat_link2: o.get('ChatLink2'),
    demo_site_enabled: o.bool('DemoSiteEnabled'),
    self_use_mode_enabled: o.bool('SelfUseModeEnabled'),
    oidc_enabled: loginAvailable(o, 'oidc.enabled'),
    oidc_client_id: o.get('oidc.client_id'),
    oidc_authorization_endpoint: o.get('oidc.authorization_endpoint'),
    // the enabled custom OAuth providers, public fields only (new-api-compat.md §9.9)
    custom_oauth_providers: await loginPageProviders(ctx),
    passkey_login: o.bool('passkey.enabled'),
    setup: await isSetupDone(ctx),
  };
}

export async function registerStatusRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  app.get('/api/status', async () => ok(await buildStatus(ctx)));
  const content: Array<[string, string]> = [
    ['/api/notice', 'Notice'],
    ['/api/about', 'About'],
    ['/api/home_page_content', 'HomePageContent'],
  ];
  for (const [path, key] of content) app.get(path, async () => ok(ctx.options.get(key)));
}
