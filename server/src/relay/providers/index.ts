// Adaptor lookup by channel type: the one registry of the channel types this gateway can relay to. A type that is not
// listed here has no adaptor speaking its vendor's protocol, so its channels are refused when created or updated,
// left out of routing and never sent a request (new-api sent them an OpenAI request with the raw key, which for
// Vertex AI is a whole service-account JSON as a Bearer token).
// To add a provider: create providers/<name>/index.ts implementing Adaptor (types.ts) and map its type codes here.
import { azureAdaptor } from './azure/index.js';
import { ollamaAdaptor } from './ollama/index.js';
import { openaiAdaptor } from './openai/index.js';
import type { Adaptor } from './types.js';
import { channelTypeName } from '../../services/channel-types.js';

/**
 * Vendors whose API is OpenAI's own chat / embeddings API under `{base}/v1/...` (or the path the OpenAI adaptor
 * sets for them) with `Authorization: Bearer <key>`: 1 OpenAI, 6/7/9/10/12/13 (the older OpenAI resellers new-api
 * still knows), 8 custom (full URL), 19 360, 20 OpenRouter,
 * 22 FastGPT, 25 Moonshot, 27 Perplexity, 31 Yi, 40 SiliconFlow, 42 Mistral, 43 DeepSeek, 45 VolcEngine Ark,
 * 47 Xinference, 48 xAI. Types with their own path scheme, key format or signature (Ali's compatible mode, Qianfan
 * V2, Zhipu's JWT, MiniMax, Cloudflare's account path, …) are not here until an adaptor handles them.
 */
const OPENAI_COMPATIBLE_TYPES = [1, 6, 7, 8, 9, 10, 12, 13, 19, 20, 22, 25, 27, 31, 40, 42, 43, 45, 47, 48];

const BY_TYPE = new Map<number, Adaptor>([
  ...OPENAI_COMPATIBLE_TYPES.map((type): [number, Adaptor] => [type, openaiAdaptor]),
  [3, azureAdaptor],
  [4, ollamaAdaptor],
]);

/** Whether channels of this type can be relayed to (an adaptor speaks the vendor's protocol). */
export function hasAdaptor(channelType: number): boolean {
  return BY_TYPE.has(channelType);
}

/** The console's and the relay's answer for a channel of a type without an adaptor. */
export function unsupportedTypeMessage(channelType: number): string {
  return `渠道类型 ${channelTypeName(channelType)}（${channelType}）暂不支持：本网关还没有该类型的适配器，不会向它转发请求`;
}

/** The adaptor of a relayable type; callers check hasAdaptor first (unsupported channels never reach here). */
export function adaptorFor(channelType: number): Adaptor {
  const adaptor = BY_TYPE.get(channelType);
  if (!adaptor) throw new Error(`no adaptor for channel type ${channelType}`);
  return adaptor;
}

export type { Adaptor, RelayInfo, UpstreamTarget, UpstreamUsage, ProviderError } from './types.js';
