// Hub usage → the relay's usage (what billing and the consume log read).
import type { UpstreamUsage } from '../providers/types.js';
import type { HubUsage } from './types.js';

/** Hub usage → the relay's usage; a Claude upstream's usage is billed and logged as Claude's. */
export function usageOfHub(u: HubUsage | null, claude: boolean): UpstreamUsage | null {
  if (!u || u.prompt_tokens + u.completion_tokens === 0) return null;
  const usage: UpstreamUsage = {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    cached_tokens: u.prompt_tokens_details?.cached_tokens ?? 0,
  };
  const creation = u.prompt_tokens_details?.cache_creation_tokens ?? 0;
  if (creation) usage.cache_creation_tokens = creation;
  if (claude) usage.claude = true;
  return usage;
}
