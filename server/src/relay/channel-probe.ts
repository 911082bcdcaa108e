// Channel test, test-all, balance and model-list probes (new-api-compat.md §4.9, §3.4). A test sends one small request
// through the same adaptor the relay uses (so base URL, auth header, Azure deployment paths and model mapping are
// exercised), logs it as a consume log with token name 模型测试 and charges nothing. Every probe goes out through the
// relay's transport (relay/transport/), so a channel's proxy applies to it as to the relay's own calls.
import { rewriteWhole, VendorRefusal } from './providers/dialect.js';
import type { AppContext } from '../context.js';
import type { RelayServices } from './services.js';
import type { CachedChannel } from '../services/cache/channel-cache.js';
import {
  CHANNEL_STATUS_AUTO_DISABLED,
  CHANNEL_STATUS_ENABLED,
  CHANNEL_STATUS_MANUALLY_DISABLED,
} from '../services/channel-status.js';
import { autoDisabledKeys } from '../services/multi-key-store.js';
import { firstEnabledKey, withKey } from '../services/multi-key-pick.js';
import { channelBaseUrl } from '../services/channel-types.js';
import { recordChannelTest, storeChannelBalance } from '../services/channels.js';
import { getModelPrice, getModelRatio, getPriceData, textQuota } from '../services/pricing/index.js';
import type { RelayMode } from './modes/mode.js';
import { chatMode, embeddingsMode } from './modes/text.js';
import {
  adaptorFor,
  answerCodecOf,
  declares,
  hasAdaptor,
  unsupportedTypeMessage,
  type Adaptor,
} from './providers/index.js';
import type { OutgoingRequest } from './transport/index.js';
import { laneOf } from './attempt.js';
import { laneAttempt, type AttemptInput } from './lanes/lane.js';
import { authorizeUpstream, sendWhole, upstreamHeaders, upstreamTransport } from './lanes/upstream-request.js';
import type { RelayRequest } from './request.js';
import type { HttpResponse } from '../lib/http-response.js';
import { extractUsage } from './usage.js';
import { usageOfHub } from './hub/usage.js';
import { channelRedactor, type SentRequest } from './redact.js';
import { openAIModelsUrl, type GetJson, type UpstreamAccount } from './providers/channel-facts.js';
import { channelFactsOf } from '../services/channel-protocols.js';

/** One probe request through the channel's transport, read whole (sendWhole). */
async function probe(
  svc: RelayServices,
  channel: Pick<CachedChannel, 'setting'>,
  req: OutgoingRequest,
  adaptor: Pick<Adaptor, 'carrier'> = {},
): Promise<{ status: number; body: Buffer; headers: Record<string, string> }> {
  return sendWhole(upstreamTransport(svc, adaptor, channel), req);
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

/** The probe's client request: an OpenAI client's, with no headers of its own (so none is passed on). */
function probeRequest(body: Buffer): RelayRequest {
  return { id: 'channel-test', url: '', headers: {}, ip: '', body, caller: null, sessionUserId: 0 };
}

// The lanes read only whether their client went away while the body was built; the probe's never does.
const PROBE_RESPONSE = { destroyed: false } as unknown as HttpResponse;

/** The attempt a channel test is: a whole (not streamed) request, no reservation, keep-alive or output check. */
function probeInput(
  channel: CachedChannel,
  mode: RelayMode,
  body: Record<string, unknown>,
  raw: Buffer,
  model: string,
): AttemptInput {
  return {
    channel,
    mode,
    body,
    raw,
    model,
    isStream: false,
    clientWantsUsage: false,
    passThrough: false,
    reqId: 'channel-test',
    origin: undefined,
    start: Date.now(),
    prompt: () => 0,
    gate: null,
    keepAlive: null,
    sensitive: null,
  };
}

/**
 * The model a channel test asks for: the one requested, else the channel's test model, else the first of its models
 * that has a price (a test of an unpriced model fails on the price, not on the channel), else its first model.
 */
export function testModelOf(ch: CachedChannel, requested?: string, priced?: (model: string) => boolean): string {
  const explicit = requested?.trim() || ch.testModel;
  if (explicit) return explicit;
  return (priced && ch.models.find(priced)) || ch.models[0] || 'gpt-4o-mini';
}

/** Whether a request for this model can be priced (a price or a ratio of its own, or the site in self-use mode). */
function pricedIn(ctx: AppContext): (model: string) => boolean {
  const selfUse = ctx.options.bool('SelfUseModeEnabled');
  return (model) => selfUse || getModelPrice(ctx.options, model).found || getModelRatio(ctx.options, model).found;
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
  const model = testModelOf(ch, requestedModel, pricedIn(ctx));
  // a provider without chat (Jina, Moka: embeddings only) is tested on embeddings whatever its model is called
  const adaptor = await adaptorFor(ch.type);
  const noChat = adaptor.endpoints.chat === undefined;
  const mode: RelayMode = noChat || isEmbeddingModel(model, ch.type) ? embeddingsMode : chatMode;
  // the probe's request is an OpenAI client's, sent by the relay's own lane on this channel (relay/attempt.ts)
  const body: Record<string, unknown> = { model };
  if (mode === embeddingsMode) body.input = 'hello world';
  else {
    body.messages = [{ role: 'user', content: 'hi' }];
    if (/^o[13]/.test(model)) body.max_completion_tokens = 10;
    else if (model.startsWith('gemini')) body.max_tokens = 300;
    else if (model.endsWith('thinking') && !model.startsWith('claude')) body.max_tokens = 50;
    else body.max_tokens = 10;
  }
  const raw = Buffer.from(JSON.stringify(body));
  const l = laneAttempt(svc, ctx, probeRequest(raw), PROBE_RESPONSE, probeInput(ch, mode, body, raw, model), adaptor);
  const { info } = l;
  const wire = l.providerFormat;
  const lane = laneOf(l);
  if (mode === embeddingsMode && !l.native)
    return {
      ok: false,
      message: 'embedding models of this channel type cannot be tested',
      time: 0,
      disableWorthy: false,
    };
  if (!lane || !declares(adaptor, info))
    return { ok: false, message: `渠道 #${ch.id} 的类型不支持 ${mode.name} 请求`, time: 0, disableWorthy: false };
  const built = await lane.body(l);
  if (!Buffer.isBuffer(built))
    return {
      ok: false,
      message: built.kind === 'failed' ? built.error.message : '测试失败',
      time: 0,
      disableWorthy: false,
    };

  // price lookup like a real request (fails for unpriced models unless self-use mode is on)
  // priced and logged as root's request, read through the relay's user cache as a request's user is
  const root = await svc.users.get(1);
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
    const headers = upstreamHeaders(l, lane);
    // read after authorize, whose token or signature an echo could carry too
    sent.headers = headers;
    const bytes = built;
    await authorizeUpstream(l, target, headers, bytes);
    sent.path = target.path;
    const up = await probe(
      svc,
      ch,
      {
        origin: target.origin,
        path: target.path,
        method: 'POST',
        headers,
        body: bytes,
        headersTimeout: 60_000,
        bodyTimeout: 60_000,
      },
      adaptor,
    );
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
    // a vendor with its own answer shapes is read as the relay reads it (providers/dialect.ts)
    if (adaptor.answers) {
      try {
        buf = rewriteWhole(adaptor.answers, info, up.headers['content-type'] ?? '', buf);
      } catch (e) {
        if (!(e instanceof VendorRefusal)) throw e;
        if (e.credentialRefused) adaptor.unauthorized?.(info);
        return { ok: false, message: e.message, time, disableWorthy: false };
      }
    }
    // an error inside a 200 answer (MiniMax's base_resp) fails the test as the relay fails the request
    const inBand = adaptor.answerError?.(info, buf);
    if (inBand) return { ok: false, message: inBand.error.message, time, disableWorthy: false };
    // an adaptor that answers in another format gives its OpenAI form and usage, as in the relay
    const converted = adaptor.convertResponse ? adaptor.convertResponse(info, buf) : null;
    if (converted) buf = converted.body;
    let usage = converted ? converted.usage : wire === 'openai' ? extractUsage(buf) : null;
    try {
      const text = buf.toString('utf8');
      const codec = wire === 'openai' ? null : answerCodecOf(adaptor, info);
      // a vendor whose whole answer may be a stream read whole (Dify's agent apps, Coze) reads its own text
      const hub = codec?.readAnswer
        ? codec.readAnswer(text, info.upstreamModel)
        : (codec?.responseToHub(JSON.parse(text), info.upstreamModel) ?? JSON.parse(text));
      if (codec) usage = usageOfHub(hub.usage ?? null, wire === 'anthropic');
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
  await recordChannelTest(ctx.db, channelId, time);
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
        if (ch.multiKey) {
          await testKeys(ctx, svc, ch, threshold, disableOn, enableOn);
          continue;
        }
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

/**
 * Test-all on a multi-key channel: its first enabled key stands for it (a failure that warrants it disables that key,
 * not the channel), then every automatically disabled key is probed and enabled again when it answers (new-api never
 * does: #3536/#3537). Keys disabled by hand, and a channel disabled by hand, are left alone.
 */
async function testKeys(
  ctx: AppContext,
  svc: RelayServices,
  ch: CachedChannel,
  threshold: number,
  disableOn: boolean,
  enableOn: boolean,
): Promise<void> {
  if (ch.status === CHANNEL_STATUS_MANUALLY_DISABLED) return;
  const mk = ch.multiKey!;
  const first = firstEnabledKey(ch);
  if (first && ch.status === CHANNEL_STATUS_ENABLED) {
    const r = await testChannel(ctx, svc, first);
    const slow = threshold > 0 && r.time > threshold;
    const reason = slow ? `响应时间 ${r.time.toFixed(2)}s 超过阈值 ${threshold.toFixed(2)}s` : r.message;
    if ((r.disableWorthy || slow) && disableOn && ch.autoBan)
      await svc.channelStatus.disableKey(ch.id, first.keyIndex!, first.key, reason);
    await recordTest(ctx, ch.id, r.time);
  }
  if (!enableOn) return;
  const info = await autoDisabledKeys(ctx, ch.id);
  for (const i of info) {
    const key = mk.keys[i];
    if (key === undefined) continue;
    const r = await testChannel(ctx, svc, withKey(ch, i, key));
    if (r.ok) await svc.channelStatus.enableKey(ch.id, i);
  }
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

/** The channel's upstream account for its provider's model listing and balance query, sent through its proxy. */
function accountOf(svc: RelayServices, setting: CachedChannel['setting'], base: string, key: string): UpstreamAccount {
  const get: GetJson = (url, headers) => getJson(svc, { setting }, url, key, headers);
  return { base, key, get };
}

/**
 * Fetches the upstream balance by the channel's provider (its folder's channel.ts) and stores it; throws "尚未实现" for
 * a type without a balance query (new-api-compat.md §3.4 update_balance, new-api's updateChannelBalance).
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
  const query = channelFactsOf(ch.type)?.balance;
  if (!query) throw new Error('尚未实现');
  const balance = await query(accountOf(svc, ch.setting, ch.baseUrl, ch.key), {
    price: ctx.options.num('Price', 7.3),
  });
  if (!Number.isFinite(balance)) throw new Error('invalid balance response');
  await storeChannelBalance(ctx.db, ch.id, balance);
  return balance;
}

/**
 * Where an upstream lists its models (new-api's FetchUpstreamModels): the provider's list (Gemini's and Anthropic's own,
 * first page; else OpenAI's {base}/v1/models, or the /models sibling of a whole chat URL); Ali's compatible mode,
 * which has no provider yet.
 */
export function upstreamModelsUrl(type: number, base: string): string {
  if (type === 17) return `${base}/compatible-mode/v1/models`;
  const models = channelFactsOf(type)?.models;
  return models && 'url' in models ? models.url(base) : openAIModelsUrl(base);
}

/**
 * Model ids offered by an upstream, as the channel's provider lists them (its folder's channel.ts): a request to
 * the upstream, or a fixed list for Vertex AI and AWS Bedrock, whose keys are no bearer tokens and are never sent.
 * `setting`: a stored channel's (its proxy applies); null for a channel not saved yet.
 */
export async function fetchUpstreamModels(
  svc: RelayServices,
  type: number,
  baseUrl: string | null | undefined,
  key: string,
  setting: CachedChannel['setting'] = null,
): Promise<string[]> {
  // the key of a type without an adaptor is no Bearer token (Vertex AI's is a service-account JSON): never send it
  const facts = channelFactsOf(type);
  if (!facts) throw new Error(unsupportedTypeMessage(type));
  if ('fixed' in facts.models) return [...facts.models.fixed];
  const base = channelBaseUrl(type, baseUrl);
  if (!base) throw new Error('base_url is required');
  const firstKey = key.split('\n')[0].trim();
  try {
    return await facts.models.list(accountOf(svc, setting, base, firstKey));
  } catch (e) {
    // the console shows the message: a body quoted by a parser keeps no key
    throw new Error(channelRedactor(key)((e as Error).message));
  }
}

export function resetProbeState(): void {
  running = new WeakMap();
}
