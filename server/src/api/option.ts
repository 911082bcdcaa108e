// /api/option (root only, new-api-compat.md §3.4): read every option except credentials, change one at a time with
// validation.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { authGuards } from './auth.js';
import { fail, ok } from '../lib/http.js';
import { numberInput } from '../lib/input.js';
import { JSON_OPTION_KEYS, defaultOptions, isSecretOptionKey } from '../services/options.js';
import { creemProductsProblem } from '../services/creem-topup.js';
import { DEFAULT_MODEL_RATIO } from '../services/pricing/defaults.js';
import { loginSwitchProblem } from '../services/login-methods.js';
import { isTimeZone } from '../services/limits/periods.js';
import { LimitInputError, parseGroupDefaultsInput } from '../services/limits/index.js';
import { workerUrlProblem } from '../services/worker-url.js';
import { AFFINITY_PREFIX, affinityOptionProblem } from '../services/channel-affinity/setting.js';
import { AffinityClearError, channelAffinity } from '../services/channel-affinity/index.js';
import { queryOf } from './route-helpers.js';

const DEFAULTS = defaultOptions();
const BOOLEAN_KEYS = new Set(Object.keys(DEFAULTS).filter((k) => DEFAULTS[k] === 'true' || DEFAULTS[k] === 'false'));
const NUMERIC_KEYS = new Set(Object.keys(DEFAULTS).filter((k) => /^-?\d+(\.\d+)?$/.test(DEFAULTS[k])));
/** whole days, 0 = keep forever (services/log-retention.ts) */
const RETENTION_KEYS = new Set(['LogRetentionDays', 'QuotaDataRetentionDays']);
const DOMAIN_RE = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,}$/i;

/** Turning a login method on requires its credentials to be saved first. */
const REQUIRES: Array<{ key: string; needs: string; message: string }> = [
  {
    key: 'GitHubOAuthEnabled',
    needs: 'GitHubClientId',
    message: '无法启用 GitHub OAuth，请先填入 GitHub Client Id 以及 GitHub Client Secret！',
  },
  {
    key: 'oidc.enabled',
    needs: 'oidc.client_id',
    message: '无法启用 OIDC 登录，请先填入 OIDC Client Id 以及 OIDC Client Secret！',
  },
  {
    key: 'LinuxDOOAuthEnabled',
    needs: 'LinuxDOClientId',
    message: '无法启用 LinuxDO OAuth，请先填入 LinuxDO Client Id 以及 LinuxDO Client Secret！',
  },
  {
    key: 'discord.enabled',
    needs: 'discord.client_id',
    message: '无法启用 Discord OAuth，请先填入 Discord Client Id 以及 Discord Client Secret！',
  },
  {
    key: 'EmailDomainRestrictionEnabled',
    needs: 'EmailDomainWhitelist',
    message: '无法启用邮箱域名限制，请先填入限制的邮箱域名！',
  },
  {
    key: 'WeChatAuthEnabled',
    needs: 'WeChatServerAddress',
    message: '无法启用微信登录，请先填入微信登录相关配置信息！',
  },
  {
    key: 'TurnstileCheckEnabled',
    needs: 'TurnstileSiteKey',
    message: '无法启用 Turnstile 校验，请先填入 Turnstile 校验相关配置信息！',
  },
  {
    key: 'TelegramOAuthEnabled',
    needs: 'TelegramBotToken',
    message: '无法启用 Telegram OAuth，请先填入 Telegram Bot Token！',
  },
];

/** The wire value as the stored string: booleans become 'true'/'false', numbers their decimal text. */
function asOptionString(v: unknown): string | null {
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (v === null || v === undefined) return '';
  return null;
}

/** Stripe's key formats (sk_/rk_ secret keys, whsec_ signing secrets, price_ ids), so a pasted wrong key is caught
 * on save rather than at the first payment; the price and the minimum must be positive. */
function stripeOptionProblem(key: string, v: string): string | null {
  if (key === 'StripeApiSecret' && v !== '' && !/^(sk|rk)_/.test(v)) return '无效的Stripe API密钥';
  if (key === 'StripeWebhookSecret' && v !== '' && !v.startsWith('whsec_')) return '无效的Stripe Webhook签名密钥';
  if (key === 'StripePriceId' && v !== '' && !v.startsWith('price_')) return '无效的Stripe价格ID';
  if (key === 'StripeUnitPrice' && !((numberInput(v) ?? 0) > 0)) return `${key} 的值必须大于 0`;
  if (key === 'StripeMinTopUp' && !/^[1-9]\d{0,8}$/.test(v)) return `${key} 的值必须是正整数`;
  return null;
}

/** Returns an error message, or null when `key` may be set to `value`. */
export function validateOption(ctx: AppContext, key: string, value: string): string | null {
  if (!ctx.options.has(key)) return `未知的配置项：${key}`;
  if (BOOLEAN_KEYS.has(key) && value !== 'true' && value !== 'false') return `${key} 的值必须是 true 或 false`;
  if (NUMERIC_KEYS.has(key) && numberInput(value) === null) return `${key} 的值必须是数字`;
  if (RETENTION_KEYS.has(key) && !/^\d{1,6}$/.test(value.trim())) return `${key} 的值必须是非负整数`;
  if (JSON_OPTION_KEYS.has(key)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      return `${key} 不是合法的 JSON 字符串`;
    }
    if (key === 'GroupRatio') {
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return 'GroupRatio 不是合法的 JSON 字符串';
      for (const [name, ratio] of Object.entries(parsed as Record<string, unknown>)) {
        if (typeof ratio !== 'number' || !Number.isFinite(ratio)) return `分组 ${name} 的倍率必须是数字`;
        if (ratio < 0) return `分组 ${name} 的倍率不能为负数`;
      }
    }
    if (key === 'UsageLimitGroupDefaults') {
      // the per-group limits take the same checks as a token's or a user's (services/limits/settings.ts)
      try {
        parseGroupDefaultsInput(parsed);
      } catch (e) {
        if (e instanceof LimitInputError) return e.message;
        throw e;
      }
    }
  }
  // read as a share of max_tokens (relay/provider-settings.ts): only 0 < p < 1 is used, anything else would be ignored
  if (key.endsWith('.thinking_adapter_budget_tokens_percentage')) {
    const p = numberInput(value);
    if (p === null || !(p > 0 && p < 1)) return `${key} 的值必须大于 0 且小于 1`;
  }
  if (key.startsWith(AFFINITY_PREFIX)) {
    const affinity = affinityOptionProblem(key, value);
    if (affinity) return affinity;
  }
  if ((key === 'checkin_setting.min_quota' || key === 'checkin_setting.max_quota') && !/^\d{1,12}$/.test(value.trim()))
    return `${key} 的值必须是非负整数`;
  const stripe = stripeOptionProblem(key, value.trim());
  if (stripe) return stripe;
  if (key === 'CreemProducts') {
    const creem = creemProductsProblem(value);
    if (creem) return creem;
  }
  if (key === 'RelayErrorLanguage' && value !== 'zh' && value !== 'en') return `${key} 的值必须是 zh 或 en`;
  if (key === 'UsageLimitTimeZone' && value !== '' && !isTimeZone(value))
    return `${value} 不是有效的时区名称（IANA 格式，如 Asia/Shanghai）`;
  if (key === 'EmailDomainWhitelist' && value.trim() !== '') {
    const domains = value.split(',').map((d) => d.trim());
    if (domains.some((d) => !DOMAIN_RE.test(d))) return '邮箱域名白名单格式不正确';
  }
  for (const rule of REQUIRES) {
    if (rule.key === key && value === 'true' && ctx.options.get(rule.needs).trim() === '') return rule.message;
  }
  const unavailable = loginSwitchProblem(key, value);
  if (unavailable) return unavailable;
  return null;
}

export async function registerOptionRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  const auth = authGuards(ctx);
  app.get('/api/option/', { preHandler: auth.root }, async () =>
    ok(
      ctx.options
        .entries()
        .filter(([key]) => !isSecretOptionKey(key))
        .map(([key, value]) => ({ key, value })),
    ),
  );

  app.put('/api/option/', { preHandler: auth.root }, async (req, reply) => {
    const body = req.body;
    if (!body || typeof body !== 'object' || Array.isArray(body)) return reply.status(400).send(fail('无效的参数'));
    const { key, value: raw } = body as { key?: unknown; value?: unknown };
    if (typeof key !== 'string' || !key) return reply.status(400).send(fail('无效的参数'));
    const value = asOptionString(raw);
    if (value === null) return fail(`${key} 的值类型无效`);
    const problem =
      validateOption(ctx, key, value) ?? (key === 'WorkerUrl' ? await workerUrlProblem(ctx, value) : null);
    if (problem) return fail(problem);
    await ctx.options.set(key, value);
    return ok(undefined, '');
  });

  // new-api's channel affinity cache (services/channel-affinity/): entries per rule, and clearing all or one rule's
  app.get('/api/option/channel_affinity_cache', { preHandler: auth.root }, async () =>
    ok(await channelAffinity(ctx).stats()),
  );
  app.delete('/api/option/channel_affinity_cache', { preHandler: auth.root }, async (req, reply) => {
    const q = queryOf(req);
    if ((q.all ?? '').trim() === 'true') return ok({ deleted: await channelAffinity(ctx).clear(null) });
    const rule = (q.rule_name ?? '').trim();
    if (!rule) return reply.status(400).send(fail('缺少参数：rule_name，或使用 all=true 清空全部'));
    try {
      return ok({ deleted: await channelAffinity(ctx).clear(rule) });
    } catch (err) {
      if (err instanceof AffinityClearError) return reply.status(400).send(fail(err.message));
      throw err;
    }
  });

  // (sic) new-api's route name.
  app.post('/api/option/rest_model_ratio', { preHandler: auth.root }, async () => {
    await ctx.options.set('ModelRatio', JSON.stringify(DEFAULT_MODEL_RATIO));
    return ok(undefined, '');
  });
}
