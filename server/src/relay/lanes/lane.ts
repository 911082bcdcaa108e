// The lanes of an attempt (relay/attempt.ts picks one, lanes/run.ts runs it): what differs between them is how the
// upstream body is made and how the upstream's 200 answer reaches the client. Everything else (headers, signing, the
// call, the client going away, upstream errors) is the same for all of them and lives in lanes/run.ts.
import type { AppContext } from '../../context.js';
import type { HttpResponse } from '../../lib/http-response.js';
import type { Redact } from '../../lib/redact.js';
import type { CachedChannel } from '../../services/cache/channel-cache.js';
import type { Reservation } from '../../services/billing/index.js';
import type { AttemptResult } from '../attempt-result.js';
import { hubOutputTransformOf } from '../channel-setting.js';
import type { HubOutputTransform } from '../hub/output-transforms.js';
import type { StreamKeepAlive } from '../keepalive.js';
import type { ModeTranslation, RelayMode } from '../modes/mode.js';
import { wireOf, type Adaptor, type ProviderWire, type RelayInfo } from '../providers/index.js';
import type { RelayRequest } from '../request.js';
import type { OutputCheck } from '../sensitive-output.js';
import type { RelayServices } from '../services.js';
import type { UpstreamCall } from '../upstream-call.js';

export interface AttemptInput {
  channel: CachedChannel;
  mode: RelayMode;
  body: Record<string, any>;
  raw: Buffer;
  model: string;
  isStream: boolean;
  clientWantsUsage: boolean;
  passThrough: boolean;
  reqId: string;
  origin: string | undefined;
  start: number;
  prompt: () => number;
  /** the reservation, still committing while this attempt's request goes out (overlapsReservation) */
  gate: Promise<Reservation> | null;
  /** pings of a silent stream (relay/keepalive.ts), when general_setting.ping_interval_enabled is on */
  keepAlive: StreamKeepAlive | null;
  /** the completion's sensitive-word check, null when off (read once per request: relay/sensitive-output.ts) */
  sensitive: OutputCheck | null;
}

/** One attempt on one channel as its lane sees it: one object per attempt, filled in as the attempt goes. */
export interface LaneAttempt {
  svc: RelayServices;
  ctx: AppContext;
  req: RelayRequest;
  res: HttpResponse;
  a: AttemptInput;
  info: RelayInfo;
  adaptor: Adaptor;
  /** the wire format the provider speaks for this request (`vendor`: its own, which no client speaks) */
  providerFormat: ProviderWire;
  /** the provider speaks the client's format, or also accepts it as it is */
  native: boolean;
  /** the mode's own translation to the provider's format (the endpoint-translated lane), or undefined */
  translation: ModeTranslation | undefined;
  /** the channel's output settings (force_format, thinking_to_content) for an answer decoded to the hub, or null */
  output: HubOutputTransform | null;
  /** once the upstream answered: the call, its first-response time, the channel's redactor */
  call: UpstreamCall | null;
  frt: number;
  redact: Redact | null;
  /** the client went away once the request was out (set by lanes/run.ts as it happens) */
  clientGone: boolean;
}

/** A LaneAttempt whose upstream has answered 200. */
export type AnsweredAttempt = LaneAttempt & { call: UpstreamCall; redact: Redact };

export interface Lane {
  /** the provider speaks the client's format (the client's Accept header is passed on) */
  readonly native: boolean;
  /**
   * The upstream body, or the result that ends the attempt here (a request the provider's format cannot express, a
   * client gone while it was built). A promise only when building it must wait (remote images).
   */
  body(l: LaneAttempt): Buffer | AttemptResult | Promise<Buffer | AttemptResult>;
  /** The upstream's 200 answer to the client, and what it costs. Throwing makes it a 502 bad response. */
  answer(l: AnsweredAttempt): AttemptResult | Promise<AttemptResult>;
}

/** The attempt's facts before its lane is chosen: the model sent upstream, the provider's format, native or not. */
export function laneAttempt(
  svc: RelayServices,
  ctx: AppContext,
  req: RelayRequest,
  res: HttpResponse,
  a: AttemptInput,
  adaptor: Adaptor,
): LaneAttempt {
  const { channel, mode } = a;
  const mapped = channel.modelMapping?.[a.model];
  const clientFormat = mode.format ?? 'openai';
  const info: RelayInfo = {
    settings: svc.providers,
    channel,
    mode,
    originModel: a.model,
    upstreamModel: typeof mapped === 'string' && mapped ? mapped : a.model,
    isStream: a.isStream,
    clientFormat,
    clientHeaders: req.headers,
    clientUrl: req.url,
  };
  const providerFormat = wireOf(adaptor, info);
  const native = clientFormat === providerFormat || !!adaptor.alsoSpeaks?.(info).includes(clientFormat);
  // a mode without a hub form (embeddings) may still know how to ask this provider's format
  const translation = native || providerFormat === 'vendor' ? undefined : mode.translate?.[providerFormat];
  return {
    svc,
    ctx,
    req,
    res,
    a,
    info,
    adaptor,
    providerFormat,
    native,
    translation,
    output: mode.hub ? hubOutputTransformOf(channel) : null,
    call: null,
    frt: 0,
    redact: null,
    clientGone: false,
  };
}
