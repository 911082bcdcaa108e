// A whole JSON answer on the lanes that do not decode it to the hub (native pass-through, endpoint-translated): passed
// on with its usage (or the lane's conversion of it), the channel's output settings and the sensitive-word check
// applied, counted locally when the upstream reported no usage.
import type { AttemptResult } from '../attempt-result.js';
import { sensitiveOutcome } from '../attempt-result.js';
import { forceFormat, forceFormatBody, thinkingToContent, thinkingToContentBody } from '../channel-setting.js';
import { baseHeaders, sendJson } from '../errors.js';
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
) => { body: Buffer; usage: UpstreamUsage | null } | null;

export async function jsonAnswerOfStream(l: AnsweredAttempt, convert: AnswerConversion): Promise<AttemptResult> {
  await l.call.finished(); // asked to stream, answered with JSON
  return jsonAnswer(l, convert);
}

export function jsonAnswer(l: AnsweredAttempt, convert: AnswerConversion): AttemptResult {
  const { a, call, res, info } = l;
  const { mode, channel } = a;
  if (call.error) throw call.error;
  let buf = call.body();
  let usage: UpstreamUsage | null;
  const converted = convert(l, buf);
  if (converted) {
    buf = converted.body;
    usage = converted.usage;
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
    else
      sendJson(
        res,
        200,
        buf,
        addUpstreamHeaders(call.rawHeaders, baseHeaders(a.reqId, a.origin)),
        call.contentType || undefined,
      );
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
