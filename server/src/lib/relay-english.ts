// Relay error messages in the client's language (issue 34): Chinese (new-api's texts) by default, English when the
// request's Accept-Language prefers English (relay/errors.ts, and lib/error-answer.ts for refused relay paths). The
// same English as the console's table (web/src/i18n/server-messages.ts); server/test/i18n/server-messages.test.ts
// checks that every relay error text is here and that both tables agree. Keys with `{0}`, `{1}`, … are patterns;
// their values are translated in turn when known.
export const RELAY_MESSAGES_EN: Record<string, string> = {
  无效的请求路径: 'Invalid request path',
  // quota amounts in currency (new-api writes a full-width dollar sign), also inside English texts
  '＄{0}': '${0}',
  'token quota is not enough, token remain quota: {0}, need quota: {1}':
    'token quota is not enough, token remain quota: {0}, need quota: {1}',
  'chat pre-consumed quota failed, user quota: {0}, need quota: {1}':
    'chat pre-consumed quota failed, user quota: {0}, need quota: {1}',
  请求路径参数过长: 'Request path parameter too long',
  无效的参数: 'Invalid parameter',
  '请求参数中包含非法字符（\\u0000）': 'The request parameters contain an invalid character (\\u0000)',
  数值超出范围: 'Value out of range',
  '渠道 #{0} 的类型不支持 {1} 请求': 'The type of channel #{0} does not support {1} requests',
  '渠道 #{0} 没有可用的密钥': 'Channel #{0} has no enabled key left',
  '上游鉴权失败: {0}': 'Upstream authentication failed: {0}',
  请求上游地址失败: 'Failed to reach the upstream address',
  无效的令牌: 'Invalid token',
  '该令牌额度已用尽 TokenStatusExhausted[{0}]': 'This token quota is used up TokenStatusExhausted[{0}]',
  该令牌已过期: 'This token has expired',
  该令牌状态不可用: 'This token is not available',
  '[{0}] 该令牌额度已用尽 !token.UnlimitedQuota && token.RemainQuota = {1}':
    '[{0}] This token quota is used up !token.UnlimitedQuota && token.RemainQuota = {1}',
  用户已被封禁: 'The user is banned',
  普通用户不支持指定渠道: 'Regular users cannot choose a channel',
  '无效的渠道 Id': 'Invalid channel Id',
  '您的 IP 不在令牌允许访问的列表中': 'Your IP is not on the token allow list',
  '令牌分组 {0} 已被禁用': 'Token group {0} has been disabled',
  // plan billing (services/billing/plan-ledger.ts)
  '订阅额度不足：{0}已用完，将于 {1} 重置': 'Subscription quota exhausted: {0} is used up, it resets at {1}',
  '订阅额度不足：{0}已用完': 'Subscription quota exhausted: {0} is used up',
  每日额度: 'the daily quota',
  每周额度: 'the weekly quota',
  每月额度: 'the monthly quota',
  套餐额度: "the plan's quota",
  '{0} 小时额度': 'the {0}-hour quota',
  没有可用于此请求的订阅套餐: 'No subscription plan can bill this request',
  '分组 {0} 已被弃用': 'Group {0} has been deprecated',
  '该令牌无权访问模型 {0}': 'This token has no access to model {0}',
  未提供令牌: 'No token provided',
  '无效的请求, {0}': 'Invalid request, {0}',
  '无效的请求, multipart body without boundary': 'Invalid request, multipart body without boundary',
  '无效的请求, malformed multipart body': 'Invalid request, malformed multipart body',
  无权访问该分组: 'No access to this group',
  '无效的请求, body must be a JSON object': 'Invalid request, body must be a JSON object',
  '无效的请求, model 名称含有非法字符或过长':
    'Invalid request, the model name contains invalid characters or is too long',
  '无效的请求, Content-Type must be multipart/form-data': 'Invalid request, Content-Type must be multipart/form-data',
  该渠道已被禁用: 'This channel has been disabled',
  '当前分组 {0} 下对于模型 {1} 无可用渠道': 'No available channel for model {1} in group {0}',
  '当前分组上游负载已饱和，请稍后再试': 'The upstream load of the current group is saturated, please try again later',
  '无效的请求, stream 必须是布尔值': 'Invalid request, stream must be a boolean',
  '您已达到请求数限制：{0}分钟内最多请求{1}次':
    'You have reached the request limit: at most {1} requests in {0} minutes',
  '渠道类型 {0}（{1}）暂不支持：本网关还没有该类型的适配器，不会向它转发请求':
    'Channel type {0} ({1}) is not supported yet: this gateway has no adaptor for it and will not forward requests to it',
  '模型 {0} 倍率或价格未配置，请设置或开始自用模式；Model {1} ratio or price not set, please set or start self-use mode':
    'Model {1} ratio or price not set, please set or start self-use mode',
  '模型 {0} 倍率或价格未配置，请联系管理员设置或开始自用模式；Model {1} ratio or price not set, please contact administrator to set or start self-use mode':
    'Model {1} ratio or price not set, please contact administrator to set or start self-use mode',
  // signed vendors (Baidu ERNIE v1, Zhipu v3, Hunyuan, Spark)
  讯飞星火: 'iFlytek Spark',
  腾讯混元: 'Tencent Hunyuan',
  '百度文心 V1': 'Baidu ERNIE V1',
  '智谱 V3': 'Zhipu V3',
  '{0} 只接受文本消息': '{0} takes text messages only',
  '百度文心 V1 的 embeddings 只接受文本输入': 'Baidu ERNIE V1 embeddings take text input only',
  '{0} 不支持工具调用': '{0} does not support tool calls',
  上游拒绝了渠道的访问令牌: "The upstream refused the channel's access token",
  'Cloudflare Workers AI 每次只生成一张图片（n 须为 1）': 'Cloudflare Workers AI makes one image a call (n must be 1)',
  'Cohere v1 不支持 tool_choice required': 'Cohere v1 does not support tool_choice required',
  '{0} 不支持 tool_choice {1}': '{0} does not support tool_choice {1}',
  '{0} 每轮只能调用一个函数': '{0} takes one function call a turn',
  '{0} 不支持 tool_choice required': '{0} does not support tool_choice required',
  'Cloudflare Workers AI 不支持 response_format {0}': 'Cloudflare Workers AI does not support response_format {0}',
};

const PLACEHOLDER = /\{(\d+)\}/g;
const CHINESE = /[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]/;

interface Pattern {
  regex: RegExp;
  slots: number[];
  english: string;
}

// most specific first (the most literal characters), so `无效的请求, {0}` does not shadow a longer fixed text
const PATTERNS: Pattern[] = Object.entries(RELAY_MESSAGES_EN)
  .filter(([key]) => /\{\d+\}/.test(key))
  .map(([key, english]) => {
    const pieces = key.split(PLACEHOLDER);
    const literal = pieces.filter((_, i) => i % 2 === 0);
    const source = pieces
      .map((piece, i) => (i % 2 === 0 ? piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : '([\\s\\S]*?)'))
      .join('');
    const slots = pieces.filter((_, i) => i % 2 === 1).map(Number);
    return { regex: new RegExp(`^${source}$`), slots, english, weight: literal.join('').length };
  })
  .sort((a, b) => b.weight - a.weight);

/** The English of a relay error text, or the text itself when it is not one of ours. */
export function relayMessageInEnglish(text: string, depth = 0): string {
  const exact = RELAY_MESSAGES_EN[text];
  if (exact !== undefined) return exact;
  if (depth > 2 || !CHINESE.test(text)) return text;
  for (const p of PATTERNS) {
    const m = p.regex.exec(text);
    if (!m) continue;
    const values = new Map(p.slots.map((slot, i) => [slot, relayMessageInEnglish(m[i + 1], depth + 1)]));
    return p.english.replace(PLACEHOLDER, (whole, n: string) => values.get(Number(n)) ?? whole);
  }
  return text;
}

/**
 * The site's language for relay errors of clients that name neither Chinese nor English in Accept-Language (the SDKs
 * send none): option RelayErrorLanguage, `zh` (new-api's texts, the default) or `en`. One gateway per process sets it
 * as the option changes (context.ts).
 */
let siteEnglish = false;

export function setRelayErrorLanguage(language: string): void {
  siteEnglish = language === 'en';
}

/**
 * Whether a relay error is told in English: the highest-weighted language of Accept-Language when it is `en`/`en-*`
 * (English) or `zh`/`zh-*` (Chinese), else (no header, `*`, another language) the site's RelayErrorLanguage.
 */
export function prefersEnglish(acceptLanguage: string | string[] | undefined): boolean {
  const header = Array.isArray(acceptLanguage) ? acceptLanguage.join(',') : acceptLanguage;
  if (!header) return siteEnglish;
  let best = '';
  let bestQ = 0;
  for (const part of header.split(',')) {
    const [tag, ...params] = part.trim().split(';');
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (tag && Number.isFinite(q) && q > bestQ) {
      best = tag.trim().toLowerCase();
      bestQ = q;
    }
  }
  if (best === 'en' || best.startsWith('en-')) return true;
  if (best === 'zh' || best.startsWith('zh-')) return false;
  return siteEnglish;
}

/** The error as the client asked to read it: translated when prefersEnglish says so. */
export function inClientLanguage<E extends { message: string; withMessage(message: string): E }>(
  err: E,
  acceptLanguage: string | string[] | undefined,
): E {
  if (!prefersEnglish(acceptLanguage)) return err;
  const english = relayMessageInEnglish(err.message);
  return english === err.message ? err : err.withMessage(english);
}
