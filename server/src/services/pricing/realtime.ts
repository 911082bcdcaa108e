// A realtime session's usage and price (relay/realtime/). The upstream reports usage per `response.done`; the session
// sums it and is charged once, from the sum, with new-api's audio formula (calculateAudioQuota): text in at 1, text
// out at the completion ratio, audio in at the audio ratio, audio out at audio ratio × audio completion ratio, all ×
// model ratio × group ratio. Unlike new-api, cached input tokens are billed at the cache ratio (new-api bills them at
// the full rate): new-api-compat.md, "Realtime".
import { getAudioCompletionRatio, getAudioRatio } from './media.js';
import { priceQuota, roundQuota, type PriceData } from './index.js';

/** A realtime usage summed over turns, by modality and direction. */
export interface RealtimeUsage {
  textIn: number;
  audioIn: number;
  /** of textIn, read from the cache */
  cachedTextIn: number;
  /** of audioIn, read from the cache */
  cachedAudioIn: number;
  textOut: number;
  audioOut: number;
  /** response.done events that carried usage */
  turns: number;
}

export const emptyRealtimeUsage = (): RealtimeUsage => ({
  textIn: 0,
  audioIn: 0,
  cachedTextIn: 0,
  cachedAudioIn: 0,
  textOut: 0,
  audioOut: 0,
  turns: 0,
});

const n = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.trunc(v) : 0);

/**
 * Adds one `response.done`'s `response.usage` to `into`; false when it carries none. Details missing: the whole side
 * is text. Cached tokens without their split are text (the cache holds the prompt's text first).
 */
export function addRealtimeUsage(into: RealtimeUsage, usage: unknown): boolean {
  if (!usage || typeof usage !== 'object') return false;
  const u = usage as Record<string, any>;
  const inD = (u.input_token_details ?? {}) as Record<string, any>;
  const outD = (u.output_token_details ?? {}) as Record<string, any>;
  const inTotal = n(u.input_tokens);
  const outTotal = n(u.output_tokens);
  const audioIn = Math.min(n(inD.audio_tokens), inTotal);
  const textIn = inD.text_tokens !== undefined ? n(inD.text_tokens) : inTotal - audioIn;
  const audioOut = Math.min(n(outD.audio_tokens), outTotal);
  const textOut = outD.text_tokens !== undefined ? n(outD.text_tokens) : outTotal - audioOut;
  const cached = n(inD.cached_tokens);
  const split = (inD.cached_tokens_details ?? null) as Record<string, any> | null;
  const cachedAudio = Math.min(split ? n(split.audio_tokens) : 0, audioIn);
  const cachedText = Math.min(split ? n(split.text_tokens) : cached - cachedAudio, textIn);
  into.textIn += textIn;
  into.audioIn += audioIn;
  into.cachedTextIn += Math.max(0, cachedText);
  into.cachedAudioIn += cachedAudio;
  into.textOut += textOut;
  into.audioOut += audioOut;
  into.turns++;
  return true;
}

export const realtimeInputTokens = (u: RealtimeUsage): number => u.textIn + u.audioIn;
export const realtimeOutputTokens = (u: RealtimeUsage): number => u.textOut + u.audioOut;

/**
 * The charge of a session's summed usage. A fixed model price is charged once per session that completed a turn.
 * Ratio mode: a non-zero ratio that rounds to ≤ 0 charges 1, as every formula here.
 */
export function realtimeQuota(price: PriceData, u: RealtimeUsage, model: string, quotaPerUnit: number): number {
  if (realtimeInputTokens(u) + realtimeOutputTokens(u) === 0) return 0;
  if (price.usePrice) return priceQuota(price, quotaPerUnit);
  const audioRatio = getAudioRatio(model);
  const tokens =
    u.textIn -
    u.cachedTextIn +
    u.cachedTextIn * price.cacheRatio +
    u.textOut * price.completionRatio +
    (u.audioIn - u.cachedAudioIn) * audioRatio +
    u.cachedAudioIn * audioRatio * price.cacheRatio +
    u.audioOut * audioRatio * getAudioCompletionRatio(model);
  let q = roundQuota(tokens * price.modelRatio * price.groupRatio);
  if (price.modelRatio * price.groupRatio !== 0 && q <= 0) q = 1;
  return q;
}
