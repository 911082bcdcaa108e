// Price lookup and quota formulas (facts §5). Pure functions over the option store: no I/O, safe on the hot path.
// CONTRACT (used by the relay and the console): names and signatures here are stable; bodies are owned by
// the pricing module (see pricing/*.ts for the rule tables).
import type { OptionStore } from '../options.js';

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

export class PricingError extends Error {}

export function getGroupRatio(options: OptionStore, group: string): number {
  const map = options.json<Record<string, number>>('GroupRatio', {});
  const r = map[group];
  return typeof r === 'number' && Number.isFinite(r) ? r : 1;
}

export function getModelRatio(options: OptionStore, model: string): { ratio: number; found: boolean } {
  const map = options.json<Record<string, number>>('ModelRatio', {});
  const r = map[model];
  if (typeof r === 'number') return { ratio: r, found: true };
  return { ratio: 37.5, found: false };
}

export function getModelPrice(options: OptionStore, model: string): { price: number; found: boolean } {
  const map = options.json<Record<string, number>>('ModelPrice', {});
  const p = map[model];
  return typeof p === 'number' ? { price: p, found: true } : { price: -1, found: false };
}

export function getCompletionRatio(options: OptionStore, model: string): number {
  const map = options.json<Record<string, number>>('CompletionRatio', {});
  return typeof map[model] === 'number' ? map[model] : 1;
}

export function getCacheRatio(options: OptionStore, model: string): number {
  const map = options.json<Record<string, number>>('CacheRatio', {});
  return typeof map[model] === 'number' ? map[model] : 1;
}

export function getCacheCreationRatio(_options: OptionStore, _model: string): number {
  return 1.25;
}

/**
 * ModelPriceHelper (facts §5.1). Throws PricingError (message `模型 X 倍率或价格未配置…`) when the model has neither a
 * price nor a ratio, unless self-use mode is on or the user accepts unset ratios.
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
    return { usePrice: true, modelPrice: price.price, modelRatio: 0, completionRatio: 0, cacheRatio: 0, cacheCreationRatio: 0, groupRatio };
  }
  const ratio = getModelRatio(options, model);
  if (!ratio.found && !options.bool('SelfUseModeEnabled') && !opts.acceptUnsetRatio) {
    throw new PricingError(`模型 ${model} 倍率或价格未配置，请联系管理员设置或开始自用模式；Model ${model} ratio or price not set`);
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

/** Round half away from zero, as new-api's decimal maths does. */
export function roundQuota(x: number): number {
  return Math.sign(x) * Math.round(Math.abs(x));
}

/** Final charge for a text request (facts §5.3). */
export function textQuota(price: PriceData, usage: Usage, quotaPerUnit: number): number {
  if (price.usePrice) return roundQuota(price.modelPrice * quotaPerUnit * price.groupRatio);
  const cached = usage.cached_tokens ?? 0;
  const creation = usage.cache_creation_tokens ?? 0;
  const tokens =
    usage.prompt_tokens - cached + cached * price.cacheRatio + creation * price.cacheCreationRatio + usage.completion_tokens * price.completionRatio;
  let q = roundQuota(tokens * price.modelRatio * price.groupRatio);
  if (price.modelRatio * price.groupRatio !== 0 && q <= 0 && usage.prompt_tokens + usage.completion_tokens > 0) q = 1;
  return q;
}

/** Reservation before the upstream call (facts §5.2, without the trusted shortcut, which needs balances). */
export function preConsumeQuota(
  price: PriceData,
  promptTokens: number,
  maxTokens: number | undefined,
  options: OptionStore,
): number {
  const quotaPerUnit = options.num('QuotaPerUnit', 500000);
  if (price.usePrice) return Math.trunc(price.modelPrice * quotaPerUnit * price.groupRatio);
  const preTokens = maxTokens && maxTokens > 0 ? promptTokens + maxTokens : options.num('PreConsumedQuota', 500);
  return Math.trunc(preTokens * price.modelRatio * price.groupRatio);
}
