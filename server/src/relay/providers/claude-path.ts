// A vendor's own Anthropic-compatible endpoint (Zhipu's `/api/anthropic`, DashScope's `/apps/anthropic`, MiniMax's
// `/anthropic`): a Claude client's `/v1/messages` goes there as it is, on the native lane, with the channel's key as
// a Bearer token and the client's `anthropic-version`; every other client keeps the vendor's OpenAI-compatible API.
import type { WireFormat } from '../formats/codec.js';
import type { RelayInfo } from './types.js';

const ANTHROPIC_VERSION = '2023-06-01';
const CLAUDE: readonly WireFormat[] = ['anthropic'];
const NONE: readonly WireFormat[] = [];

export const claudeClient = (info: RelayInfo): boolean => info.clientFormat === 'anthropic';

/** `alsoSpeaks` of such a vendor: Claude's format, for a Claude client. */
export const speaksClaude = (info: RelayInfo): readonly WireFormat[] => (claudeClient(info) ? CLAUDE : NONE);

/** The headers a Claude client's request adds: its anthropic-version (Anthropic's current one when it sent none). */
export function claudeHeaders(info: RelayInfo): Record<string, string> {
  if (!claudeClient(info)) return {};
  const version = info.clientHeaders['anthropic-version'];
  return { 'anthropic-version': typeof version === 'string' && version ? version : ANTHROPIC_VERSION };
}
