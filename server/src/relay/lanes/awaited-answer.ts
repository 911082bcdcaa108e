// An upstream 200 answer that is a receipt, not the result (the provider's `awaitAnswer`: DashScope's asynchronous
// image task). The provider follows it up through the FollowUpIo built here: GETs on the same origin through the
// channel's transport (its proxy included), waits, and the SSRF-guarded image fetch; every one of them stops when the
// client goes away. The client's answer then leaves as any whole JSON answer does (json-answer.ts), and only then is
// the request charged; a vendor failure, a timeout or a client gone before the images were there charge nothing.
import { GONE, badResponse, type AttemptResult } from '../attempt-result.js';
import { RelayError } from '../errors.js';
import { ClientLeft, type FollowUpIo } from '../providers/index.js';
import { redactProviderError } from '../redact.js';
import { TASK_CALL_TIMEOUT_MS } from '../tasks/upstream.js';
import { UpstreamCall } from '../upstream-call.js';
import { inBandFailure, jsonAnswer } from './json-answer.js';
import type { AnsweredAttempt } from './lane.js';
import { upstreamTransport } from './upstream-request.js';

/** The follow-up calls of one attempt, each ended by `signal` (the client's leaving). */
function followUpIo(l: AnsweredAttempt, signal: AbortSignal): FollowUpIo {
  const { svc, adaptor, a, info } = l;
  const transport = upstreamTransport(svc, adaptor, a.channel);
  const { origin } = adaptor.target(info);
  const left = () => new ClientLeft();
  return {
    request: a.body,
    async get(path, headers) {
      if (signal.aborted) throw left();
      const call = new UpstreamCall(false);
      const stop = () => call.destroy();
      signal.addEventListener('abort', stop, { once: true });
      try {
        await call.send(transport, {
          origin,
          path,
          method: 'GET',
          headers,
          body: null,
          headersTimeout: TASK_CALL_TIMEOUT_MS,
          bodyTimeout: TASK_CALL_TIMEOUT_MS,
        });
      } catch (err) {
        throw signal.aborted ? left() : err;
      } finally {
        signal.removeEventListener('abort', stop);
      }
      if (signal.aborted) throw left();
      if (call.error) throw call.error;
      return { status: call.statusCode, body: call.body() };
    },
    wait(ms) {
      return new Promise((resolve, reject) => {
        if (signal.aborted) return reject(left());
        const onAbort = () => {
          clearTimeout(timer);
          reject(left());
        };
        const timer = setTimeout(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        }, ms);
        signal.addEventListener('abort', onAbort, { once: true });
      });
    },
    async fetchImage(url) {
      if (signal.aborted) throw left();
      const fetch = info.settings.fetchImage;
      if (!fetch) throw new Error('no image fetcher configured');
      const image = await fetch(url);
      if (signal.aborted) throw left();
      return image;
    },
  };
}

export async function awaitedAnswer(l: AnsweredAttempt): Promise<AttemptResult> {
  const { res, call, adaptor, info, redact } = l;
  if (call.error) throw call.error;
  const receipt = call.body();
  const refused = inBandFailure(l, receipt);
  if (refused) return refused;
  const ac = new AbortController();
  // lanes/run.ts notes the leaving too (l.clientGone), but only this stops the waiting
  const onClose = () => {
    if (!res.writableFinished) ac.abort();
  };
  res.once('close', onClose);
  if (res.destroyed) ac.abort();
  try {
    const outcome = await adaptor.awaitAnswer!(info, receipt, followUpIo(l, ac.signal));
    if (!outcome.ok) {
      if (ac.signal.aborted || l.clientGone) return GONE;
      const pe = redactProviderError(outcome.error, redact);
      // `final`: marked local, so no other channel repeats work the vendor did or a request it refused on its merits
      const error = new RelayError(outcome.status, pe.message, pe.type, pe.code, outcome.final === true, pe.param);
      return { kind: 'failed', error };
    }
    // the images are there (a synchronous answer, a task that ended as its client left): charged as any whole answer
    // read for a client that left is (jsonAnswer writes nothing to it then)
    const done = jsonAnswer(l, () => ({ body: outcome.body, usage: null }));
    return done.kind === 'done' && outcome.images !== undefined ? { ...done, imagesDelivered: outcome.images } : done;
  } catch (err) {
    if (err instanceof ClientLeft || ac.signal.aborted || l.clientGone) return GONE;
    return badResponse(err as Error, 'upstream follow-up failed', redact);
  } finally {
    res.off('close', onClose);
  }
}
