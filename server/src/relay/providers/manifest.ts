// A provider manifest made into the Adaptor the relay calls, and the check that refuses what it does not declare.
// The endpoint a request asks of a provider follows from its lane: the client's own endpoint when the provider speaks
// the client's format (native) or the mode translates it (Gemini's embedContent on an OpenAI channel); `chat` when the
// request goes through the hub (a Claude client on an OpenAI channel). A request with neither lane asks nothing the
// provider could serve.
import type { FormatCodec, WireFormat } from '../formats/codec.js';
import { codecFor } from '../formats/index.js';
import type { EndpointKind } from '../modes/endpoint-kind.js';
import type { Adaptor, EndpointEntry, ProviderManifest, RelayInfo, VendorCodec } from './types.js';

/** What an upstream speaks: a client wire format, or a vendor's own (`vendor`: the adaptor's codec), which none does. */
export type ProviderWire = WireFormat | 'vendor';

/** The wire format an adaptor's upstream speaks for this request. */
export function wireOf(adaptor: Pick<Adaptor, 'wire' | 'codec'>, info: RelayInfo): ProviderWire {
  if (adaptor.codec) return 'vendor';
  return typeof adaptor.wire === 'function' ? adaptor.wire(info) : (adaptor.wire ?? 'openai');
}

/** What reads the upstream's answers and streams to the hub: the vendor's own codec, else its wire format's. */
export type AnswerCodec = Pick<FormatCodec, 'responseToHub' | 'streamToHub' | 'claudeUsage'> &
  Pick<VendorCodec, 'readAnswer'>;

export function answerCodecOf(adaptor: Pick<Adaptor, 'wire' | 'codec'>, info: RelayInfo): AnswerCodec {
  const wire = wireOf(adaptor, info);
  return wire === 'vendor' ? adaptor.codec! : codecFor(wire);
}

/** The endpoint this request asks of the provider, null when no lane leads to it. */
export function requestedEndpoint(
  adaptor: Pick<Adaptor, 'wire' | 'codec' | 'alsoSpeaks'>,
  info: RelayInfo,
): EndpointKind | null {
  const { mode, clientFormat } = info;
  const wire = wireOf(adaptor, info);
  if (clientFormat === wire || adaptor.alsoSpeaks?.(info).includes(clientFormat)) return mode.endpoint;
  if (mode.hub) return 'chat';
  return wire !== 'vendor' && mode.translate?.[wire] ? mode.endpoint : null;
}

/** Whether the provider serves this request: a lane leads to one of its declared endpoints. */
export function declares(
  adaptor: Pick<Adaptor, 'wire' | 'codec' | 'alsoSpeaks' | 'endpoints'>,
  info: RelayInfo,
): boolean {
  const kind = requestedEndpoint(adaptor, info);
  return kind !== null && adaptor.endpoints[kind] !== undefined;
}

const leaveUnchanged = () => false;

/** The Adaptor of a manifest: each per-endpoint call goes to the request's entry, else to the provider's default. */
export function defineProvider(m: ProviderManifest): Adaptor {
  const entryOf = (info: RelayInfo): EndpointEntry => {
    const kind = requestedEndpoint(m, info);
    const entry = kind && m.endpoints[kind];
    // the relay checks `declares` first: reaching here is a bug, and nothing may go to another endpoint's URL
    if (!entry) throw new Error(`provider ${m.id} does not serve ${kind ?? info.mode.endpoint} requests`);
    return entry;
  };
  const required = <T>(part: T | undefined, name: string): T => {
    if (!part) throw new Error(`provider ${m.id} has no ${name} for this endpoint`);
    return part;
  };
  return {
    ...m,
    target: (info) => required(entryOf(info).target ?? m.target, 'target')(info),
    headers: (info) => required(entryOf(info).headers ?? m.headers, 'headers')(info),
    convertRequest: (info, body) => (entryOf(info).convertRequest ?? m.convertRequest ?? leaveUnchanged)(info, body),
    convertsAnswer: (info) => !!(entryOf(info).convertResponse ?? m.convertResponse),
    convertResponse(info, body) {
      const convert = entryOf(info).convertResponse ?? m.convertResponse;
      return convert ? convert(info, body) : null;
    },
    ...(Object.values(m.endpoints).some((e) => e.awaitAnswer)
      ? {
          awaitsAnswer: (info) => !!entryOf(info).awaitAnswer,
          awaitAnswer: (info, receipt, io) => required(entryOf(info).awaitAnswer, 'follow-up')(info, receipt, io),
        }
      : {}),
    ...(Object.values(m.endpoints).some((e) => e.convertForm)
      ? { convertForm: (info, raw, boundary) => entryOf(info).convertForm?.(info, raw, boundary) ?? null }
      : {}),
    ...(m.fromHub || Object.values(m.endpoints).some((e) => e.fromHub)
      ? {
          fromHub: (info, hub) => required(entryOf(info).fromHub ?? m.fromHub, 'body builder')(info, hub),
        }
      : {}),
  };
}
