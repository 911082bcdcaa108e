// Claude usage ↔ hub usage. Claude's input_tokens exclude cache reads and cache writes; the hub (OpenAI-shaped)
// counts cache reads inside prompt_tokens and cache writes beside it. The arithmetic is pricing's usageFromClaude,
// so what the client sees and what is billed agree (services/pricing/index.ts, "Usage conventions").
import { usageFromClaude } from '../../../services/pricing/index.js';
import type { HubUsage } from '../../hub/types.js';
import type { ClaudeUsage } from './wire.js';

function count(n: unknown): number | undefined {
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
}

/** Claude usage → hub usage; null when the object holds no token count at all. */
export function usageToHub(usage: any): HubUsage | null {
  if (!usage || typeof usage !== 'object') return null;
  const claude: ClaudeUsage = {
    input_tokens: count(usage.input_tokens) ?? 0,
    output_tokens: count(usage.output_tokens) ?? 0,
    cache_read_input_tokens: count(usage.cache_read_input_tokens),
    cache_creation_input_tokens: count(usage.cache_creation_input_tokens),
  };
  const known = [
    usage.input_tokens,
    usage.output_tokens,
    usage.cache_read_input_tokens,
    usage.cache_creation_input_tokens,
  ].some((n) => count(n) !== undefined);
  if (!known) return null;
  const u = usageFromClaude(claude);
  return {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.prompt_tokens + u.completion_tokens,
    prompt_tokens_details: { cached_tokens: u.cached_tokens ?? 0, cache_creation_tokens: u.cache_creation_tokens ?? 0 },
  };
}

/** Hub usage → Claude usage, for a Claude client: input_tokens are the prompt minus the cache reads. */
export function usageFromHub(usage: HubUsage | null | undefined): Required<ClaudeUsage> {
  const prompt = usage?.prompt_tokens ?? 0;
  const read = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  return {
    input_tokens: Math.max(0, prompt - read),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_read_input_tokens: read,
    cache_creation_input_tokens: usage?.prompt_tokens_details?.cache_creation_tokens ?? 0,
  };
}

/**
 * Folds one usage object of a stream into the running one. Claude's stream usage is cumulative: message_start
 * carries the input side, message_delta the output count so far (and, in newer API versions, the input side again),
 * so a field seen later replaces the earlier value; nothing is added up.
 */
export function mergeClaudeUsage(into: Partial<ClaudeUsage>, usage: any): void {
  if (!usage || typeof usage !== 'object') return;
  for (const key of [
    'input_tokens',
    'output_tokens',
    'cache_read_input_tokens',
    'cache_creation_input_tokens',
  ] as const) {
    const n = count(usage[key]);
    if (n !== undefined) into[key] = n;
  }
}
