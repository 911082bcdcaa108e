// The relay's providers: each a folder under providers/ whose index.ts exports its manifest made with defineProvider
// (manifest.ts, the contract in types.ts), registered by one line in channel-facts.ts (PROVIDER_LINES: id, channel
// types, channel facts, the folder's import). This module imports a folder on the first request of one of its types
// and checks that its manifest declares the id and types of its line.
//
// Adding an OpenAI-compatible vendor is one folder and one line:
//   providers/<vendor>/index.ts    export const acmeAdaptor = openaiCompatible({ id: '<vendor>', types: [<type>],
//                                    headers: () => ({ … }) })           (openai/compatible.ts; `endpoints` to narrow)
//   providers/<vendor>/channel.ts  its channel facts: key format, `other`, model list (channel-facts-contract.ts)
//   PROVIDER_LINES                 { id: '<vendor>', types: [<type>], facts: acmeChannelFacts,
//                                    load: async () => (await import('./<vendor>/index.js')).acmeAdaptor },
// (`apiPath: '/api/paas/v4'` when its API is not under /v1, with `serves` naming its endpoints).
// The folder also holds the vendor's recorded answers (__fixtures__/, which test/formats/provider-conformance.test.ts
// asks of every provider listed). Its base URL is the channel's, else its channel type's default
// (services/channel-types.ts); an endpoint it leaves out of `endpoints` is refused before anything is sent
// (manifest.ts `declares`). A vendor with its own protocol declares its own entries (target, body conversion) with
// defineProvider.
import { registerRelayableTypes } from '../../services/channel-protocols.js';
import { PROVIDER_LINES, type ProviderLine } from './channel-facts.js';
import type { Adaptor, RelayInfo, TaskAdaptor } from './types.js';
import { wireOf } from './manifest.js';
import { codecFor } from '../formats/index.js';
import type { HubRequest } from '../hub/types.js';
import type { WireFormat } from '../formats/codec.js';

/** The relay's providers: every line of the registry but the task platforms (relay/tasks/ sends their requests). */
const PROVIDERS: readonly ProviderLine[] = PROVIDER_LINES.filter((line) => !line.task);

/**
 * A provider whose key is exchanged for a token has that token dropped from the relay's credential cache when the
 * upstream refuses it (401), so the next request exchanges again: declared once, not written per provider.
 */
function withCredentialRefusal(adaptor: Adaptor): Adaptor {
  const credential = adaptor.credential;
  if (credential?.kind !== 'exchanged' || adaptor.unauthorized) return adaptor;
  return {
    ...adaptor,
    unauthorized: (info) => info.settings.credentials?.invalidate(credential, info.channel.key, info.channel),
  };
}

/** loaded providers by id and by channel type */
const BY_ID = new Map<string, Adaptor>();
const BY_TYPE = new Map<number, Adaptor>();
/** the relay's providers by channel type, loaded or not; a load in flight by id (one import for concurrent requests) */
const BUILTIN_BY_TYPE = new Map<number, ProviderLine>();
const LOADING = new Map<string, Promise<Adaptor>>();

function install(provider: Adaptor): void {
  BY_ID.set(provider.id, provider);
  for (const type of provider.types) BY_TYPE.set(type, provider);
}

/** Makes a provider's channel types relayable and routes them to it (the list above; tests add their own). */
export function registerProvider(declared: Adaptor): void {
  const provider = withCredentialRefusal(declared);
  if (BY_ID.has(provider.id) || PROVIDER_LINES.some((p) => p.id === provider.id))
    throw new Error(`provider ${provider.id} is registered already`);
  registerRelayableTypes(provider.id, provider.types);
  install(provider);
}

for (const builtin of PROVIDER_LINES) for (const type of builtin.types) BUILTIN_BY_TYPE.set(type, builtin);

function sameTypes(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((t) => b.includes(t));
}

function installLine(line: ProviderLine, declared: Adaptor): Adaptor {
  // the folder's manifest and its registry line must agree, or requests of a type would reach another provider
  if (declared.id !== line.id || !sameTypes(declared.types, line.types))
    throw new Error(`provider folder ${line.id} declares ${declared.id} for types ${declared.types.join(',')}`);
  // a task platform's rows are filed under its line's id (taskPlatformOf answers before the folder is loaded)
  if (declared.task && declared.task.platform !== line.id)
    throw new Error(`task platform ${line.id} files its tasks as ${declared.task?.platform}`);
  const provider = withCredentialRefusal(declared);
  install(provider);
  return provider;
}

function loadBuiltin(builtin: ProviderLine): Promise<Adaptor> {
  const loaded = BY_ID.get(builtin.id);
  if (loaded) return Promise.resolve(loaded);
  let loading = LOADING.get(builtin.id);
  if (!loading) {
    loading = builtin.load().then((declared) => installLine(builtin, declared));
    LOADING.set(builtin.id, loading);
    loading.catch(() => LOADING.delete(builtin.id));
  }
  return loading;
}

/** The adaptor of a relayable type when its folder is loaded already (the relay's hot path asks this first). */
export function loadedAdaptor(channelType: number): Adaptor | undefined {
  return BY_TYPE.get(channelType);
}

/** The adaptor of a relayable type, its folder loaded on first use; callers check hasAdaptor first. */
export function adaptorFor(channelType: number): Promise<Adaptor> {
  const loaded = BY_TYPE.get(channelType);
  if (loaded) return Promise.resolve(loaded);
  const builtin = BUILTIN_BY_TYPE.get(channelType);
  if (!builtin) return Promise.reject(new Error(`no adaptor for channel type ${channelType}`));
  return loadBuiltin(builtin);
}

// Task platforms: no relay endpoint (their requests go through relay/tasks/), so not in PROVIDERS, whose members the
// conformance test asks for recorded chat answers. Loaded as the relay's providers are: on first use (a submit, or a
// poll that finds unfinished tasks: relay/tasks/register.ts).
const TASK_LINES: readonly ProviderLine[] = PROVIDER_LINES.filter((line) => line.task);

/** The task platform of a channel type (its line's id, which is also its tasks' `platform`), without loading it. */
export function taskPlatformOf(channelType: number): string | undefined {
  const line = BUILTIN_BY_TYPE.get(channelType);
  return line?.task ? line.id : undefined;
}

/** The task adaptor of a task platform, its folder loaded on first use. */
export async function taskAdaptorOf(platform: string): Promise<TaskAdaptor> {
  const line = TASK_LINES.find((l) => l.id === platform);
  const task = line && (await loadBuiltin(line)).task;
  if (!task) throw new Error(`no task platform ${platform}`);
  return task;
}

/** The task platforms' names (relay/tasks/poll.ts asks for each one's unfinished rows before loading it). */
export const TASK_PLATFORMS: readonly string[] = TASK_LINES.map((line) => line.id);

/**
 * Every built-in provider with its id, which is also its folder under providers/ (where its recorded fixtures live),
 * each loaded: test/formats/provider-conformance.test.ts runs the same checks over each one.
 */
export function providerEntries(): Promise<readonly (readonly [string, Adaptor])[]> {
  return Promise.all(PROVIDERS.map(async (p) => [p.id, await loadBuiltin(p)] as const));
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
  const wire = wireOf(adaptor, info);
  if (!adaptor.fromHub && wire === 'vendor') throw new Error(`provider ${adaptor.id} has no body builder`);
  const body = adaptor.fromHub
    ? await adaptor.fromHub(info, hub)
    : codecFor(wire as WireFormat).requestFromHub(hub, { model: info.upstreamModel, stream: info.isStream });
  if (info.isStream && !adaptor.supportsStreamOptions(info)) delete body.stream_options;
  return body;
}

export {
  answerCodecOf,
  declares,
  defineProvider,
  requestedEndpoint,
  wireOf,
  type AnswerCodec,
  type ProviderWire,
} from './manifest.js';
export { ENDPOINT_KINDS, type EndpointKind } from '../modes/endpoint-kind.js';
export { hasAdaptor, unsupportedTypeMessage } from '../../services/channel-protocols.js';
export type { OpenAICompatibleVendor } from './openai/compatible.js';
export { ClientLeft } from './types.js';
export type {
  Adaptor,
  AwaitedAnswer,
  ConvertedAnswer,
  FollowUpIo,
  CredentialSource,
  InBandError,
  VendorCodec,
  ExchangedCredential,
  ExchangedToken,
  ProviderCredential,
  EndpointEntry,
  EndpointSet,
  ProviderManifest,
  SignableRequest,
  TaskAdaptor,
  TaskRequest,
  TaskStateRead,
  TaskSubmitRaw,
  TaskSubmitContext,
  TaskFetchContext,
  TaskContentSource,
  TaskContentContext,
  TaskPriceUnits,
  TaskValidation,
  ProviderChannel,
  ProviderError,
  ProviderSettings,
  RelayInfo,
  UpstreamTarget,
  UpstreamUsage,
} from './types.js';
