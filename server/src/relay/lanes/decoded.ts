// An answer read event by event through the hub (the provider's format → hub → the client's): the translated lane's
// answers, and the native streams whose events must be decoded (a framing the byte scanner cannot read, formats whose
// usage it cannot find, a sensitive-word check that reads hub chunks).
import { atLeastDelivered, badResponse, sensitiveOutcome, type AttemptResult } from '../attempt-result.js';
import { baseHeaders, sendJson, sseHeaders, type RelayError } from '../errors.js';
import { clientFraming, codecFor } from '../formats/index.js';
import type { EncoderOptions } from '../formats/codec.js';
import { usageOfHub } from '../hub/usage.js';
import { countCompletion, type StreamDelta } from '../modes/mode.js';
import { answerCodecOf, type AnswerCodec, type UpstreamUsage } from '../providers/index.js';
import { checkAnswer, StreamScanners } from '../sensitive-output.js';
import { framingOf } from '../stream/framing.js';
import { pumpTranslated } from '../stream/translate.js';
import type { AnsweredAttempt } from './lane.js';
import { inBandFailure } from './json-answer.js';

/**
 * What reads the upstream's answer: on a native lane the client's format (the provider's own, or one it also speaks
 * as it is: Responses on OpenAI, Claude's on Ali), else the provider's wire format or vendor codec.
 */
function answerCodec(l: AnsweredAttempt): AnswerCodec {
  return l.native ? codecFor(l.info.clientFormat) : answerCodecOf(l.adaptor, l.info);
}

function encoderOptions(l: AnsweredAttempt): EncoderOptions {
  const { a } = l;
  const framing = clientFraming(l.info.clientFormat, l.req.url);
  return { id: a.reqId, model: a.model, includeUsage: a.clientWantsUsage, framing, request: a.body };
}

/**
 * Usage counted locally from what the client was given, and the prompt; marked in the log for a vendor of its own
 * format (Dify's workflows, Coze, PaLM report none), as new-api counts them.
 */
function fallback(l: AnsweredAttempt, delivered: StreamDelta): UpstreamUsage {
  const usage: UpstreamUsage = {
    prompt_tokens: l.a.prompt(),
    completion_tokens: countCompletion(delivered, l.a.model),
    cached_tokens: 0,
  };
  if (l.adaptor.codec) usage.counted_locally = true;
  return usage;
}

function done(
  l: AnsweredAttempt,
  usage: UpstreamUsage,
  isStream: boolean,
  left: boolean,
  at: number,
  refused: RelayError | null = null,
  stopped = false,
): AttemptResult {
  return {
    kind: 'done',
    usage,
    frt: at,
    isStream,
    upstreamModel: l.info.upstreamModel,
    clientLeft: left,
    sensitive: sensitiveOutcome(l.a.sensitive, refused, stopped),
  };
}

/** A stream decoded event by event; `pass`: the provider speaks the client's format, events pass only reframed. */
export async function decodedStream(l: AnsweredAttempt, pass: boolean): Promise<AttemptResult> {
  const { a, info, res, call, redact } = l;
  const provider = answerCodec(l);
  if (l.adaptor.answerError && call.contentType.includes('json')) {
    // a stream request answered with one JSON document: the in-band error of a provider that reports them so
    await call.finished();
    return (
      inBandFailure(l, call.body()) ??
      badResponse(new Error('upstream answered a stream request with JSON'), 'upstream stream failed', redact)
    );
  }
  const r = await pumpTranslated(call, {
    res,
    headers: sseHeaders(a.reqId, a.origin),
    framing: framingOf(l.adaptor.framing).create(),
    decoder: provider.streamToHub({ id: a.reqId, model: info.upstreamModel }),
    encoder: codecFor(info.clientFormat).streamFromHub(encoderOptions(l)),
    keepAlive: a.keepAlive,
    pass,
    transform: l.output,
    redact,
    sensitive: a.sensitive && {
      scanners: new StreamScanners(a.sensitive),
      deliveredUsage: (d) => {
        const prompt = a.prompt();
        const completion = countCompletion(d, a.model);
        return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
      },
    },
  });
  // a client that left before the first byte: the stream was read to its end (stream/translate.ts), billed below
  if (!r.started && !r.clientGone && r.error) return badResponse(r.error, 'upstream stream failed', redact);
  // stopped at a word: billed for what the client was given, counted locally, and the prompt
  let usage = r.stoppedOnSensitive
    ? fallback(l, r.delivered)
    : (usageOfHub(r.usage, !!provider.claudeUsage) ?? fallback(l, r.delivered));
  if (r.error || r.clientGone) usage = atLeastDelivered(usage, r.delivered, a.model);
  const at = r.firstChunkAt ? r.firstChunkAt - a.start : -1000;
  return done(l, usage, true, r.clientGone, at, null, r.stoppedOnSensitive);
}

/** A whole answer decoded to the hub and written in the client's format. */
export function decodedJson(l: AnsweredAttempt): AttemptResult {
  const { a, info, res, call } = l;
  // whether the client had left before the answer was read (it gets nothing, and is billed all the same)
  const clientGoneBefore = l.clientGone;
  const provider = answerCodec(l);
  if (call.error) throw call.error;
  const failed = inBandFailure(l, call.body());
  if (failed) return failed;
  const raw = call.body().toString('utf8');
  const hub = provider.readAnswer
    ? provider.readAnswer(raw, info.upstreamModel)
    : provider.responseToHub(JSON.parse(raw), info.upstreamModel);
  l.output?.response(hub);
  const answer = codecFor(info.clientFormat).responseFromHub(hub, encoderOptions(l));
  // the completion's sensitive words: masked, or the answer refused (and charged all the same, as new-api)
  const refused = (a.sensitive && checkAnswer(answer, a.sensitive)?.refused) || null;
  if (!clientGoneBefore && !res.destroyed && !refused)
    sendJson(res, 200, JSON.stringify(answer), baseHeaders(a.reqId, a.origin));
  let usage = usageOfHub(hub.usage ?? null, !!provider.claudeUsage);
  if (!usage) {
    const m = hub.choices[0]?.message;
    const text = (m?.content ?? '') + (m?.reasoning_content ?? '');
    const calls = m?.tool_calls ?? [];
    const args = calls.map((c) => c.function.name + c.function.arguments).join('');
    usage = fallback(l, { text: text + args, toolCalls: calls.length });
  }
  return done(l, usage, false, clientGoneBefore, l.frt, refused);
}
