// Adaptor lookup by channel type. Which types are relayable, and over which protocol, is decided in
// services/channel-protocols.ts; this maps each protocol to the adaptor that speaks it.
// To add a provider: create providers/<name>/index.ts implementing Adaptor (types.ts), name its protocol in
// services/channel-protocols.ts and map it here.
import { anthropicAdaptor } from './anthropic/index.js';
import { azureAdaptor } from './azure/index.js';
import { geminiAdaptor } from './gemini/index.js';
import { bedrockAdaptor } from './bedrock/index.js';
import { vertexAdaptor } from './vertex/index.js';
import { ollamaAdaptor } from './ollama/index.js';
import { openaiAdaptor } from './openai/index.js';
import type { Adaptor, RelayInfo } from './types.js';
import type { WireFormat } from '../formats/codec.js';
import { codecFor } from '../formats/index.js';
import type { HubRequest } from '../hub/types.js';
import { relayableTypes, type ChannelProtocol } from '../../services/channel-protocols.js';

/**
 * A provider whose key is exchanged for a token has that token dropped from the relay's credential cache when the
 * upstream refuses it (401), so the next request exchanges again: declared once, not written per provider.
 */
function withCredentialRefusal(adaptor: Adaptor): Adaptor {
  const credential = adaptor.credential;
  if (credential?.kind !== 'exchanged' || adaptor.unauthorized) return adaptor;
  return { ...adaptor, unauthorized: (info) => info.settings.credentials?.invalidate(credential, info.channel.key) };
}

const DECLARED: Record<ChannelProtocol, Adaptor> = {
  openai: openaiAdaptor,
  azure: azureAdaptor,
  ollama: ollamaAdaptor,
  anthropic: anthropicAdaptor,
  gemini: geminiAdaptor,
  bedrock: bedrockAdaptor,
  vertex: vertexAdaptor,
};

const BY_PROTOCOL = Object.fromEntries(
  Object.entries(DECLARED).map(([protocol, adaptor]) => [protocol, withCredentialRefusal(adaptor)]),
) as Record<ChannelProtocol, Adaptor>;

const BY_TYPE = new Map<number, Adaptor>(
  relayableTypes().map(([type, protocol]): [number, Adaptor] => [type, BY_PROTOCOL[protocol]]),
);

/**
 * Every provider with its protocol, which is also its folder under providers/ (where its recorded fixtures live):
 * test/formats/provider-conformance.test.ts runs the same checks over each one.
 */
export function providerEntries(): readonly (readonly [ChannelProtocol, Adaptor])[] {
  return Object.entries(BY_PROTOCOL) as [ChannelProtocol, Adaptor][];
}

/** The adaptor of a relayable type; callers check hasAdaptor first (unsupported channels never reach here). */
export function adaptorFor(channelType: number): Adaptor {
  const adaptor = BY_TYPE.get(channelType);
  if (!adaptor) throw new Error(`no adaptor for channel type ${channelType}`);
  return adaptor;
}

/** The wire format an adaptor's upstream speaks for this request. */
export function wireOf(adaptor: Adaptor, info: RelayInfo): WireFormat {
  return typeof adaptor.wire === 'function' ? adaptor.wire(info) : (adaptor.wire ?? 'openai');
}

/**
 * The upstream body of a request on the translated lane, from its hub form: the provider's own builder (vendor options,
 * inlined images, signing-ready bodies), else its wire codec's.
 */
export async function upstreamBodyFromHub(
  adaptor: Adaptor,
  info: RelayInfo,
  hub: HubRequest,
): Promise<Record<string, unknown>> {
  const body = adaptor.fromHub
    ? await adaptor.fromHub(info, hub)
    : codecFor(wireOf(adaptor, info)).requestFromHub(hub, { model: info.upstreamModel, stream: info.isStream });
  if (info.isStream && !adaptor.supportsStreamOptions(info)) delete body.stream_options;
  return body;
}

export { hasAdaptor, unsupportedTypeMessage } from '../../services/channel-protocols.js';
export type {
  Adaptor,
  CredentialSource,
  ExchangedCredential,
  ExchangedToken,
  ProviderCredential,
  SignableRequest,
  ProviderChannel,
  ProviderError,
  ProviderSettings,
  RelayInfo,
  UpstreamTarget,
  UpstreamUsage,
} from './types.js';
