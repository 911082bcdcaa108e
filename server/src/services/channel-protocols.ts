// Which protocol (provider) the relay speaks to each channel type, read from the providers' registry
// (relay/providers/channel-facts.ts, a leaf: one line per provider with its types and channel facts). A type no
// provider serves has no adaptor speaking its vendor's protocol, so its channels are refused when created or updated,
// left out of routing and never sent a request (new-api sent them an OpenAI request with the raw key, which for
// Vertex AI is a whole service-account JSON as a Bearer token).
// It lives in services so that channel management and the channel cache can ask it without importing the relay's
// core; a provider registered at run time (tests) adds its types with registerRelayableTypes.
import { CHANNEL_TYPES, channelTypeName } from './channel-types.js';
import { PROVIDER_LINES, providerChannelFacts, type ChannelFacts } from '../relay/providers/channel-facts.js';

export { OPENAI_COMPATIBLE_TYPES } from '../relay/providers/channel-facts.js';

/** Each channel type with the provider that serves it: the providers' registry (relay/providers/channel-facts.ts). */
const PROTOCOL_BY_TYPE = new Map<number, string>(
  PROVIDER_LINES.flatMap((line) => line.types.map((type): [number, string] => [type, line.id])),
);

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

/**
 * The task platforms' channel types: 2 Midjourney Proxy, 5 Midjourney Proxy Plus, 36 Suno API. The console creates
 * them (their requests arrive on /mj/* and /suno/*, not on the chat relay), so without a provider of their own they get
 * these facts: a required base URL (the path before /mj or /suno), the key as the proxy's secret, the built-in models.
 */
export const TASK_CHANNEL_TYPES: readonly number[] = [2, 5, 36];

/** Whether the console creates and edits channels of this type: a relayable one or a task platform's. */
export function consoleAcceptsType(channelType: number): boolean {
  return hasAdaptor(channelType) || TASK_CHANNEL_TYPES.includes(channelType);
}

function taskChannelFacts(channelType: number): ChannelFacts {
  return {
    keyHint: '',
    wholeKey: false,
    baseUrlRequired: true,
    check: () => null,
    models: { fixed: CHANNEL_TYPES[channelType]?.models ?? [] },
  };
}

/** What the provider serving a type knows about its channels' fields (its folder's channel.ts); undefined when none. */
export function channelFactsOf(channelType: number): ChannelFacts | undefined {
  const protocol = PROTOCOL_BY_TYPE.get(channelType);
  const facts = protocol === undefined ? undefined : providerChannelFacts(protocol, channelType);
  return facts ?? (TASK_CHANNEL_TYPES.includes(channelType) ? taskChannelFacts(channelType) : undefined);
}

/** The console's and the relay's answer for a channel of a type without an adaptor. */
export function unsupportedTypeMessage(channelType: number): string {
  return `渠道类型 ${channelTypeName(channelType)}（${channelType}）暂不支持：本网关还没有该类型的适配器，不会向它转发请求`;
}
