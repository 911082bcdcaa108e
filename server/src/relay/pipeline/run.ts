// The relay pipeline: every JSON relay request, whatever its client format, mode or provider, runs these steps in
// this order (one file each in this folder). No step names a vendor or a format: what differs per endpoint is the
// mode (relay/modes/), per client format its codec (relay/formats/), per upstream its provider (relay/providers/).
import type { AppContext } from '../../context.js';
import type { HttpResponse } from '../../lib/http-response.js';
import type { RelayRequest } from '../request.js';
import type { RelayServices } from '../services.js';
import { asRelayError, RelayError, sendRelayError, sendStreamError } from '../errors.js';
import { authenticate } from './authenticate.js';
import { parse } from './parse.js';
import { admit } from './admit.js';
import { routeRelay } from './route.js';
import { validate } from './validate.js';
import { price } from './price.js';
import { limit, releaseLimits } from './limit.js';
import { holdChannel } from './channel-cap.js';
import { quote, reserve } from './reserve.js';
import { attempts } from './attempts.js';
import { refund, settle } from './settle.js';
import { newState, type JsonRelayOptions, type RelayState } from './state.js';
import { observe } from './observe.js';

export type { JsonRelayOptions } from './state.js';
export { shouldRetry } from './attempts.js';

/** One relay request, tracked in svc.inFlight until it has settled and logged (a stop waits for it: shutdown.ts). */
export function relayJson(
  svc: RelayServices,
  ctx: AppContext,
  req: RelayRequest,
  res: HttpResponse,
  opts: JsonRelayOptions,
): Promise<void> {
  const p = run(newState(svc, ctx, req, res, opts));
  const inFlight = svc.inFlight;
  inFlight.add(p);
  return p.finally(() => inFlight.delete(p));
}

async function run(s: RelayState): Promise<void> {
  let status = 200;
  try {
    await authenticate(s);
    parse(s);
    await admit(s);
    const routed = routeRelay(s);
    if (routed) await routed;
    validate(s);
    price(s);
    quote(s);
    // the common case (no limit, no capped channel) goes on without waiting
    const limited = limit(s);
    if (limited) await limited;
    const held = holdChannel(s);
    if (held) await held;
    await reserve(s);
    const failure = await settle(s, await attempts(s));
    if (failure) answerError(s, failure);
    // 499: the client left (nginx's code); its request was billed for what was delivered, or refunded
    status = failure ? failure.status : !s.charged || s.charged.clientLeft ? 499 : 200;
  } catch (err) {
    // an overlapped reservation may still be committing: whatever it took goes back
    if (!s.reservation && s.reserving) await s.reserving.catch(() => null);
    if (s.reservation) await refund(s, s.reservation);
    await releaseLimits(s);
    if (!(err instanceof RelayError)) s.ctx.log.error({ err, reqId: s.req.id }, 'relay failed');
    const answer = asRelayError(err);
    status = answer.status;
    answerError(s, answer);
  } finally {
    s.keepAlive?.stop();
    observe(s, status);
  }
}

/** The error in the client's format: a JSON answer, or an event once pings have committed the stream. */
function answerError(s: RelayState, err: RelayError): void {
  const format = s.mode.format ?? 'openai';
  if (s.keepAlive?.committed)
    sendStreamError(s.res, err, s.req.id, !!s.mode.eventStream, format, s.req.headers['accept-language']);
  else sendRelayError(s.res, err, s.req.id, s.req.headers, format);
}
