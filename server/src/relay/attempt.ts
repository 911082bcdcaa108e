// One attempt of a relay request on one channel (relay/pipeline/attempts.ts runs the attempt loop): the adaptor builds the upstream
// request, the transport sends it, and the stream or JSON answer is handled and passed to the client.
import type { AppContext } from '../context.js';
import type { HttpResponse } from '../lib/http-response.js';
import type { RelayServices } from './services.js';
import type { CachedChannel } from '../services/cache/channel-cache.js';
import type { Reservation } from '../services/billing/index.js';
import { addUpstreamHeaders } from './response-headers.js';
import { baseHeaders, RelayError, sendJson, sseHeaders } from './errors.js';
import type { StreamKeepAlive } from './keepalive.js';
import { countCompletion, type ModeTranslation, type RelayMode } from './modes/mode.js';
import type { RelayRequest } from './request.js';
import { adaptorFor, upstreamBodyFromHub, wireOf, type RelayInfo, type UpstreamUsage } from './providers/index.js';
import { declares } from './providers/manifest.js';
import { pipeSse } from './stream.js';
import { UpstreamCall } from './upstream-call.js';
import type { OutgoingRequest } from './transport/index.js';
import {
  transportFor,
  forceFormat,
  forceFormatBody,
  forceFormatChunk,
  thinkingStreamConverter,
  thinkingToContent,
  thinkingToContentBody,
} from './channel-setting.js';
import { pipeRaw } from './passthrough.js';
import { boundaryOf, replaceFormField } from './multipart.js';
import { extractUsage } from './usage.js';
import { codecFor } from './formats/index.js';
import { FormatError, type WireFormat } from './formats/codec.js';
import { usageOfHub } from './hub/usage.js';
import { SseParser } from './stream/sse-parser.js';
import { pumpTranslated, type EventFraming } from './stream/translate.js';
import { awsEventFraming } from './stream/aws-framing.js';
import { lazyChannelRedactor, redactProviderError } from './redact.js';
import type { Redact } from '../lib/redact.js';
import { checkAnswer, checkAnswerBytes, StreamScanners, type OutputCheck } from './sensitive-output.js';
import {
  atLeastDelivered,
  badResponse,
  GONE,
  leftUnanswered,
  refusedRequest,
  sensitiveOutcome,
  type AttemptResult,
} from './attempt-result.js';

export type { AttemptResult, Sensitive } from './attempt-result.js';

const INCLUDE_USAGE = Buffer.from('"stream_options":{"include_usage":true},');

/** Inserts `"stream_options":{"include_usage":true},` right after the opening brace of a non-empty JSON object. */
function spliceIncludeUsage(raw: Buffer): Buffer {
  const i = raw.indexOf(0x7b);
  return Buffer.concat([raw.subarray(0, i + 1), INCLUDE_USAGE, raw.subarray(i + 1)]);
}

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

/** The channel settings' transforms of a chat stream's events (force_format, then thinking_to_content), if any. */
function chatStreamTransform(channel: CachedChannel): ((data: string) => string[]) | undefined {
  const force = forceFormat(channel);
  const thinking = thinkingToContent(channel) ? thinkingStreamConverter() : null;
  if (force && thinking) return (d) => forceFormatChunk(d).flatMap(thinking);
  return thinking ?? (force ? forceFormatChunk : undefined);
}

/**
 * STREAMING_TIMEOUT in ms for an upstream model: twice as long for o1/o3, which think in silence first
 * (new-api-compat.md §1.3).
 */
export function streamIdleMs(timeoutSec: number, upstreamModel: string): number {
  return timeoutSec * (/^o[13]/.test(upstreamModel) ? 2000 : 1000);
}

export async function attempt(
  svc: RelayServices,
  ctx: AppContext,
  req: RelayRequest,
  res: HttpResponse,
  a: AttemptInput,
): Promise<AttemptResult> {
  // The client went away before this attempt (while its reservation, a rate limit or an earlier attempt ran): its
  // 'close' has passed, so only the response's state tells. Nothing is sent upstream, and no other channel is tried.
  // From here to the dispatch below nothing waits, so a client still here now is still here when the request goes out.
  if (res.destroyed) return GONE;
  const { channel, mode, body } = a;
  const adaptor = adaptorFor(channel.type);
  const mapped = channel.modelMapping?.[a.model];
  const info: RelayInfo = {
    settings: svc.providers,
    channel,
    mode,
    originModel: a.model,
    upstreamModel: typeof mapped === 'string' && mapped ? mapped : a.model,
    isStream: a.isStream,
    clientFormat: mode.format ?? 'openai',
    clientHeaders: req.headers,
  };
  // the lane: the provider speaks the client's format (bytes pass, usage is read) or the request goes through the hub
  const providerFormat: WireFormat = wireOf(adaptor, info);
  const native = info.clientFormat === providerFormat || !!adaptor.alsoSpeaks?.(info).includes(info.clientFormat);
  // a mode without a hub form (embeddings) may still know how to ask this provider's format
  const translation = native ? undefined : mode.translate?.[providerFormat];
  if (!declares(adaptor, info))
    return {
      kind: 'failed',
      error: new RelayError(
        400,
        `渠道 #${channel.id} 的类型不支持 ${mode.name} 请求`,
        'new_api_error',
        'convert_request_failed',
      ),
    };

  // ---- request body: raw bytes unless something must change
  let out: Buffer;
  if (!native) {
    try {
      out = translation ? translatedModeBody(translation, info, a) : await translatedBody(info, a);
    } catch (e) {
      if (!(e instanceof FormatError)) throw e;
      return refusedRequest(e);
    }
    // building the body may have waited (remote images): a client gone meanwhile is not sent upstream
    if (res.destroyed) return GONE;
  } else if (a.passThrough) out = a.raw;
  else if (mode.multipart) {
    // forwarded unchanged; only a mapped model is written into the form's model field
    out =
      info.upstreamModel !== a.model
        ? replaceFormField(a.raw, boundaryOf(req.headers['content-type'])!, 'model', info.upstreamModel)
        : a.raw;
  } else {
    const copy: Record<string, any> = { ...body };
    let changed = false;
    // the common streaming case only adds stream_options: splice it into the raw bytes instead of re-serialising
    let spliceUsage = false;
    if (copy.model !== info.upstreamModel) {
      copy.model = info.upstreamModel;
      changed = true;
    }
    if (a.isStream && !mode.eventStream && adaptor.supportsStreamOptions(info)) {
      if (ctx.config.forceStreamOption && !a.clientWantsUsage) {
        if (body.stream_options === undefined) spliceUsage = true;
        else {
          copy.stream_options = {
            ...(typeof body.stream_options === 'object' && body.stream_options ? body.stream_options : {}),
            include_usage: true,
          };
          changed = true;
        }
      }
    } else if (copy.stream_options !== undefined) {
      delete copy.stream_options;
      changed = true;
    }
    const converted = adaptor.convertRequest(info, copy);
    if (converted === true) changed = true;
    else if (converted !== false) {
      try {
        if (await converted) changed = true;
      } catch (e) {
        if (!(e instanceof FormatError)) throw e;
        return refusedRequest(e);
      }
      // the conversion waited (remote images): a client gone meanwhile is not sent upstream
      if (res.destroyed) return GONE;
    }
    if (channel.paramOverride) {
      Object.assign(copy, channel.paramOverride);
      changed = true;
    }
    if (changed) {
      if (spliceUsage) copy.stream_options = { include_usage: true };
      out = Buffer.from(JSON.stringify(copy));
    } else out = spliceUsage ? spliceIncludeUsage(a.raw) : a.raw;
  }

  const target = adaptor.target(info);
  const headers: Record<string, string> = {
    'content-type': mode.multipart ? String(req.headers['content-type']) : 'application/json',
    accept: (native && req.headers.accept) || (a.isStream ? 'text/event-stream' : 'application/json'),
    ...adaptor.headers(info),
  };
  // upstream error texts lose the channel's secrets, those the adaptor derives below included (built only on error)
  const redact = lazyChannelRedactor(channel.key, { headers, path: target.path });
  if (adaptor.authorize) {
    try {
      await adaptor.authorize(info, { method: 'POST', origin: target.origin, path: target.path, headers, body: out });
    } catch (err) {
      // the error's own fields (a token endpoint's request and answer) may hold the grant: only its text is logged
      const reason = redact((err as Error).message ?? String(err));
      ctx.log.warn({ reason, reqId: a.reqId, channel: channel.id }, 'upstream authorisation failed');
      return {
        kind: 'failed',
        error: new RelayError(500, `上游鉴权失败: ${reason}`, 'new_api_error', 'upstream_auth_failed', false),
      };
    }
    // the signing waited: a client gone meanwhile is not sent upstream
    if (res.destroyed) return GONE;
  }

  let clientGone = false;
  // raw responses (audio) are read as a stream whatever the request asked, and piped on as they come
  const call = new UpstreamCall(a.isStream || !!mode.rawResponse);
  // A client that goes away once the request is out: a whole answer, which the provider charges for, is read to its
  // end and billed as if the client had stayed (nothing is written to it); so is a stream the upstream has started
  // answering but whose client had received nothing yet (the stream pump aborts one it had begun to receive, billed
  // for what it delivered). A stream not answered yet is aborted and billed nothing. A stop aborts a call read on for
  // a client that left rather than wait for it (svc.leftBehind).
  let left: { destroy(): void } | null = null;
  const onClose = () => {
    if (res.writableFinished) return;
    clientGone = true;
    if (a.isStream && !call.headersAt) call.destroy();
    else svc.leftBehind.add((left = call));
  };
  res.once('close', onClose);
  const relayTimeoutMs = ctx.config.relayTimeoutSec * 1000;
  let refused: unknown = null;
  try {
    const opts: OutgoingRequest = {
      origin: target.origin,
      path: target.path,
      method: 'POST',
      headers,
      body: out,
      headersTimeout: relayTimeoutMs,
      bodyTimeout: a.isStream ? streamIdleMs(ctx.config.streamingTimeoutSec, info.upstreamModel) : relayTimeoutMs,
    };
    const sent = call.send(transportFor(channel, svc.upstream), opts);
    if (a.gate) {
      // the call can fail (client gone, upstream refused) while the reservation is awaited: that rejection is
      // read below, after the gate; without a handler now it would be an unhandled rejection and end the process
      sent.catch(() => {});
      try {
        await a.gate;
      } catch (e) {
        refused = e;
        call.destroy();
      }
    }
    if (!refused) await sent;
  } catch (err) {
    res.off('close', onClose);
    if (left) svc.leftBehind.delete(left);
    // a stream whose client left before the upstream answered: aborted, logged, billed nothing
    if (clientGone) return a.isStream ? leftUnanswered(info.upstreamModel) : GONE;
    ctx.log.warn({ err, reqId: a.reqId, channel: channel.id }, 'upstream request failed');
    return {
      kind: 'failed',
      error: new RelayError(500, '请求上游地址失败', 'new_api_error', 'do_request_failed', false),
    };
  }
  if (refused) {
    res.off('close', onClose);
    if (left) svc.leftBehind.delete(left);
    throw refused;
  }
  const frt = call.headersAt - a.start;

  try {
    const statusCode = call.statusCode;
    if (statusCode !== 200) {
      const buf = await call.rest();
      if (clientGone) return GONE;
      const pe = redactProviderError(adaptor.parseError(statusCode, buf, call.headerRecord()), redact);
      if (statusCode === 401) adaptor.unauthorized?.(info);
      const mappedStatus = channel.statusCodeMapping?.[String(statusCode)];
      const status = mappedStatus && Number(mappedStatus) ? Number(mappedStatus) : statusCode;
      return { kind: 'failed', error: new RelayError(status, pe.message, pe.type, pe.code, false, pe.param) };
    }

    const ctype = call.contentType;
    if (mode.rawResponse) {
      const usage = { prompt_tokens: a.prompt(), completion_tokens: 0, cached_tokens: 0 };
      // billed from the request alone; the answer of a client that left is read to its end and dropped
      if (clientGone) {
        await call.drain();
        return { kind: 'done', usage, frt, isStream: false, upstreamModel: info.upstreamModel, clientLeft: true };
      }
      const r = await pipeRaw(call, res, baseHeaders(a.reqId, a.origin), call.rawHeaders);
      if (!r.started) {
        if (r.clientGone) return GONE;
        if (r.error) return badResponse(r.error, 'upstream read failed', redact);
      }
      return { kind: 'done', usage, frt, isStream: false, upstreamModel: info.upstreamModel, clientLeft: r.clientGone };
    }
    if (
      (!native && !translation) ||
      (a.isStream &&
        (mode.decodeStreams ||
          adaptor.framing === 'aws-eventstream' ||
          // the sensitive-word check reads hub chunks: a native Claude stream is decoded and re-encoded for it
          (a.sensitive && info.clientFormat === 'anthropic')))
    )
      return await decodedAnswer(res, call, a, info, providerFormat, adaptor.framing, frt, clientGone, redact);
    if (a.isStream && (ctype.includes('text/event-stream') || adaptor.convertStreamEvent)) {
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
        convert: adaptor.convertStreamEvent
          ? (d) => adaptor.convertStreamEvent!(info, d)
          : mode.name === 'chat'
            ? chatStreamTransform(channel)
            : undefined,
        sensitive: a.sensitive && new StreamScanners(a.sensitive),
      });
      // a client that left before the first byte: the stream was read to its end (stream.ts), billed below
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
      const frtStream = r.firstChunkAt ? r.firstChunkAt - a.start : -1000;
      return {
        kind: 'done',
        usage,
        frt: frtStream,
        isStream: true,
        upstreamModel: info.upstreamModel,
        clientLeft: r.clientGone,
        sensitive: sensitiveOutcome(a.sensitive, null, r.stoppedOnSensitive),
      };
    }

    if (a.isStream) await call.finished(); // asked to stream, answered with JSON
    if (call.error) throw call.error;
    let buf = call.body();
    let usage: UpstreamUsage | null;
    const converted = translation
      ? translatedModeAnswer(translation, buf, a)
      : adaptor.convertResponse
        ? adaptor.convertResponse(info, buf)
        : null;
    if (converted) {
      buf = converted.body;
      usage = converted.usage;
    } else usage = mode.responseUsage ? mode.responseUsage(buf, body, a.model) : extractUsage(buf);
    if (mode.name === 'chat' && forceFormat(channel)) buf = forceFormatBody(buf);
    if (mode.name === 'chat' && thinkingToContent(channel)) buf = thinkingToContentBody(buf);
    // the completion's sensitive words: masked, or the answer refused (and charged below all the same, as new-api)
    const checked = a.sensitive ? checkAnswerBytes(buf, a.sensitive) : null;
    if (checked) buf = checked.body;
    const refused = checked?.refused ?? null;
    // a client that left gets nothing (and is billed below all the same); a stream request answered with JSON, after
    // pings committed an event stream: the answer as one event
    if (!clientGone && !refused) {
      if (a.keepAlive?.committed) res.end(`${buf.toString('utf8').replace(/^/gm, 'data: ')}\n\ndata: [DONE]\n\n`);
      else
        sendJson(
          res,
          200,
          buf,
          addUpstreamHeaders(call.rawHeaders, baseHeaders(a.reqId, a.origin)),
          ctype || undefined,
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
      frt,
      isStream: false,
      upstreamModel: info.upstreamModel,
      clientLeft: clientGone,
      sensitive: sensitiveOutcome(a.sensitive, refused, false),
    };
  } catch (err) {
    if (clientGone) return GONE;
    return badResponse(err as Error, 'upstream read failed', redact);
  } finally {
    res.off('close', onClose);
    if (left) svc.leftBehind.delete(left);
  }
}

/** The upstream body of a request on the translated lane: the client's request → hub → the provider's format. */
async function translatedBody(info: RelayInfo, a: AttemptInput): Promise<Buffer> {
  const adaptor = adaptorFor(a.channel.type);
  const hub = { ...(a.mode.hubOf?.(a.body) ?? codecFor(info.clientFormat).requestToHub(a.body)) };
  hub.model = info.upstreamModel;
  const body = await upstreamBodyFromHub(adaptor, info, hub);
  if (a.channel.paramOverride) Object.assign(body, a.channel.paramOverride);
  return Buffer.from(JSON.stringify(body));
}

/** The upstream body of a non-chat request on the translated lane (the mode's own translation, no hub). */
function translatedModeBody(translation: ModeTranslation, info: RelayInfo, a: AttemptInput): Buffer {
  const body = translation.request(a.body, info.upstreamModel);
  if (a.channel.paramOverride) Object.assign(body, a.channel.paramOverride);
  return Buffer.from(JSON.stringify(body));
}

/** The provider's whole answer to a translated non-chat request, in the client's shape, with its usage. */
function translatedModeAnswer(
  translation: ModeTranslation,
  buf: Buffer,
  a: AttemptInput,
): { body: Buffer; usage: UpstreamUsage | null } {
  const { body, usage } = translation.response(JSON.parse(buf.toString('utf8')), {
    model: a.model,
    request: a.body,
    promptTokens: a.prompt,
  });
  return { body: Buffer.from(JSON.stringify(body)), usage };
}

/**
 * An answer read event by event: the translated lane (the provider's format → hub → the client's), and native
 * streams whose events must be decoded (AWS event-stream framing; formats whose usage the byte scanner cannot find).
 */
async function decodedAnswer(
  res: HttpResponse,
  call: UpstreamCall,
  a: AttemptInput,
  info: RelayInfo,
  providerFormat: WireFormat,
  framingKind: 'sse' | 'aws-eventstream' | undefined,
  frt: number,
  clientGoneBefore: boolean,
  redact: Redact,
): Promise<AttemptResult> {
  const provider = codecFor(providerFormat);
  const client = codecFor(info.clientFormat);
  const claude = providerFormat === 'anthropic';
  const encoderOptions = {
    id: a.reqId,
    model: a.model,
    includeUsage: a.clientWantsUsage,
    framing: a.mode.framing,
    request: a.body,
  };
  const fallback = (delivered: { text: string; toolCalls: number }): UpstreamUsage => ({
    prompt_tokens: a.prompt(),
    completion_tokens: countCompletion(delivered, a.model),
    cached_tokens: 0,
  });
  const done = (
    usage: UpstreamUsage,
    isStream: boolean,
    left: boolean,
    at: number,
    refused: RelayError | null = null,
    stopped = false,
  ): AttemptResult => ({
    kind: 'done',
    usage,
    frt: at,
    isStream,
    upstreamModel: info.upstreamModel,
    clientLeft: left,
    sensitive: sensitiveOutcome(a.sensitive, refused, stopped),
  });
  if (a.isStream) {
    const framing: EventFraming = framingKind === 'aws-eventstream' ? awsEventFraming() : new SseParser();
    const r = await pumpTranslated(call, {
      res,
      headers: sseHeaders(a.reqId, a.origin),
      framing,
      decoder: provider.streamToHub({ id: a.reqId, model: info.upstreamModel }),
      encoder: client.streamFromHub(encoderOptions),
      keepAlive: a.keepAlive,
      // the provider speaks the client's format: events pass as they came, only reframed
      pass: providerFormat === info.clientFormat,
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
    let usage = r.stoppedOnSensitive ? fallback(r.delivered) : (usageOfHub(r.usage, claude) ?? fallback(r.delivered));
    if (r.error || r.clientGone) usage = atLeastDelivered(usage, r.delivered, a.model);
    const at = r.firstChunkAt ? r.firstChunkAt - a.start : -1000;
    return done(usage, true, r.clientGone, at, null, r.stoppedOnSensitive);
  }
  if (call.error) throw call.error;
  const hub = provider.responseToHub(JSON.parse(call.body().toString('utf8')), info.upstreamModel);
  const answer = client.responseFromHub(hub, encoderOptions);
  // the completion's sensitive words: masked, or the answer refused (and charged all the same, as new-api)
  const refused = (a.sensitive && checkAnswer(answer, a.sensitive)?.refused) || null;
  if (!clientGoneBefore && !res.destroyed && !refused)
    sendJson(res, 200, JSON.stringify(answer), baseHeaders(a.reqId, a.origin));
  let usage = usageOfHub(hub.usage ?? null, claude);
  if (!usage) {
    const m = hub.choices[0]?.message;
    const text = (m?.content ?? '') + (m?.reasoning_content ?? '');
    const calls = m?.tool_calls ?? [];
    const args = calls.map((c) => c.function.name + c.function.arguments).join('');
    usage = fallback({ text: text + args, toolCalls: calls.length });
  }
  return done(usage, false, clientGoneBefore, frt, refused);
}
