// The native pass-through lane: the provider speaks the client's format, the bytes go through as they came and only
// the usage is read (relay/stream/sse-scan.ts's byte scanner for a stream, relay/usage.ts for a whole answer).
import { atLeastDelivered, badResponse, sensitiveOutcome, type AttemptResult } from '../attempt-result.js';
import { forceFormat, forceFormatChunk, thinkingStreamConverter, thinkingToContent } from '../channel-setting.js';
import { sseHeaders } from '../errors.js';
import { countCompletion } from '../modes/mode.js';
import { StreamScanners } from '../sensitive-output.js';
import type { CachedChannel } from '../../services/cache/channel-cache.js';
import { pipeSse } from '../stream/sse-scan.js';
import { awaitedAnswer } from './awaited-answer.js';
import { jsonAnswer, jsonAnswerOfStream, type AnswerConversion } from './json-answer.js';
import type { AnsweredAttempt, Lane } from './lane.js';
import { nativeBody } from './native-body.js';

/** A provider that answers in another shape than it is asked in converts its whole answer (null: none needed). */
const providerConversion: AnswerConversion = (l, buf) => l.adaptor.convertResponse?.(l.info, buf) ?? null;

export const nativePassLane: Lane = {
  native: true,
  body: nativeBody,
  answer(l) {
    // a receipt the provider follows up (DashScope's asynchronous image task) before there is an answer
    if (l.adaptor.awaitsAnswer?.(l.info)) return awaitedAnswer(l);
    if (!l.a.isStream) return jsonAnswer(l, providerConversion);
    if (l.call.contentType.includes('text/event-stream')) return streamAnswer(l);
    return jsonAnswerOfStream(l, providerConversion);
  },
};

/** The channel settings' transforms of a chat stream's events (force_format, then thinking_to_content), if any. */
function chatStreamTransform(channel: CachedChannel): ((data: string) => string[]) | undefined {
  const force = forceFormat(channel);
  const thinking = thinkingToContent(channel) ? thinkingStreamConverter() : null;
  if (force && thinking) return (d) => forceFormatChunk(d).flatMap(thinking);
  return thinking ?? (force ? forceFormatChunk : undefined);
}

async function streamAnswer(l: AnsweredAttempt): Promise<AttemptResult> {
  const { a, info, res, call, redact } = l;
  const { mode } = a;
  const r = await pipeSse(call, {
    res,
    headers: sseHeaders(a.reqId, a.origin),
    keepAlive: a.keepAlive,
    clientWantsUsage: a.clientWantsUsage,
    mode,
    responseModel: info.upstreamModel,
    reqId: a.reqId,
    redact,
    fallbackUsage: (delivered) => ({
      prompt_tokens: a.prompt(),
      completion_tokens: countCompletion(delivered(), a.model),
      cached_tokens: 0,
    }),
    convert: mode.name === 'chat' ? chatStreamTransform(a.channel) : undefined,
    sensitive: a.sensitive && new StreamScanners(a.sensitive),
  });
  // a client that left before the first byte: the stream was read to its end (stream/pump.ts), billed below
  if (!r.started && !r.clientGone && r.error) return badResponse(r.error, 'upstream stream failed', redact);
  let usage = r.usage;
  if (r.stoppedOnSensitive) {
    // stopped at a word: billed for what the client was given, counted locally, and the prompt
    usage = {
      prompt_tokens: a.prompt(),
      completion_tokens: countCompletion(r.deliveredText(), a.model),
      cached_tokens: 0,
    };
  } else if (!usage || usage.prompt_tokens + usage.completion_tokens === 0) {
    usage = {
      prompt_tokens: a.prompt(),
      completion_tokens: mode.inputOnly ? 0 : countCompletion(r.deliveredText(), a.model),
      cached_tokens: 0,
    };
  } else if ((r.error || r.clientGone || (mode.streamTerminal && !r.completed)) && !mode.inputOnly)
    // cut short: the upstream failed, the client left, or a Claude stream ended on an error event
    usage = atLeastDelivered(usage, r.deliveredText(), a.model);
  return {
    kind: 'done',
    usage,
    frt: r.firstChunkAt ? r.firstChunkAt - a.start : -1000,
    isStream: true,
    upstreamModel: info.upstreamModel,
    clientLeft: r.clientGone,
    sensitive: sensitiveOutcome(a.sensitive, null, r.stoppedOnSensitive),
  };
}
