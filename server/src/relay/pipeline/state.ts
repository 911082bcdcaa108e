// What one relay request carries from step to step (pipeline/run.ts). Each step fills in its part; a later step reads
// only what an earlier one set.
import type { AppContext } from '../../context.js';
import type { HttpResponse } from '../../lib/http-response.js';
import type { CachedChannel } from '../../services/cache/channel-cache.js';
import type { Reservation } from '../../services/billing/index.js';
import type { Admitted, ChannelHold } from '../../services/limits/index.js';
import type { PriceData } from '../../services/pricing/index.js';
import type { RelayCaller } from '../auth.js';
import type { StreamKeepAlive } from '../keepalive.js';
import type { RelayMode } from '../modes/mode.js';
import type { RelayRequest } from '../request.js';
import type { RelayServices } from '../services.js';
import type { RequestTrace } from '../../services/tracing.js';
import type { AffinityHit } from './affinity.js';

export interface JsonRelayOptions {
  mode: RelayMode;
  /** POST /pg/chat/completions: console session auth, user quota only */
  playground?: boolean;
  /** model taken from the path (e.g. /v1/engines/:model/embeddings) when the body has none */
  pathModel?: string;
}

export interface RelayState {
  readonly svc: RelayServices;
  readonly ctx: AppContext;
  readonly req: RelayRequest;
  readonly res: HttpResponse;
  readonly opts: JsonRelayOptions;
  readonly mode: RelayMode;
  readonly start: number;
  // ---- authenticate
  caller: RelayCaller;
  /** the balance before the request, for new-api's low-quota check */
  quotaBefore: number;
  // ---- parse
  /** the bytes forwarded when nothing changes */
  raw: Buffer;
  body: Record<string, any>;
  model: string;
  // ---- admit
  group: string;
  /** the user whose model rate limit counted this request (0: none) */
  rateKey: number;
  // ---- route
  channel: CachedChannel;
  /** the channel-affinity rule that applies (affinity.ts); null for most requests */
  affinity: AffinityHit | null;
  // ---- price
  price: PriceData;
  /** a charge known up front (images), else -1 */
  fixed: number;
  /** the local prompt count, made once and only when asked */
  prompt: () => number;
  // ---- quote (reserve.ts)
  /** the quota the request will reserve, known before the limits count it */
  reserveAmount: number;
  /** new-api's exact amount, taken if the database refuses `reserveAmount` (a bound of the prompt); else null */
  reserveExact: (() => number) | null;
  // ---- limit
  /** what the usage limits counted (null: no limit applies) */
  limits: Admitted | null;
  // ---- channel cap (channel-cap.ts)
  /** the request's bound counted on its channel's daily cap (null: the channel has none, or is pinned) */
  channelHold: ChannelHold | null;
  // ---- reserve
  reservation: Reservation | null;
  reserving: Promise<Reservation> | null;
  /** an overlapped reservation the first attempt waits for before reading the answer */
  gate: Promise<Reservation> | null;
  // ---- attempt
  keepAlive: StreamKeepAlive | null;
  /** the channels tried, in order */
  used: number[];
  // ---- observability (observe.ts)
  /** this request's span when tracing is on */
  trace: RequestTrace | null;
  /** counted in metrics.streamsOpen until the request ends */
  streaming: boolean;
  /** what settlement charged, for the metrics and the access log */
  charged: Charged | null;
}

export interface Charged {
  prompt: number;
  completion: number;
  quota: number;
  /** ms from the start to the upstream's answer head */
  frt: number;
  stream: boolean;
  clientLeft: boolean;
}

/** A request's state before its first step: the fields the steps fill are set as they run. */
export function newState(
  svc: RelayServices,
  ctx: AppContext,
  req: RelayRequest,
  res: HttpResponse,
  opts: JsonRelayOptions,
): RelayState {
  return {
    svc,
    ctx,
    req,
    res,
    opts,
    mode: opts.mode,
    start: Date.now(),
    caller: undefined!,
    quotaBefore: 0,
    raw: req.body,
    body: undefined!,
    model: '',
    group: '',
    rateKey: 0,
    channel: undefined!,
    affinity: null,
    price: undefined!,
    fixed: -1,
    prompt: () => 0,
    reserveAmount: 0,
    reserveExact: null,
    limits: null,
    channelHold: null,
    reservation: null,
    reserving: null,
    gate: null,
    keepAlive: null,
    used: [],
    trace: svc.tracer?.request(`relay ${opts.mode.name}`, req.id, { 'gateway.route': opts.mode.name }) ?? null,
    streaming: false,
    charged: null,
  };
}
