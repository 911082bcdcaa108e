// A whole JSON answer on the lanes that do not decode it to the hub (native pass-through, endpoint-translated): passed
// on with its usage (or the lane's conversion of it), the channel's output settings and the sensitive-word check
// applied, counted locally when the upstream reported no usage.
import type { AttemptResult } from '../attempt-result.js';
import { sensitiveOutcome } from '../attempt-result.js';
import { forceFormat, forceFormatBody, thinkingToContent, thinkingToContentBody } from '../channel-setting.js';
import { baseHeaders, RelayError, sendJson } from '../errors.js';
import { redactProviderError } from '../redact.js';
import { countCompletion } from '../modes/mode.js';
import type { UpstreamUsage } from '../providers/index.js';
import { addUpstreamHeaders } from '../response-headers.js';
import { checkAnswerBytes } from '../sensitive-output.js';
import { extractUsage } from '../usage.js';
import type { AnsweredAttempt } from './lane.js';

/** A lane's conversion of the upstream's whole answer into the client's, with its usage; null: pass it as it is. */
export type AnswerConversion = (
  l: AnsweredAttempt,
  buf: Buffer,
) => { body: Buffer; usage: UpstreamUsage | null; contentType?: string } | null;

/**
 * An error the upstream reported inside its 200 answer (the provider's `answerError`: MiniMax's base_resp): the
 * attempt fails as that upstream error (retried on another channel when its status says so, nothing sent, nothing
 * charged); null for a success.
 */
export function inBandFailure(l: AnsweredAttempt, buf: Buffer): AttemptResult | null {
  const found = l.adaptor.answerError?.(l.info, buf);
  if (!found) return null;
  const pe = redactProviderError(found.error, l.redact);
  return { kind: 'failed', error: new RelayError(found.status, pe.message, pe.type, pe.code, false, pe.param) };
}

export async function jsonAnswerOfStream(l: AnsweredAttempt, convert: AnswerConversion): Promise<AttemptResult> {
  await l.call.finished(); // asked to stream, answered with JSON
  return jsonAnswer(l, convert);
}

export function jsonAnswer(l: AnsweredAttempt, convert: AnswerConversion): AttemptResult {
  const { a, call, res, info } = l;
  const { mode, channel } = a;
  if (call.error) throw call.error;
  let buf = call.body();
  const failed = inBandFailure(l, buf);
  if (failed) return failed;
  let usage: UpstreamUsage | null;
  // a converted answer is the client's shape: JSON unless the conversion says otherwise (an image that came as PNG)
  let contentType = call.contentType || undefined;
  const converted = convert(l, buf);
  if (converted) {
    buf = converted.body;
    contentType = converted.contentType ?? 'application/json';
    // no usage in the vendor's answer: the mode reads it from the converted one (a transcript's text)
    usage = converted.usage ?? mode.responseUsage?.(buf, a.body, a.model) ?? null;
  } else usage = mode.responseUsage ? mode.responseUsage(buf, a.body, a.model) : extractUsage(buf);
  if (mode.name === 'chat' && forceFormat(channel)) buf = forceFormatBody(buf);
  if (mode.name === 'chat' && thinkingToContent(channel)) buf = thinkingToContentBody(buf);
  // the completion's sensitive words: masked, or the answer refused (and charged below all the same, as new-api)
  const checked = a.sensitive ? checkAnswerBytes(buf, a.sensitive) : null;
  if (checked) buf = checked.body;
  const refused = checked?.refused ?? null;
  // a client that left gets nothing (and is billed below all the same); a stream request answered with JSON, after
  // pings committed an event stream: the answer as one event
  if (!l.clientGone && !refused) {
    if (a.keepAlive?.committed) res.end(`${buf.toString('utf8').replace(/^/gm, 'data: ')}\n\ndata: [DONE]\n\n`);
    else sendJson(res, 200, buf, addUpstreamHeaders(call.rawHeaders, baseHeaders(a.reqId, a.origin)), contentType);
  }
  if (!usage || usage.prompt_tokens + usage.completion_tokens === 0) {
    let completion = 0;
    if (!mode.inputOnly) {
      try {
        completion = countCompletion(mode.responseText(JSON.parse(buf.toString('utf8'))), a.model);
      } catch {
        completion = 0;
      }
    }
    usage = { prompt_tokens: a.prompt(), completion_tokens: completion, cached_tokens: 0 };
  }
  return {
    kind: 'done',
    usage,
    frt: l.frt,
    isStream: false,
    upstreamModel: info.upstreamModel,
    clientLeft: l.clientGone,
    sensitive: sensitiveOutcome(a.sensitive, refused, false),
  };
}
