// Channel test, test-all, balance and model-list probes (new-api-compat.md §4.9, §3.4). A test sends one small request
// through the same adaptor the relay uses (so base URL, auth header, Azure deployment paths and model mapping are
// exercised), logs it as a consume log with token name 模型测试 and charges nothing. Every probe goes out through the
// relay's transport (relay/transport/), so a channel's proxy applies to it as to the relay's own calls.
import type { AppContext } from '../context.js';
import type { RelayServices } from './services.js';
import type { CachedChannel } from '../services/cache/channel-cache.js';
import { CHANNEL_STATUS_AUTO_DISABLED, CHANNEL_STATUS_ENABLED } from '../services/channel-status.js';
import { channelBaseUrl } from '../services/channel-types.js';
import { getPriceData, textQuota } from '../services/pricing/index.js';
import type { RelayMode } from './modes/mode.js';
import { chatMode, embeddingsMode } from './modes/text.js';
import { adaptorFor, hasAdaptor, unsupportedTypeMessage, wireOf, type RelayInfo } from './providers/index.js';
import { transportFor } from './channel-setting.js';
import type { OutgoingRequest } from './transport/index.js';
import { UpstreamCall } from './upstream-call.js';
import { extractUsage } from './usage.js';
import { codecFor } from './formats/index.js';
import type { HubRequest } from './hub/types.js';
import { BEDROCK_MODELS } from './providers/bedrock/models.js';
import { usageOfHub } from './hub/usage.js';
import { channelRedactor, type SentRequest } from './redact.js';
import {
  anthropicModelsUrl,
  geminiModelsUrl,
  listAnthropicModels,
  listGeminiModels,
  VERTEX_MODELS,
  type GetJson,
} from './upstream-models.js';

const ANTHROPIC_TYPE = 14;
const GEMINI_TYPE = 24;
const VERTEX_TYPE = 41;
const BEDROCK_TYPE = 33;

/** One probe request, read whole (a body that fails after the head throws); redirects are never followed. */
async function probe(
  svc: RelayServices,
  channel: Pick<CachedChannel, 'setting'>,
  req: OutgoingRequest,
): Promise<{ status: number; body: Buffer; headers: Record<string, string> }> {
  const call = await new UpstreamCall(false).send(transportFor(channel, svc.upstream), req);
  if (call.error) throw call.error;
  return { status: call.statusCode, body: call.body(), headers: call.headerRecord() };
}

export interface ProbeResult {
  ok: boolean;
  message: string;
  /** seconds */
  time: number;
  /** the error warrants disabling (new-api-compat.md §4.9) */
  disableWorthy: boolean;
}

const UNTESTABLE: Record<number, string> = { 2: 'midjourney', 5: 'midjourney plus', 36: 'suno' };

function isEmbeddingModel(model: string, type: number): boolean {
  return (
    type === 44 ||
    model.includes('embedding') ||
    model.startsWith('m3e') ||
    model.includes('bge-') ||
    model.includes('embed')
  );
}

export function testModelOf(ch: CachedChannel, requested?: string): string {
  return requested?.trim() || ch.testModel || ch.models[0] || 'gpt-4o-mini';
}

/** A channel test; its error text (shown in the console, stored as a disable reason) keeps none of the channel's secrets. */
export async function testChannel(
  ctx: AppContext,
  svc: RelayServices,
  ch: CachedChannel,
  requestedModel?: string,
): Promise<ProbeResult> {
  const sent: SentRequest = { headers: {} };
  let r: ProbeResult;
  try {
    r = await runTest(ctx, svc, ch, requestedModel, sent);
  } catch (e) {
    // a channel whose request cannot even be built (an Azure channel without a base URL: Invalid URL) failed its test
    r = { ok: false, message: (e as Error).message || '测试失败', time: 0, disableWorthy: false };
  }
  return r.ok ? r : { ...r, message: channelRedactor(ch.key, sent)(r.message) };
}

async function runTest(
  ctx: AppContext,
  svc: RelayServices,
  ch: CachedChannel,
  requestedModel: string | undefined,
  sent: SentRequest,
): Promise<ProbeResult> {
  if (UNTESTABLE[ch.type])
    return {
      ok: false,
      message: `${UNTESTABLE[ch.type]} channel test is not supported`,
      time: 0,
      disableWorthy: false,
    };
  if (!hasAdaptor(ch.type))
    return { ok: false, message: unsupportedTypeMessage(ch.type), time: 0, disableWorthy: false };
  const model = testModelOf(ch, requestedModel);
  const mode: RelayMode = isEmbeddingModel(model, ch.type) ? embeddingsMode : chatMode;
  const mapped = ch.modelMapping?.[model];
  const info: RelayInfo = {
    settings: svc.providers,
    channel: ch,
    mode,
    originModel: model,
    upstreamModel: mapped || model,
    isStream: false,
    clientFormat: 'openai',
    clientHeaders: {},
  };
  const body: Record<string, unknown> = { model: info.upstreamModel };
  if (mode === embeddingsMode) body.input = 'hello world';
  else {
    body.messages = [{ role: 'user', content: 'hi' }];
    if (/^o[13]/.test(model)) body.max_completion_tokens = 10;
    else if (model.startsWith('gemini')) body.max_tokens = 300;
    else if (model.endsWith('thinking') && !model.startsWith('claude')) body.max_tokens = 50;
    else body.max_tokens = 10;
  }
  const adaptor = adaptorFor(ch.type);
  // the relay's own provider code builds the request: an OpenAI chat request, translated for other formats
  const wire = wireOf(adaptor, info);
  let payload: Record<string, unknown> = body;
  if (wire === 'openai') await adaptor.convertRequest(info, body);
  else if (mode === embeddingsMode)
    return {
      ok: false,
      message: 'embedding models of this channel type cannot be tested',
      time: 0,
      disableWorthy: false,
    };
  else {
    const hub = { ...(body as unknown as HubRequest), model: info.upstreamModel };
    payload = adaptor.fromHub
      ? await adaptor.fromHub(info, hub)
      : codecFor(wire).requestFromHub(hub, { model: info.upstreamModel, stream: false });
  }
  if (ch.paramOverride) Object.assign(payload, ch.paramOverride);

  // price lookup like a real request (fails for unpriced models unless self-use mode is on)
  const root = await ctx.db
    .selectFrom('users')
    .select(['id', 'username', 'group'])
    .where('id', '=', 1)
    .executeTakeFirst();
  const group = root?.group || 'default';
  let price;
  try {
    price = getPriceData(ctx.options, model, group, { userId: 1 });
  } catch (e) {
    return { ok: false, message: (e as Error).message, time: 0, disableWorthy: false };
  }

  const started = Date.now();
  const target = adaptor.target(info);
  try {
    const headers = { 'content-type': 'application/json', accept: 'application/json', ...adaptor.headers(info) };
    // read after authorize, whose token or signature an echo could carry too
    sent.headers = headers;
    sent.path = target.path;
    const bytes = Buffer.from(JSON.stringify(payload));
    await adaptor.authorize?.(info, { method: 'POST', origin: target.origin, path: target.path, headers, body: bytes });
    const up = await probe(svc, ch, {
      origin: target.origin,
      path: target.path,
      method: 'POST',
      headers,
      body: bytes,
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
    });
    let buf = up.body;
    const time = (Date.now() - started) / 1000;
    if (up.status !== 200) {
      const pe = adaptor.parseError(up.status, buf, up.headers);
      if (up.status === 401) adaptor.unauthorized?.(info);
      const disableWorthy = svc.channelStatus.isDisableWorthy(ch.type, {
        status: up.status,
        message: pe.message,
        type: pe.type,
        code: pe.code,
      });
      return { ok: false, message: pe.message || `status code ${up.status}`, time, disableWorthy };
    }
    // an adaptor that answers in another format gives its OpenAI form and usage, as in the relay
    const converted = adaptor.convertResponse ? adaptor.convertResponse(info, buf) : null;
    if (converted) buf = converted.body;
    let usage = converted ? converted.usage : wire === 'openai' ? extractUsage(buf) : null;
    try {
      const answer = JSON.parse(buf.toString('utf8'));
      if (wire !== 'openai')
        usage = usageOfHub(
          codecFor(wire).responseToHub(answer, info.upstreamModel).usage ?? null,
          wire === 'anthropic',
        );
    } catch {
      return {
        ok: false,
        message: `invalid response: ${buf.toString('utf8').slice(0, 200)}`,
        time,
        disableWorthy: false,
      };
    }
    usage ??= { prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0 };
    const quota = textQuota(price, usage, ctx.options.num('QuotaPerUnit', 500000));
    if (ctx.options.bool('LogConsumeEnabled') && root) {
      svc.logs.add({
        user_id: root.id,
        created_at: Math.floor(Date.now() / 1000),
        type: 2,
        content: '模型测试',
        username: root.username,
        token_name: '模型测试',
        model_name: model,
        quota,
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
        use_time: Math.floor(time),
        is_stream: false,
        channel_id: ch.id,
        token_id: 0,
        group,
        other: JSON.stringify({
          model_ratio: price.modelRatio,
          group_ratio: price.groupRatio,
          completion_ratio: price.completionRatio,
          model_price: price.modelPrice,
          frt: -1000,
        }),
      });
    }
    return { ok: true, message: '', time, disableWorthy: false };
  } catch (e) {
    return {
      ok: false,
      message: (e as Error).message || '请求上游地址失败',
      time: (Date.now() - started) / 1000,
      disableWorthy: false,
    };
  }
}

export async function recordTest(ctx: AppContext, channelId: number, time: number): Promise<void> {
  await ctx.db
    .updateTable('channels')
    .set({ test_time: Math.floor(Date.now() / 1000), response_time: Math.round(time * 1000) })
    .where('id', '=', channelId)
    .execute();
}

let running = new WeakMap<AppContext, boolean>();

/** Test-all: one channel at a time, one run at a time; auto-disable / auto-enable as configured. */
/** `notifyRoot`: a manual test-all tells root when it is done (new-api's texts); the timer's runs do not. */
export async function testAllChannels(ctx: AppContext, svc: RelayServices, notifyRoot = false): Promise<boolean> {
  if (running.get(ctx)) return false;
  running.set(ctx, true);
  try {
    await svc.channels.reload();
    const threshold = ctx.options.num('ChannelDisableThreshold', 5);
    const disableOn = ctx.options.bool('AutomaticDisableChannelEnabled');
    const enableOn = ctx.options.bool('AutomaticEnableChannelEnabled');
    const pauseMs = ctx.config.pollingIntervalSec * 1000;
    let first = true;
    for (const ch of svc.channels.all()) {
      if (UNTESTABLE[ch.type] || !hasAdaptor(ch.type)) continue;
      // POLLING_INTERVAL: spread test-all over time so upstream rate limits are not hit by the tests themselves.
      if (!first && pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      first = false;
      // one channel's failure (its test, or storing its outcome) never stops the run: the next channel is tested
      try {
        const r = await testChannel(ctx, svc, ch);
        let ban = r.disableWorthy;
        let reason = r.message;
        if (ch.status === CHANNEL_STATUS_ENABLED && threshold > 0 && r.time > threshold) {
          ban = true;
          reason = `响应时间 ${r.time.toFixed(2)}s 超过阈值 ${threshold.toFixed(2)}s`;
        }
        if (ch.status === CHANNEL_STATUS_ENABLED && ban && disableOn && ch.autoBan)
          await svc.channelStatus.disable(ch.id, reason);
        else if (ch.status === CHANNEL_STATUS_AUTO_DISABLED && r.ok && enableOn) await svc.channelStatus.enable(ch.id);
        await recordTest(ctx, ch.id, r.time);
      } catch (err) {
        ctx.log.warn({ err, channelId: ch.id }, 'channel test failed');
      }
    }
    ctx.changes.publish({ kind: 'channels' });
  } finally {
    running.set(ctx, false);
  }
  if (notifyRoot) void svc.notifier.notifyRoot('channel_test', 'all', '通道测试完成', '所有通道测试已完成');
  return true;
}

// ---- balances (new-api-compat.md §3.4 update_balance)

// Probes reach private addresses on purpose (admins run upstreams there), and carry the channel's key: the URL is
// always built from the channel's base URL, and a redirect is never followed, so the key goes to no other host.
async function getJson(
  svc: RelayServices,
  channel: Pick<CachedChannel, 'setting'>,
  url: string,
  key: string,
  headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'application/json' },
): Promise<any> {
  const u = new URL(url);
  const r = await probe(svc, channel, {
    origin: u.origin,
    path: u.pathname + u.search,
    method: 'GET',
    headers,
    body: null,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  if (r.status !== 200) throw new Error(`status code: ${r.status}`);
  return JSON.parse(r.body.toString('utf8'));
}

// OpenAI's billing endpoints: OpenAI, custom (its base URL, as new-api) and the older OpenAI resellers
const OPENAI_BILLING_TYPES = new Set([1, 6, 7, 8, 9, 10, 12, 13]);

const isoDay = (d: Date) => d.toISOString().slice(0, 10);

/**
 * Fetches the upstream balance and stores it; throws "尚未实现" for other types (new-api-compat.md §3.4 update_balance,
 * new-api's updateChannelBalance). USD, except DeepSeek (its CNY balance, as new-api) and Moonshot (CNY divided by the
 * Price option, the money of $1 of quota, as new-api).
 */
export async function updateBalance(ctx: AppContext, svc: RelayServices, ch: CachedChannel): Promise<number> {
  try {
    return await fetchBalance(ctx, svc, ch);
  } catch (e) {
    // an upstream's message is shown in the console: without the key it was sent with
    throw new Error(channelRedactor(ch.key)((e as Error).message));
  }
}

async function fetchBalance(ctx: AppContext, svc: RelayServices, ch: CachedChannel): Promise<number> {
  const base = ch.baseUrl;
  let balance: number;
  if (OPENAI_BILLING_TYPES.has(ch.type)) {
    const sub = await getJson(svc, ch, `${base}/v1/dashboard/billing/subscription`, ch.key);
    // a paying account's usage of this month, else of the last 100 days (new-api's window)
    const now = new Date();
    const start = sub.has_payment_method
      ? `${isoDay(now).slice(0, 8)}01`
      : isoDay(new Date(now.getTime() - 100 * 86400_000));
    const usage = await getJson(
      svc,
      ch,
      `${base}/v1/dashboard/billing/usage?start_date=${start}&end_date=${isoDay(now)}`,
      ch.key,
    );
    balance = Number(sub.hard_limit_usd ?? 0) - Number(usage.total_usage ?? 0) / 100;
  } else if (ch.type === 40) {
    const j = await getJson(svc, ch, `${base}/v1/user/info`, ch.key);
    if (j?.code !== undefined && j.code !== 20000) throw new Error(`code: ${j.code}, message: ${j.message ?? ''}`);
    balance = Number(j?.data?.totalBalance ?? 0);
  } else if (ch.type === 43) {
    const j = await getJson(svc, ch, `${base}/user/balance`, ch.key);
    const cny = Array.isArray(j?.balance_infos) ? j.balance_infos.find((b: any) => b?.currency === 'CNY') : undefined;
    if (!cny) throw new Error('currency CNY not found');
    balance = Number(cny.total_balance);
  } else if (ch.type === 20) {
    // the default base URL already ends in /api (https://openrouter.ai/api)
    const j = await getJson(svc, ch, `${base.replace(/\/api$/, '')}/api/v1/credits`, ch.key);
    balance = Number(j?.data?.total_credits ?? 0) - Number(j?.data?.total_usage ?? 0);
  } else if (ch.type === 25) {
    const j = await getJson(svc, ch, `${base}/v1/users/me/balance`, ch.key);
    if (!j?.status || j.code !== 0)
      throw new Error(
        `failed to update moonshot balance, status: ${j?.status}, code: ${j?.code}, scode: ${j?.scode ?? ''}`,
      );
    const price = ctx.options.num('Price', 7.3);
    balance = Number(j.data?.available_balance ?? 0) / (price > 0 ? price : 7.3);
  } else {
    throw new Error('尚未实现');
  }
  if (!Number.isFinite(balance)) throw new Error('invalid balance response');
  await ctx.db
    .updateTable('channels')
    .set({ balance, balance_updated_time: Math.floor(Date.now() / 1000) })
    .where('id', '=', ch.id)
    .execute();
  return balance;
}

/**
 * Where an upstream lists its models (new-api's FetchUpstreamModels): {base}/v1/models; Gemini's and Anthropic's own
 * lists (first page; relay/upstream-models.ts pages on); Ali's compatible mode; a base that is a whole chat URL
 * (custom channels) gets its /models sibling.
 */
export function upstreamModelsUrl(type: number, base: string): string {
  if (type === 24) return geminiModelsUrl(base);
  if (type === 14) return anthropicModelsUrl(base);
  if (type === 17) return `${base}/compatible-mode/v1/models`;
  if (base.endsWith('/chat/completions')) return `${base.slice(0, -'/chat/completions'.length)}/models`;
  return `${base}/v1/models`;
}

/**
 * Model ids offered by an upstream ({base}/v1/models; Gemini's and Anthropic's own paged lists; Vertex AI and AWS
 * Bedrock a fixed list, so their keys, which are no bearer tokens, are never sent). `setting`: a stored channel's (its proxy applies); null for a channel not saved yet.
 */
export async function fetchUpstreamModels(
  svc: RelayServices,
  type: number,
  baseUrl: string | null | undefined,
  key: string,
  setting: CachedChannel['setting'] = null,
): Promise<string[]> {
  // the key of a type without an adaptor is no Bearer token (Vertex AI's is a service-account JSON): never send it
  if (!hasAdaptor(type)) throw new Error(unsupportedTypeMessage(type));
  // Vertex AI's key is a service-account JSON, never sent as it is; its list is fixed
  if (type === VERTEX_TYPE) return [...VERTEX_MODELS];
  // Bedrock's key is `AK|SK|region`, an AWS secret that only signs requests and is never sent: the Claude models the
  // relay maps to Bedrock ids (ListFoundationModels would list every vendor's models, most of them not Claude's)
  if (type === BEDROCK_TYPE) return [...BEDROCK_MODELS];
  const base = channelBaseUrl(type, baseUrl);
  if (!base) throw new Error('base_url is required');
  const firstKey = key.split('\n')[0].trim();
  try {
    return await listModels(svc, type, base, firstKey, setting);
  } catch (e) {
    // the console shows the message: a body quoted by a parser keeps no key
    throw new Error(channelRedactor(key)((e as Error).message));
  }
}

async function listModels(
  svc: RelayServices,
  type: number,
  base: string,
  firstKey: string,
  setting: CachedChannel['setting'],
): Promise<string[]> {
  const get: GetJson = (url, headers) => getJson(svc, { setting }, url, firstKey, headers);
  if (type === GEMINI_TYPE) return listGeminiModels(get, base, firstKey);
  if (type === ANTHROPIC_TYPE) return listAnthropicModels(get, base, firstKey);
  const url = upstreamModelsUrl(type, base);
  const j = await getJson(svc, { setting }, url, firstKey);
  const list = Array.isArray(j?.data) ? j.data : [];
  return list.map((m: { id?: string }) => String(m.id ?? '').replace(/^models\//, '')).filter(Boolean);
}

export function resetProbeState(): void {
  running = new WeakMap();
}
