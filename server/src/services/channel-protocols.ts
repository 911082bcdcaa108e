// Which protocol the relay speaks to each channel type: the one registry of the channel types this gateway can relay
// to. A type that is not listed here has no adaptor speaking its vendor's protocol, so its channels are refused when
// created or updated, left out of routing and never sent a request (new-api sent them an OpenAI request with the raw
// key, which for Vertex AI is a whole service-account JSON as a Bearer token).
// It lives in services so that channel management and the channel cache can ask it without importing the relay's
// core: relay/providers/index.ts maps each protocol to its adaptor (a provider registered there with a type not listed
// here adds it: registerRelayableTypes), relay/providers/channel-facts.ts (a leaf) to the provider's channel facts.
import { channelTypeName } from './channel-types.js';
import { providerChannelFacts, type ChannelFacts } from '../relay/providers/channel-facts.js';

/** The protocols an adaptor in relay/providers/ speaks. */
export type ChannelProtocol = 'openai' | 'azure' | 'ollama' | 'anthropic' | 'gemini' | 'bedrock' | 'vertex';

/**
 * Vendors whose API is OpenAI's own chat / embeddings API under `{base}/v1/...` (or the path the OpenAI adaptor
 * sets for them) with `Authorization: Bearer <key>`: 1 OpenAI, 6/7/9/10/12/13 (the older OpenAI resellers new-api
 * still knows), 8 custom (full URL), 19 360, 20 OpenRouter,
 * 22 FastGPT, 25 Moonshot, 27 Perplexity, 31 Yi, 40 SiliconFlow, 42 Mistral, 43 DeepSeek, 45 VolcEngine Ark,
 * 47 Xinference, 48 xAI. Types with their own path scheme, key format or signature (Ali's compatible mode, Qianfan
 * V2, Zhipu's JWT, MiniMax, Cloudflare's account path, …) are not here until an adaptor handles them.
 */
export const OPENAI_COMPATIBLE_TYPES: readonly number[] = [
  1, 6, 7, 8, 9, 10, 12, 13, 19, 20, 22, 25, 27, 31, 40, 42, 43, 45, 47, 48,
];

const PROTOCOL_BY_TYPE = new Map<number, string>([
  ...OPENAI_COMPATIBLE_TYPES.map((type): [number, ChannelProtocol] => [type, 'openai']),
  [3, 'azure'],
  [4, 'ollama'],
  [14, 'anthropic'],
  [24, 'gemini'],
  [33, 'bedrock'],
  [41, 'vertex'],
]);

/** Every relayable channel type with the protocol the relay speaks to it. */
export function relayableTypes(): [number, string][] {
  return [...PROTOCOL_BY_TYPE];
}

/**
 * Makes a provider's channel types relayable (relay/providers/index.ts, when it registers the provider). A type another
 * protocol already serves is refused: one type, one provider.
 */
export function registerRelayableTypes(protocol: string, types: readonly number[]): void {
  for (const type of types) {
    const held = PROTOCOL_BY_TYPE.get(type);
    if (held !== undefined && held !== protocol)
      throw new Error(`channel type ${type} is served by ${held} already, not by ${protocol}`);
  }
  for (const type of types) PROTOCOL_BY_TYPE.set(type, protocol);
}

/** Whether channels of this type can be relayed to (an adaptor speaks the vendor's protocol). */
export function hasAdaptor(channelType: number): boolean {
  return PROTOCOL_BY_TYPE.has(channelType);
}

/** What the provider serving a type knows about its channels' fields (its folder's channel.ts); undefined when none. */
export function channelFactsOf(channelType: number): ChannelFacts | undefined {
  const protocol = PROTOCOL_BY_TYPE.get(channelType);
  return protocol === undefined ? undefined : providerChannelFacts(protocol, channelType);
}

/** The console's and the relay's answer for a channel of a type without an adaptor. */
export function unsupportedTypeMessage(channelType: number): string {
  return `渠道类型 ${channelTypeName(channelType)}（${channelType}）暂不支持：本网关还没有该类型的适配器，不会向它转发请求`;
}
