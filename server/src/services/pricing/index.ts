// Price lookup and quota formulas (new-api-compat.md §5). Pure functions over the option store: no I/O, safe on the hot
// path. CONTRACT (used by the relay and the console): names and signatures here are stable; bodies are owned by
// the pricing module (rule tables in completion-ratio.ts, media.ts and defaults.ts).
//
// Usage conventions (read this before billing a response):
// - `Usage` is OpenAI-shaped: `prompt_tokens` INCLUDES `cached_tokens` (cache reads); `cache_creation_tokens`
//   (Claude cache writes) are NOT part of `prompt_tokens`. textQuota bills
//   (prompt − cached) + cached × cacheRatio + creation × cacheCreationRatio + completion × completionRatio.
// - Claude reports `input_tokens` WITHOUT cache reads or writes. new-api bills Claude channels reached through
//   /v1/chat/completions with the generic formula on input_tokens, subtracting cache reads a second time and
//   ignoring cache writes (under-billing, new-api-compat.md §5.10). Fix: convert Claude usage with `usageFromClaude`
//   (which adds the cache reads back into prompt_tokens, so the OpenAI-style usage the client sees is also correct)
//   and bill with textQuota; or, on /v1/messages, bill the Claude usage directly with `claudeQuota`.
import type { OptionStore } from '../options.js';
import {
  DEFAULT_CACHE_CREATION_RATIO_FALLBACK,
  DEFAULT_CREATE_CACHE_RATIO,
  DEFAULT_MODEL_PRICE,
  DEFAULT_TASK_PRICE,
  UNSET_MODEL_RATIO,
} from './defaults.js';
import { isRatio, normalizeGizmo, resolveCompletionRatio } from './completion-ratio.js';
import { getAudioCompletionRatio, getAudioRatio, imageQualityRatio, imageSizeRatio } from './media.js';

export { normalizeGizmo, completionRule, resolveCompletionRatio } from './completion-ratio.js';
export {
  getAudioRatio,
  getAudioCompletionRatio,
  isAudioModel,
  validateImageSize,
  imageSizeRatio,
  imageQualityRatio,
  DEFAULT_IMAGE_SIZE,
} from './media.js';

export interface PriceData {
  /** true: fixed price per call (ModelPrice); false: per-token ratios */
  usePrice: boolean;
  /** USD per call when usePrice */
  modelPrice: number;
  modelRatio: number;
  completionRatio: number;
  cacheRatio: number;
  cacheCreationRatio: number;
  groupRatio: number;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  /** prompt tokens served from cache (included in prompt_tokens, OpenAI style) */
  cached_tokens?: number;
  /** Claude cache writes (not included in prompt_tokens) */
  cache_creation_tokens?: number;
}

/** Anthropic Messages API usage: input_tokens excludes both cache reads and cache writes. */
export interface ClaudeUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

/** Audio-model usage split by modality (gpt-4o-audio chat and realtime `response.done`). */
export interface AudioUsage {
  textInput: number;
  textOutput: number;
  audioInput: number;
  audioOutput: number;
}

export class PricingError extends Error {}

export const QUOTA_PER_UNIT_DEFAULT = 500000;

function ratioMap(options: OptionStore, key: string): Record<string, number> {
  const m = options.json<Record<string, number> | null>(key, {});
  return m && typeof m === 'object' && !Array.isArray(m) ? m : {};
}

/** GroupRatio[group]; a missing group costs 1 (new-api logs an error and continues). */
export function getGroupRatio(options: OptionStore, group: string): number {
  const r = ratioMap(options, 'GroupRatio')[group];
  return isRatio(r) ? r : 1;
}

const EFFORT_SUFFIX = /^(o\d.*?)-(high|low|medium)$/;

/**
 * ModelRatio lookup. Gizmo models collapse to their family entry (new-api only does this for gpt-4-gizmo, which
 * makes the default `gpt-4o-gizmo-*` ratio unreachable; we do both). o-series names with a reasoning-effort
 * suffix (`o3-mini-high`) use their own entry when present, else the base model's ratio: the suffix only selects
 * `reasoning_effort` upstream. Missing ⇒ 37.5 with found=false.
 */
export function getModelRatio(options: OptionStore, model: string): { ratio: number; found: boolean } {
  const map = ratioMap(options, 'ModelRatio');
  const name = normalizeGizmo(model);
  const r = map[name];
  if (isRatio(r)) return { ratio: r, found: true };
  const effort = EFFORT_SUFFIX.exec(name);
  if (effort) {
    const base = map[effort[1]!];
    if (isRatio(base)) return { ratio: base, found: true };
  }
  return { ratio: UNSET_MODEL_RATIO, found: false };
}

/** ModelPrice lookup (USD per call), gizmo names collapsed. */
export function getModelPrice(options: OptionStore, model: string): { price: number; found: boolean } {
  const p = ratioMap(options, 'ModelPrice')[normalizeGizmo(model)];
  return isRatio(p) ? { price: p, found: true } : { price: -1, found: false };
}

/** GetCompletionRatio (new-api-compat.md §5.6): see completion-ratio.ts for the rule table. */
export function getCompletionRatio(options: OptionStore, model: string): number {
  return resolveCompletionRatio(ratioMap(options, 'CompletionRatio'), model);
}

/** CacheRatio option (price of a cache read relative to input), default 1 = no discount. */
export function getCacheRatio(options: OptionStore, model: string): number {
  const r = ratioMap(options, 'CacheRatio')[model];
  return isRatio(r) ? r : 1;
}

/**
 * Price of a cache write relative to input. new-api's snapshot has no option for it (compiled table only); later
 * versions store a `CreateCacheRatio` option, which we honour when a row exists. Default 1.25.
 */
export function getCacheCreationRatio(options: OptionStore, model: string): number {
  if (options.get('CreateCacheRatio').trim() !== '') {
    const r = ratioMap(options, 'CreateCacheRatio')[model];
    if (isRatio(r)) return r;
  }
  const d = DEFAULT_CREATE_CACHE_RATIO[model];
  return d ?? DEFAULT_CACHE_CREATION_RATIO_FALLBACK;
}

/** The error new-api returns (HTTP 500, local) when a model has neither a price nor a ratio. */
export function unsetRatioMessage(model: string, userId?: number): string {
  if (userId === 1) {
    return `模型 ${model} 倍率或价格未配置，请设置或开始自用模式；Model ${model} ratio or price not set, please set or start self-use mode`;
  }
  return `模型 ${model} 倍率或价格未配置，请联系管理员设置或开始自用模式；Model ${model} ratio or price not set, please contact administrator to set or start self-use mode`;
}

/**
 * ModelPriceHelper (new-api-compat.md §5.1). Throws PricingError (message `模型 X 倍率或价格未配置…`) when the model has neither
 * a price nor a ratio, unless self-use mode is on or the user accepts unset ratios.
 */
export function getPriceData(
  options: OptionStore,
  model: string,
  group: string,
  opts: { acceptUnsetRatio?: boolean; userId?: number } = {},
): PriceData {
  const groupRatio = getGroupRatio(options, group);
  const price = getModelPrice(options, model);
  if (price.found) {
    return {
      usePrice: true,
      modelPrice: price.price,
      modelRatio: 0,
      completionRatio: 0,
      cacheRatio: 0,
      cacheCreationRatio: 0,
      groupRatio,
    };
  }
  const ratio = getModelRatio(options, model);
  if (!ratio.found && !options.bool('SelfUseModeEnabled') && !opts.acceptUnsetRatio) {
    throw new PricingError(unsetRatioMessage(model, opts.userId));
  }
  return {
    usePrice: false,
    modelPrice: -1,
    modelRatio: ratio.ratio,
    completionRatio: getCompletionRatio(options, model),
    cacheRatio: getCacheRatio(options, model),
    cacheCreationRatio: getCacheCreationRatio(options, model),
    groupRatio,
  };
}

/**
 * Strips binary floating-point noise so a product that is exact in decimal (new-api uses decimal maths)
 * rounds or truncates the same way: 0.15 × 3 gives 0.44999999999999996 in binary, 0.45 in decimal.
 */
function decimalClean(x: number): number {
  // integers below 1e15 are exact: toPrecision(15) would give them back unchanged (and costs a string round trip)
  if (Number.isInteger(x) && x < 1e15 && x > -1e15) return x;
  return Number.isFinite(x) && x !== 0 ? Number(x.toPrecision(15)) : x;
}

/**
 * How far from a rounding boundary x must be for decimalClean() not to matter: toPrecision(15) moves a number by at
 * most half a unit in its 15th significant digit, i.e. 5e-15 × |x|; twenty times that leaves room. Farther than this
 * from the boundary, the quota is computed without the string round trip (two per relayed request).
 */
const CLEAN_SLACK = 1e-13;

/** Round half away from zero, as new-api's decimal maths does. */
export function roundQuota(x: number): number {
  const a = Math.abs(x);
  const whole = Math.floor(a);
  const frac = a - whole;
  if (Math.abs(frac - 0.5) > a * CLEAN_SLACK) return Math.sign(x) * (frac < 0.5 ? whole : whole + 1);
  const c = decimalClean(x);
  return Math.sign(c) * Math.round(Math.abs(c));
}

/** Go's int(float64) (truncation toward zero), without binary noise: int(0.1×3×500000) is 150000, not 149999. */
export function truncQuota(x: number): number {
  const a = Math.abs(x);
  const whole = Math.floor(a);
  const frac = a - whole;
  const slack = a * CLEAN_SLACK;
  if (frac > slack && 1 - frac > slack) return Math.sign(x) * whole;
  return Math.trunc(decimalClean(x));
}

function nonNeg(n: number | undefined): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? n : 0;
}

/** Per-call charge: modelPrice × QuotaPerUnit × groupRatio (rounded). */
export function priceQuota(price: PriceData, quotaPerUnit: number): number {
  return roundQuota(price.modelPrice * quotaPerUnit * price.groupRatio);
}

/**
 * Final charge for a text request (new-api-compat.md §5.3), OpenAI-style usage (see the header comment).
 * - No tokens at all (upstream timeout) ⇒ 0, in both modes; the caller notes "(可能是上游超时)" in the log.
 * - Ratio mode: a non-zero ratio that rounds to ≤ 0 charges 1.
 * - cached_tokens is clamped to prompt_tokens so a malformed upstream usage cannot produce a negative charge.
 */
export function textQuota(price: PriceData, usage: Usage, quotaPerUnit: number): number {
  const prompt = nonNeg(usage.prompt_tokens);
  const completion = nonNeg(usage.completion_tokens);
  const creation = nonNeg(usage.cache_creation_tokens);
  if (prompt + completion + creation === 0) return 0;
  if (price.usePrice) return priceQuota(price, quotaPerUnit);
  const cached = Math.min(nonNeg(usage.cached_tokens), prompt);
  const tokens =
    prompt -
    cached +
    cached * price.cacheRatio +
    creation * price.cacheCreationRatio +
    completion * price.completionRatio;
  let q = roundQuota(tokens * price.modelRatio * price.groupRatio);
  if (price.modelRatio * price.groupRatio !== 0 && q <= 0) q = 1;
  return q;
}

/** Claude usage → OpenAI-shaped usage: prompt_tokens = input + cache reads; cache writes kept separately. */
export function usageFromClaude(u: ClaudeUsage): Usage {
  const read = nonNeg(u.cache_read_input_tokens);
  return {
    prompt_tokens: nonNeg(u.input_tokens) + read,
    completion_tokens: nonNeg(u.output_tokens),
    cached_tokens: read,
    cache_creation_tokens: nonNeg(u.cache_creation_input_tokens),
  };
}

/**
 * Claude-path charge (PostClaudeConsumeQuota, /v1/messages): input_tokens already exclude cache tokens, so
 * (input + cacheRead × cacheRatio + cacheCreation × cacheCreationRatio + output × completionRatio)
 * × groupRatio × modelRatio, truncated (new-api uses float maths here). Per-call models: price × unit × group.
 */
export function claudeQuota(
  price: PriceData,
  usage: ClaudeUsage,
  quotaPerUnit: number = QUOTA_PER_UNIT_DEFAULT,
): number {
  const input = nonNeg(usage.input_tokens);
  const output = nonNeg(usage.output_tokens);
  const read = nonNeg(usage.cache_read_input_tokens);
  const creation = nonNeg(usage.cache_creation_input_tokens);
  if (input + output + read + creation === 0) return 0;
  if (price.usePrice) return priceQuota(price, quotaPerUnit);
  const tokens = input + read * price.cacheRatio + creation * price.cacheCreationRatio + output * price.completionRatio;
  let q = truncQuota(tokens * price.groupRatio * price.modelRatio);
  if (price.modelRatio * price.groupRatio !== 0 && q <= 0) q = 1;
  return q;
}

/**
 * Audio models (gpt-4o-audio on the chat path, realtime): text tokens at the text rates, audio input at
 * audioRatio, audio output at audioRatio × audioCompletionRatio; × modelRatio × groupRatio, rounded.
 */
export function audioQuota(
  price: PriceData,
  usage: AudioUsage,
  model: string,
  quotaPerUnit: number = QUOTA_PER_UNIT_DEFAULT,
): number {
  const textIn = nonNeg(usage.textInput);
  const textOut = nonNeg(usage.textOutput);
  const audioIn = nonNeg(usage.audioInput);
  const audioOut = nonNeg(usage.audioOutput);
  if (textIn + textOut + audioIn + audioOut === 0) return 0;
  if (price.usePrice) return priceQuota(price, quotaPerUnit);
  const audioRatio = getAudioRatio(model);
  const tokens =
    textIn +
    textOut * price.completionRatio +
    audioIn * audioRatio +
    audioOut * audioRatio * getAudioCompletionRatio(model);
  let q = roundQuota(tokens * price.modelRatio * price.groupRatio);
  if (price.modelRatio * price.groupRatio !== 0 && q <= 0) q = 1;
  return q;
}

/**
 * gpt-4o-audio* on the chat path is billed with audioQuota (new-api-compat.md §4.6 step 10), every other model with
 * textQuota. new-api matches only that prefix, so gpt-4o-mini-audio-preview went through the text formula and its audio
 * tokens cost text rates, although getAudioRatio has a rate for it; it is an audio model here too.
 */
export function isAudioChatModel(model: string): boolean {
  return /^gpt-4o(-mini)?-audio/.test(model);
}

/** An OpenAI usage split by modality: the audio tokens reported in the details, the rest of each side is text. */
export function audioUsageOf(u: {
  prompt_tokens: number;
  completion_tokens: number;
  audio_input?: number;
  audio_output?: number;
}): AudioUsage {
  const audioInput = Math.min(nonNeg(u.audio_input), nonNeg(u.prompt_tokens));
  const audioOutput = Math.min(nonNeg(u.audio_output), nonNeg(u.completion_tokens));
  return {
    textInput: nonNeg(u.prompt_tokens) - audioInput,
    textOutput: nonNeg(u.completion_tokens) - audioOutput,
    audioInput,
    audioOutput,
  };
}

export interface ImageRequestLike {
  model: string;
  size?: string;
  quality?: string;
  n?: number;
}

/**
 * Image generation charge, computed before the upstream call (new-api-compat.md §5.3). In ratio mode one image costs
 * 0.0025 × modelRatio USD. quota = int(price × sizeRatio × qualityRatio × n × groupRatio × QuotaPerUnit).
 */
export function imageQuota(
  price: PriceData,
  req: ImageRequestLike,
  quotaPerUnit: number = QUOTA_PER_UNIT_DEFAULT,
): number {
  const unitPrice = price.usePrice ? price.modelPrice : 0.0025 * price.modelRatio;
  const n = req.n && req.n > 0 ? Math.floor(req.n) : 1;
  const total = unitPrice * imageSizeRatio(req.size) * imageQualityRatio(req.model, req.size, req.quality) * n;
  return truncQuota(total * price.groupRatio * quotaPerUnit);
}

/**
 * Midjourney / Suno / swap_face: a fixed price per task from ModelPrice[`mj_*` | `suno_music` | `suno_lyrics` |
 * `swap_face`], else the compiled default, else 0.1 USD. quota = int(price × groupRatio × QuotaPerUnit).
 */
export function taskQuota(
  options: OptionStore,
  priceName: string,
  group: string,
): { quota: number; modelPrice: number; groupRatio: number } {
  const p = getModelPrice(options, priceName);
  const modelPrice = p.found ? p.price : (DEFAULT_MODEL_PRICE[priceName] ?? DEFAULT_TASK_PRICE);
  const groupRatio = getGroupRatio(options, group);
  const quotaPerUnit = options.num('QuotaPerUnit', QUOTA_PER_UNIT_DEFAULT);
  return { quota: truncQuota(modelPrice * groupRatio * quotaPerUnit), modelPrice, groupRatio };
}

/**
 * Reservation before the upstream call (new-api-compat.md §5.2, without the trusted shortcut, which needs balances).
 */
export function preConsumeQuota(
  price: PriceData,
  promptTokens: number,
  maxTokens: number | undefined,
  options: OptionStore,
): number {
  const quotaPerUnit = options.num('QuotaPerUnit', QUOTA_PER_UNIT_DEFAULT);
  if (price.usePrice) return truncQuota(price.modelPrice * quotaPerUnit * price.groupRatio);
  const preTokens =
    maxTokens && maxTokens > 0 ? nonNeg(promptTokens) + maxTokens : options.num('PreConsumedQuota', 500);
  return truncQuota(preTokens * price.modelRatio * price.groupRatio);
}

/**
 * The trusted shortcut of new-api-compat.md §5.2: with a balance above 100× the reservation (and an unlimited token, or
 * a token holding more than 100× too) nothing is reserved and the whole amount is charged afterwards.
 */
export function trustedReservation(
  pre: number,
  userQuota: number,
  token: { unlimited: boolean; remainQuota: number },
): number {
  if (pre <= 0) return pre;
  if (userQuota > 100 * pre && (token.unlimited || token.remainQuota > 100 * pre)) return 0;
  return pre;
}

/** Pricing-page figures (spec §9): USD per 1M tokens for the given ratios. */
export function pricePer1M(
  modelRatio: number,
  completionRatio: number,
  groupRatio: number,
): { input: number; output: number } {
  const input = decimalClean(modelRatio * 2 * groupRatio);
  return { input, output: decimalClean(input * completionRatio) };
}

/** A factor as an exact count of millionths (prices and ratios carry six decimals at most; more are rounded off). */
function millionths(x: number): bigint {
  return BigInt(Math.round(decimalClean(x) * 1e6));
}

const MILLION_CUBED = 10n ** 18n;

/**
 * A task priced per unit (a video's seconds, new-api's EstimateBilling ratios): ModelPrice[model] × groupRatio ×
 * QuotaPerUnit × units × ratioPpm / 10^6, truncated once. new-api truncates after every factor (its charges drift by a
 * few units); here the factors are multiplied as exact integers of millionths. Null when the model has no price set:
 * a per-second model is never charged a guessed default.
 */
export function perUnitTaskQuota(
  options: OptionStore,
  model: string,
  group: string,
  units: number,
  ratioPpm: number,
): { quota: number; modelPrice: number; groupRatio: number } | null {
  const p = getModelPrice(options, model);
  if (!p.found) return null;
  const groupRatio = getGroupRatio(options, group);
  const quotaPerUnit = options.num('QuotaPerUnit', QUOTA_PER_UNIT_DEFAULT);
  const product =
    millionths(p.price) * millionths(groupRatio) * millionths(quotaPerUnit) * BigInt(units) * BigInt(ratioPpm);
  const quota = product / MILLION_CUBED / 1_000_000n;
  return { quota: Number(quota), modelPrice: p.price, groupRatio };
}

/**
 * new-api's charge at submit for a task whose model has a ModelRatio set and no ModelPrice (ModelPriceHelperPerCall):
 * modelRatio / 2 × QuotaPerUnit × groupRatio, × units × ratioPpm / 10^6 where the platform counts units, truncated
 * once over exact millionths. Null when the model has a price, or no ratio of its own (today's rules then apply).
 */
export function ratioTaskEstimate(
  options: OptionStore,
  model: string,
  group: string,
  units: number,
  ratioPpm: number,
): { quota: number; modelRatio: number; groupRatio: number } | null {
  if (getModelPrice(options, model).found) return null;
  const ratio = getModelRatio(options, model);
  if (!ratio.found || !(ratio.ratio > 0)) return null;
  const groupRatio = getGroupRatio(options, group);
  const quotaPerUnit = options.num('QuotaPerUnit', QUOTA_PER_UNIT_DEFAULT);
  const product =
    millionths(ratio.ratio) * millionths(quotaPerUnit) * millionths(groupRatio) * BigInt(units) * BigInt(ratioPpm);
  const quota = product / (2n * MILLION_CUBED * 1_000_000n);
  return { quota: Number(quota), modelRatio: ratio.ratio, groupRatio };
}

/**
 * What a ratio-priced task costs on the units its platform reported at completion (Kling's final_unit_deduction,
 * Ark's total_tokens): units × modelRatio × groupRatio × the other ratios' product (millionths), from the ratios
 * taken at submit. Exact, floored; at least 1 when the product is above 0 (new-api rounds floats and settles nothing
 * when its product rounds to 0).
 */
export function settledTaskQuota(units: number, modelRatio: number, groupRatio: number, otherPpm: number): number {
  if (!(units > 0) || !(otherPpm > 0)) return 0;
  const product = BigInt(units) * millionths(modelRatio) * millionths(groupRatio) * BigInt(Math.round(otherPpm));
  if (product <= 0n) return 0;
  const quota = product / MILLION_CUBED;
  return quota > 0n ? Number(quota) : 1;
}

/** A ratio as an integer count of millionths (for a snapshot kept in a task row). */
export function ratioPpmOf(x: number): number {
  return Number(millionths(x));
}
