// The relay's usage of one request (what billing and the consume log read), and hub usage → it. It lives in the hub:
// providers, modes and formats all produce it, and the hub imports none of them.
import type { HubUsage } from './types.js';

/** The tokens of one answer, as billing reads them. */
export interface UpstreamUsage {
  /** includes cache reads, excludes cache writes (services/pricing/index.ts) */
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  /** Claude cache writes */
  cache_creation_tokens?: number;
  /** the usage came from a Claude model: billed with the Claude formula and logged with its fields */
  claude?: boolean;
  /** audio tokens within prompt_tokens / completion_tokens (gpt-4o-audio), when the upstream reports any */
  audio_input?: number;
  audio_output?: number;
  /** the upstream reported no usage: counted by the relay (logged as `usage_counted_locally`) */
  counted_locally?: boolean;
}

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
