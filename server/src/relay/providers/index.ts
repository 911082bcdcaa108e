// The provider registry: one line per provider, each a folder under providers/ whose index.ts exports its manifest
// made with defineProvider (manifest.ts, the contract in types.ts).
//
// Adding an OpenAI-compatible vendor is one folder and one line:
//   providers/<vendor>/index.ts   export const acmeAdaptor = openaiCompatible({ id: '<vendor>', types: [<type>],
//                                   headers: () => ({ … }) })            (openai/compatible.ts; `endpoints` to narrow)
//   the PROVIDERS list below      acmeAdaptor,
// The folder also holds the vendor's recorded answers (__fixtures__/, which test/formats/provider-conformance.test.ts
// asks of every provider listed here). Its base URL is the channel's, else its channel type's default
// (services/channel-types.ts); an endpoint it leaves out of `endpoints` is refused before anything is sent
// (manifest.ts `declares`). A vendor with its own protocol declares its own entries (target, body conversion) with
// defineProvider.
import { anthropicAdaptor } from './anthropic/index.js';
import { azureAdaptor } from './azure/index.js';
import { geminiAdaptor } from './gemini/index.js';
import { bedrockAdaptor } from './bedrock/index.js';
import { vertexAdaptor } from './vertex/index.js';
import { ollamaAdaptor } from './ollama/index.js';
import { openaiAdaptor } from './openai/index.js';
import type { Adaptor, RelayInfo } from './types.js';
import { wireOf } from './manifest.js';
import { codecFor } from '../formats/index.js';
import type { HubRequest } from '../hub/types.js';
import { registerRelayableTypes } from '../../services/channel-protocols.js';

/**
 * A provider whose key is exchanged for a token has that token dropped from the relay's credential cache when the
 * upstream refuses it (401), so the next request exchanges again: declared once, not written per provider.
 */
function withCredentialRefusal(adaptor: Adaptor): Adaptor {
  const credential = adaptor.credential;
  if (credential?.kind !== 'exchanged' || adaptor.unauthorized) return adaptor;
  return { ...adaptor, unauthorized: (info) => info.settings.credentials?.invalidate(credential, info.channel.key) };
}

const PROVIDERS: readonly Adaptor[] = [
  openaiAdaptor,
  azureAdaptor,
  ollamaAdaptor,
  anthropicAdaptor,
  geminiAdaptor,
  bedrockAdaptor,
  vertexAdaptor,
].map(withCredentialRefusal);

const BY_ID = new Map<string, Adaptor>();
const BY_TYPE = new Map<number, Adaptor>();

/** Makes a provider's channel types relayable and routes them to it (the list above; tests add their own). */
export function registerProvider(declared: Adaptor): void {
  const provider = withCredentialRefusal(declared);
  if (BY_ID.has(provider.id)) throw new Error(`provider ${provider.id} is registered already`);
  registerRelayableTypes(provider.id, provider.types);
  BY_ID.set(provider.id, provider);
  for (const type of provider.types) BY_TYPE.set(type, provider);
}

for (const provider of PROVIDERS) registerProvider(provider);

/**
 * Every built-in provider with its id, which is also its folder under providers/ (where its recorded fixtures live):
 * test/formats/provider-conformance.test.ts runs the same checks over each one.
 */
export function providerEntries(): readonly (readonly [string, Adaptor])[] {
  return PROVIDERS.map((p) => [p.id, p] as const);
}

/** The adaptor of a relayable type; callers check hasAdaptor first (unsupported channels never reach here). */
export function adaptorFor(channelType: number): Adaptor {
  const adaptor = BY_TYPE.get(channelType);
  if (!adaptor) throw new Error(`no adaptor for channel type ${channelType}`);
  return adaptor;
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

export { declares, defineProvider, requestedEndpoint, wireOf } from './manifest.js';
export { openaiCompatible, type OpenAICompatibleVendor } from './openai/compatible.js';
export { ENDPOINT_KINDS, type EndpointKind } from '../modes/endpoint-kind.js';
export { hasAdaptor, unsupportedTypeMessage } from '../../services/channel-protocols.js';
export type {
  Adaptor,
  CredentialSource,
  ExchangedCredential,
  ExchangedToken,
  ProviderCredential,
  EndpointEntry,
  EndpointSet,
  ProviderManifest,
  SignableRequest,
  ProviderChannel,
  ProviderError,
  ProviderSettings,
  RelayInfo,
  UpstreamTarget,
  UpstreamUsage,
} from './types.js';
