// Gemini usageMetadata ↔ hub usage. Gemini counts thinking apart (thoughtsTokenCount) but bills it as output, and
// its promptTokenCount already includes the cached part (cachedContentTokenCount), which is the hub's convention.
import type { HubUsage } from '../../hub/types.js';
import { isPlainObject } from './wire.js';

function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

export function usageToHub(meta: unknown): HubUsage | null {
  if (!isPlainObject(meta)) return null;
  const prompt = count(meta.promptTokenCount) + count(meta.toolUsePromptTokenCount);
  const thoughts = count(meta.thoughtsTokenCount);
  const completion = count(meta.candidatesTokenCount) + thoughts;
  const usage: HubUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  const cached = count(meta.cachedContentTokenCount);
  if (cached) usage.prompt_tokens_details = { cached_tokens: cached };
  if (thoughts) usage.completion_tokens_details = { reasoning_tokens: thoughts };
  return usage;
}

export interface GeminiUsageMetadata {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
}

export function usageFromHub(usage: HubUsage): GeminiUsageMetadata {
  const thoughts = usage.completion_tokens_details?.reasoning_tokens ?? 0;
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const meta: GeminiUsageMetadata = {
    promptTokenCount: usage.prompt_tokens,
    candidatesTokenCount: Math.max(0, usage.completion_tokens - thoughts),
    totalTokenCount: usage.total_tokens || usage.prompt_tokens + usage.completion_tokens,
  };
  if (thoughts) meta.thoughtsTokenCount = thoughts;
  if (cached) meta.cachedContentTokenCount = cached;
  return meta;
}
