// The consume log row of a relay request (relay/pipeline/log.ts makes it once the request has settled), and its dashboard
// bucket.
import type { AppContext } from '../context.js';
import type { NewLog } from '../db/schema.js';
import type { RelayServices } from './services.js';
import { normaliseModelForRouting, type CachedChannel } from '../services/cache/channel-cache.js';
import type { AudioUsage, PriceData } from '../services/pricing/index.js';
import { getAudioCompletionRatio, getAudioRatio } from '../services/pricing/media.js';
import type { RelayCaller } from './auth.js';
import type { UpstreamUsage } from './providers/index.js';
import type { Sensitive } from './attempt.js';
import { CappedMap } from '../lib/bounded.js';

export interface LogInput {
  caller: RelayCaller;
  group: string;
  model: string;
  channel: CachedChannel;
  price: PriceData;
  usage: UpstreamUsage;
  quota: number;
  start: number;
  frt: number;
  isStream: boolean;
  upstreamModel: string;
  reasoningEffort?: string;
  used: number[];
  /** mode-specific log content (images) replacing the ratio line */
  content?: string;
  /** gpt-4o-audio: the usage by modality it was billed on */
  audio?: AudioUsage;
  /** the client went away before its answer was complete */
  clientLeft?: boolean;
  /** the completion's sensitive words, found and masked or refused (relay/sensitive-output.ts) */
  sensitive?: Sensitive;
}

/** The ratio line and the price parts of `other` (JSON text) of a consume log: the same for every request at a price. */
interface PriceText {
  price: PriceData;
  content: string;
  /** `"model_ratio":…,"group_ratio":…,"completion_ratio":…` */
  ratios: string;
  /** `"cache_ratio":…,"model_price":…` */
  tail: string;
}

/**
 * Last price text per model name (checked against the price before use, so option changes show at once). Keyed by the
 * request's model, which a pinned channel (`sk-<key>-<id>`) lets the caller choose freely: bounded.
 */
export const priceTexts = new CappedMap<string, PriceText>(1000);

function samePrice(a: PriceData, b: PriceData): boolean {
  return (
    a.usePrice === b.usePrice &&
    a.modelPrice === b.modelPrice &&
    a.modelRatio === b.modelRatio &&
    a.completionRatio === b.completionRatio &&
    a.groupRatio === b.groupRatio &&
    a.cacheRatio === b.cacheRatio
  );
}

/**
 * Three toFixed() calls, a template and a JSON.stringify of the `other` object were a measurable part of every
 * request's CPU and garbage (docs/perf/where-the-time-goes.md); the texts change only with the price.
 */
export function priceText(model: string, p: PriceData): PriceText {
  const hit = priceTexts.get(model);
  if (hit && samePrice(hit.price, p)) return hit;
  const j = JSON.stringify;
  const t: PriceText = {
    price: p,
    content: p.usePrice
      ? `模型价格 ${p.modelPrice.toFixed(2)}，分组倍率 ${p.groupRatio.toFixed(2)}`
      : `模型倍率 ${p.modelRatio.toFixed(2)}，补全倍率 ${p.completionRatio.toFixed(2)}，分组倍率 ${p.groupRatio.toFixed(2)}`,
    ratios: `"model_ratio":${j(p.modelRatio)},"group_ratio":${j(p.groupRatio)},"completion_ratio":${j(p.completionRatio)}`,
    tail: `"cache_ratio":${j(p.cacheRatio)},"model_price":${j(p.modelPrice)}`,
  };
  priceTexts.set(model, t);
  return t;
}

/** A number as JSON writes it (NaN and infinities as null). */
function jsonNum(n: number): string | number {
  return Number.isFinite(n) ? n : 'null';
}

/** The request's consume-log row (undefined when consume logs are off), and its dashboard bucket. */
export function consumeLogRow(svc: RelayServices, ctx: AppContext, l: LogInput): NewLog | undefined {
  const tokens = l.usage.prompt_tokens + l.usage.completion_tokens;
  // as in new-api, the dashboard buckets are fed from the consume log: nothing when consume logs are off
  if (!ctx.options.bool('LogConsumeEnabled')) return undefined;
  // a GPTs model is counted under its family (`gpt-4-gizmo-*`), as routing finds it
  const modelName = normaliseModelForRouting(l.model);
  svc.quotaData.record(l.caller.user.id, l.caller.user.username, modelName, l.quota, tokens);
  const t = priceText(l.model, l.price);
  let content = l.content ?? t.content;
  if (tokens === 0 && l.content === undefined) content += '(可能是上游超时)';
  // new-api's note of the words found in the completion; the stop is told in `other`
  if (l.sensitive) content += `，敏感词：${l.sensitive.words.join(', ')}`;
  // the keys in new-api's order: frt, the ratios, cache_tokens, cache_ratio, model_price, then the optional ones
  let other = `{"frt":${jsonNum(l.frt)},${t.ratios},"cache_tokens":${jsonNum(l.usage.cached_tokens)},${t.tail}`;
  if (l.usage.claude || l.usage.cache_creation_tokens) {
    // new-api's Claude fields (new-api-compat.md §5.7)
    other += `,"claude":true,"cache_creation_tokens":${jsonNum(l.usage.cache_creation_tokens ?? 0)},"cache_creation_ratio":${jsonNum(l.price.cacheCreationRatio)}`;
  }
  if (l.reasoningEffort) other += `,"reasoning_effort":${JSON.stringify(l.reasoningEffort)}`;
  // mapped = the channel's model_mapping applied (an o-series effort suffix stripped upstream is not a mapping)
  const mapped = l.channel.modelMapping?.[l.model];
  if (typeof mapped === 'string' && mapped && mapped !== l.model)
    other += `,"is_model_mapped":true,"upstream_model_name":${JSON.stringify(l.upstreamModel)}`;
  if (l.audio) {
    const a = l.audio;
    other += `,"audio":true,"audio_input":${a.audioInput},"audio_output":${a.audioOutput},"text_input":${a.textInput},"text_output":${a.textOutput}`;
    other += `,"audio_ratio":${jsonNum(getAudioRatio(l.model))},"audio_completion_ratio":${jsonNum(getAudioCompletionRatio(l.model))}`;
  }
  if (l.clientLeft) other += ',"client_left":true';
  if (l.usage.counted_locally) other += ',"usage_counted_locally":true';
  if (l.sensitive) {
    other += `,"sensitive_words":${JSON.stringify(l.sensitive.words)}`;
    if (l.sensitive.refused) other += ',"sensitive_refused":true';
    if (l.sensitive.stopped) other += ',"stopped_on_sensitive":true';
  }
  other += `,"admin_info":{"use_channel":[${l.used.map((id) => `"${id}"`).join(',')}]}}`;
  const now = Date.now();
  const row: NewLog = {
    user_id: l.caller.user.id,
    created_at: Math.floor(now / 1000),
    type: 2,
    content,
    username: l.caller.user.username,
    // the playground has no token: new-api logs it as playground-<group>
    token_name: l.caller.token ? l.caller.token.name : `playground-${l.group}`,
    model_name: modelName,
    quota: l.quota,
    prompt_tokens: l.usage.prompt_tokens,
    completion_tokens: l.usage.completion_tokens,
    use_time: Math.floor((now - l.start) / 1000),
    is_stream: l.isStream,
    channel_id: l.channel.id,
    token_id: l.caller.token?.id ?? 0,
    group: l.group,
    other,
  };
  return row;
}
