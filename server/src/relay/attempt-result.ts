// What one upstream attempt comes to (relay/attempt.ts), and the small constructors of its outcomes shared by the
// attempt's lanes: a bad or refused answer, a stream left before it was answered, the sensitive-word outcome.
import type { Redact } from '../lib/redact.js';
import { RelayError } from './errors.js';
import type { FormatError } from './formats/codec.js';
import { countCompletion, type StreamDelta } from './modes/mode.js';
import type { UpstreamUsage } from './providers/index.js';
import type { OutputCheck } from './sensitive-output.js';

export type AttemptResult =
  /**
   * clientLeft: the client went away after the request had gone upstream; it is billed all the same, unless
   * `unanswered`: a stream left before the upstream's response head, aborted then, which is logged and billed nothing
   */
  | {
      kind: 'done';
      usage: UpstreamUsage;
      frt: number;
      isStream: boolean;
      upstreamModel: string;
      clientLeft: boolean;
      unanswered?: boolean;
      /** the completion's sensitive words (relay/sensitive-output.ts): found (masked or refused), for the log row */
      sensitive?: Sensitive;
      /**
       * an images request the upstream answered with fewer images than asked (part of a DashScope task failed): the
       * fixed price is counted for these only
       */
      imagesDelivered?: number;
    }
  | { kind: 'gone' }
  | { kind: 'failed'; error: RelayError };

export const GONE: AttemptResult = { kind: 'gone' };

/** What the completion's sensitive-word check did to an answer that contained words. */
export interface Sensitive {
  words: string[];
  /** a whole answer refused (StopOnSensitiveEnabled): the client gets this error, the answer is charged all the same */
  refused: RelayError | null;
  /** a stream ended by the relay at the word (StopOnSensitiveEnabled), billed for what was delivered */
  stopped: boolean;
}

/** The attempt's sensitive-word outcome, or undefined when the check is off or found nothing. */
export function sensitiveOutcome(
  check: OutputCheck | null,
  refused: RelayError | null,
  stopped: boolean,
): Sensitive | undefined {
  return check && check.found.length ? { words: [...new Set(check.found)], refused, stopped } : undefined;
}

/**
 * A stream that did not end normally (the upstream failed midway, the client left) is billed for what was delivered.
 * The upstream's running count may lag it: Claude reports its output only in the final message_delta (message_start
 * says 1), so the completion is at least the delivered text counted locally, as an OpenAI stream without usage is.
 */
export function atLeastDelivered(usage: UpstreamUsage, delivered: StreamDelta, model: string): UpstreamUsage {
  const counted = countCompletion(delivered, model);
  return counted > usage.completion_tokens ? { ...usage, completion_tokens: counted } : usage;
}

/** A stream whose client left before the upstream's response head: the call was aborted; logged, billed nothing. */
export function leftUnanswered(upstreamModel: string): AttemptResult {
  return {
    kind: 'done',
    usage: { prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0 },
    frt: -1000,
    isStream: true,
    upstreamModel,
    clientLeft: true,
    unanswered: true,
  };
}

/** The upstream's answer could not be read (cut, or not what its format says): a 502, another channel may serve. */
export function badResponse(err: Error, fallback: string, redact: Redact): AttemptResult {
  // a parser's message may quote the upstream's bytes
  return {
    kind: 'failed',
    error: new RelayError(502, redact(err.message || fallback), 'upstream_error', 'bad_response', false),
  };
}

/**
 * The request cannot be put in this provider's format (a block the hub cannot carry, a refused image): a local 400,
 * never retried on another channel, never disabling this one, answered before any charge.
 */
export function refusedRequest(e: FormatError): AttemptResult {
  return {
    kind: 'failed',
    error: new RelayError(e.status, e.message, 'invalid_request_error', 'invalid_request', true, e.param),
  };
}
