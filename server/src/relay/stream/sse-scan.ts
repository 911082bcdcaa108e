// The native lane's SSE byte scanner, a lane of the stream pump (stream/pump.ts), without new-api's one-chunk lag
// (new-api-compat.md §4.7): every complete event is written as soon as it is received. Regions of complete events
// without a usage object or [DONE] are forwarded as zero-copy slices; only the (rare) events carrying usage or [DONE]
// are looked at one by one, so the cost per chunk is a couple of indexOf calls.
import type { HttpResponse } from '../../lib/http-response.js';
import type { StreamKeepAlive } from '../keepalive.js';
import type { RelayMode, StreamDelta } from '../modes/mode.js';
import type { UpstreamUsage } from '../providers/types.js';
import { hasUsageObject, indexOfUsage, normaliseUsage } from '../usage.js';
import type { StreamScanners } from '../sensitive-output.js';
import { StreamPump, type UpstreamStream } from './pump.js';

export interface StreamOptions {
  res: HttpResponse;
  headers: Record<string, string>;
  /** the client asked for stream_options.include_usage */
  clientWantsUsage: boolean;
  mode: RelayMode;
  /** builds the synthetic usage when the client wants it and the upstream sent none */
  fallbackUsage: (delivered: () => StreamDelta) => UpstreamUsage;
  responseModel: string;
  reqId: string;
  /** converts one data payload (non-OpenAI upstreams) */
  convert?: (data: string) => string[];
  /** pings while the stream is silent (its first ping may already have sent the headers) */
  keepAlive?: StreamKeepAlive | null;
  /** hides the channel's secrets in an error text told in-band (relay/redact.ts) */
  redact?: (text: string) => string;
  /**
   * the completion's sensitive-word check (relay/sensitive-output.ts), when on: every event is then decoded, its words
   * masked, and a stop ends the stream with a content_filter finish and [DONE], the upstream aborted
   */
  sensitive?: StreamScanners | null;
}

export interface StreamResult {
  usage: UpstreamUsage | null;
  /** ms timestamp of the first upstream chunk, 0 if none */
  firstChunkAt: number;
  /** bytes were written to the client */
  started: boolean;
  clientGone: boolean;
  /** upstream failed mid-stream (after `started`) or before anything was sent */
  error: Error | null;
  /** the stream's own end arrived: `[DONE]`, or the format's last event (mode.streamTerminal) */
  completed: boolean;
  /** the stream was ended by the relay for a sensitive word (StopOnSensitiveEnabled) */
  stoppedOnSensitive: boolean;
  /** text delivered to the client, for local counting when usage is missing */
  deliveredText(): StreamDelta;
}

const DONE = Buffer.from('[DONE]');
const DONE_EVENT = Buffer.from('data: [DONE]\n\n');

// Events end with a blank line: "\n\n" or "\r\n\r\n". `cr` says whether the buffer holds any "\r" at all (one memchr):
// most upstreams send bare "\n", and a failed search for "\r\n\r\n" scans the whole rest of the buffer each time.

function eventEnd(buf: Buffer, from: number, cr: boolean): { end: number; next: number } | null {
  const a = buf.indexOf('\n\n', from);
  const b = cr ? buf.indexOf('\r\n\r\n', from) : -1;
  if (a < 0 && b < 0) return null;
  if (b >= 0 && (a < 0 || b < a)) return { end: b, next: b + 4 };
  return { end: a, next: a + 2 };
}

function lastBoundary(buf: Buffer, cr: boolean): number {
  const a = buf.lastIndexOf('\n\n');
  const b = cr ? buf.lastIndexOf('\r\n\r\n') : -1;
  return Math.max(a >= 0 ? a + 2 : -1, b >= 0 ? b + 4 : -1);
}

/**
 * Finds the `[DONE]` / `"usage"` occurrences of one region in order. Each needle's next position is kept and only
 * searched again once the reader has moved past it: a whole stream in one chunk (5 KB and more) is scanned once per
 * needle instead of once per special event.
 */
class Candidates {
  constructor(
    private readonly buf: Buffer,
    private done: number = buf.indexOf(DONE),
    private usage: number = indexOfUsage(buf),
  ) {}

  /** First offset at/after `from` of `[DONE]` or `"usage"`, or -1. */
  next(from: number): number {
    if (this.done >= 0 && this.done < from) this.done = this.buf.indexOf(DONE, from);
    if (this.usage >= 0 && this.usage < from) this.usage = indexOfUsage(this.buf, from);
    const a = this.done;
    const b = this.usage;
    return a < 0 ? b : b < 0 ? a : Math.min(a, b);
  }
}

/** Start of the event containing offset `at` (just after the previous blank line), or 0. */
function boundaryBefore(buf: Buffer, at: number, cr: boolean): number {
  const a = buf.lastIndexOf('\n\n', at);
  const b = cr ? buf.lastIndexOf('\r\n\r\n', at) : -1;
  return Math.max(a >= 0 ? a + 2 : 0, b >= 0 ? b + 4 : 0);
}

/** The data payload of one SSE event (multiple data: lines joined by \n), or null. */
function dataOf(event: string): string | null {
  // the usual event is one `data:` line
  if (event.startsWith('data:') && !event.includes('\n')) return event.slice(5).trimStart();
  let out: string | null = null;
  for (const line of event.split(/\r?\n/)) {
    if (!line.startsWith('data:')) continue;
    const v = line.slice(5).trimStart();
    out = out === null ? v : out + '\n' + v;
  }
  return out;
}

export function pipeSse(body: UpstreamStream, o: StreamOptions): Promise<StreamResult> {
  const pump = new StreamPump(body, o);
  const delivered: Buffer[] = [];
  let usage: UpstreamUsage | null = null;
  let sawDone = false;
  let stoppedOnSensitive = false;
  // with the check off (the default) the converter is the caller's, and nothing else is made
  const convert = o.sensitive
    ? sensitiveConvert(o.convert, o.sensitive, () => (stoppedOnSensitive = pump.stopped = true))
    : o.convert;

  const deliveredText = (): StreamDelta => {
    let text = '';
    let toolCalls = 0;
    const all = Buffer.concat(delivered).toString('utf8');
    for (const ev of all.split(/\r?\n\r?\n/)) {
      const data = dataOf(ev);
      if (!data || data === '[DONE]') continue;
      try {
        const d = o.mode.chunkText(JSON.parse(data));
        text += d.text;
        toolCalls += d.toolCalls;
      } catch {
        /* not JSON: not billable text */
      }
    }
    return { text, toolCalls };
  };

  const usageEvent = (): string => {
    const u = usage ?? o.fallbackUsage(deliveredText);
    const obj = {
      id: `chatcmpl-${o.reqId}`,
      object: o.mode.name === 'completions' ? 'text_completion' : 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: o.responseModel,
      choices: [],
      usage: {
        prompt_tokens: u.prompt_tokens,
        completion_tokens: u.completion_tokens,
        total_tokens: u.prompt_tokens + u.completion_tokens,
      },
    };
    return `data: ${JSON.stringify(obj)}\n\n`;
  };

  /** One event that carries [DONE] or a usage object: returns what to forward for it. */
  const special = (raw: Buffer, text: string, out: Buffer[]): void => {
    const data = dataOf(text);
    if (data === null) {
      out.push(raw);
      return;
    }
    if (data === '[DONE]') {
      sawDone = true;
      if (o.clientWantsUsage && !usage) out.push(Buffer.from(usageEvent()));
      out.push(DONE_EVENT);
      return;
    }
    let j: any = null;
    try {
      j = JSON.parse(data);
    } catch {
      j = null;
    }
    const u = o.mode.streamUsage ? o.mode.streamUsage(j, usage) : normaliseUsage(j?.usage);
    if (u) usage = u;
    if (u && !o.mode.streamUsage) {
      const finished = Array.isArray(j?.choices) && j.choices.some((c: any) => c?.finish_reason);
      const hasContent = Array.isArray(j?.choices) && j.choices.length > 0;
      // a usage-only chunk the client did not ask for is dropped (new-api-compat.md §4.7)
      if (!o.clientWantsUsage && !finished && !hasContent) return;
    }
    // typed-event streams (Responses API) keep their usage event: it also carries content
    out.push(raw);
    delivered.push(raw);
  };

  /**
   * Regions that carry usage or [DONE]: ordinary events are still forwarded as contiguous zero-copy slices; only the
   * special events are decoded.
   */
  const slowPath = (region: Buffer, found: Candidates = new Candidates(region)): Buffer[] => {
    if (convert) return convertPath(region);
    const cr = region.indexOf(13) >= 0;
    const out: Buffer[] = [];
    let pos = 0;
    let runStart = 0;
    const flushRun = (to: number) => {
      if (to > runStart) {
        const b = region.subarray(runStart, to);
        out.push(b);
        delivered.push(b);
      }
    };
    while (pos < region.length && !sawDone) {
      // jump straight to the event holding the next "usage" / [DONE]: the events before it are forwarded as they are
      const hit = found.next(pos);
      if (hit < 0) {
        pos = region.length;
        break;
      }
      const start = Math.max(pos, boundaryBefore(region, hit, cr));
      const e = eventEnd(region, start, cr);
      const end = e ? e.end : region.length;
      const next = e ? e.next : region.length;
      const ev = region.subarray(start, end);
      if (ev.indexOf(DONE) < 0 && !hasUsageObject(ev)) {
        pos = next;
        continue;
      }
      flushRun(start);
      special(region.subarray(start, next), region.toString('utf8', start, end), out);
      pos = next;
      runStart = pos;
    }
    if (!sawDone) flushRun(pos);
    return out;
  };

  /** Non-OpenAI upstreams (adaptor converter) and channel transforms: every event is decoded and re-encoded. */
  const convertPath = (region: Buffer): Buffer[] => {
    const out: Buffer[] = [];
    let pos = 0;
    while (pos < region.length && !sawDone) {
      const e = eventEnd(region, pos, region.indexOf(13) >= 0);
      const end = e ? e.end : region.length;
      const next = e ? e.next : region.length;
      const text = region.toString('utf8', pos, end);
      pos = next;
      const data = dataOf(text);
      if (data === null) continue;
      if (data === '[DONE]') {
        special(DONE_EVENT, 'data: [DONE]', out);
        break;
      }
      for (const p of convert!(data)) {
        const pb = Buffer.from(`data: ${p}\n\n`);
        if (hasUsageObject(pb) || p === '[DONE]') special(pb, `data: ${p}`, out);
        else {
          out.push(pb);
          delivered.push(pb);
        }
      }
    }
    return out;
  };

  // chunks are pushed by the response sink (upstream-call.ts): no promise per chunk; pause() while the client drains
  let pending: Buffer | null = null;
  const terminal = o.mode.streamTerminal;
  const onChunk = (chunk: Buffer): Promise<void> | undefined => {
    if (sawDone) return;
    const buf: Buffer = pending ? Buffer.concat([pending, chunk]) : chunk;
    const cut = lastBoundary(buf, buf.indexOf(13) >= 0);
    if (cut <= 0) {
      pending = buf;
      return;
    }
    pending = cut < buf.length ? buf.subarray(cut) : null;
    const region = cut === buf.length ? buf : buf.subarray(0, cut);
    let found: Candidates | undefined;
    // the format's last event (Anthropic's message_stop) ends the response like [DONE]: with the bytes before it
    const last = terminal !== undefined && !convert && region.lastIndexOf(terminal) >= 0;
    if (!convert) {
      const done = region.indexOf(DONE);
      const usageAt = indexOfUsage(region);
      if (done < 0 && (usageAt < 0 || !hasUsageObject(region, usageAt))) {
        delivered.push(region);
        if (!last) return pump.write(region);
        sawDone = true;
        pump.endWith(region);
        return;
      }
      found = new Candidates(region, done, usageAt);
    }
    const parts = slowPath(region, found);
    const out = parts.length === 1 ? parts[0] : Buffer.concat(parts);
    if ((sawDone && !o.mode.eventStream) || last) {
      sawDone = true;
      pump.endWith(out);
      // stopped for a word: nothing more is read, the upstream stops generating
      if (stoppedOnSensitive) pump.abortUpstream();
      return;
    }
    if (parts.length) return pump.write(out);
  };
  /** The upstream ended: a last event without its blank line, then [DONE] (and the usage asked for) if it never came. */
  const end = (): Promise<void> | undefined => {
    if (pending && !sawDone) {
      const parts = slowPath(Buffer.concat([pending, Buffer.from('\n\n')]));
      const written = parts.length ? pump.write(Buffer.concat(parts)) : undefined;
      if (written) return written.then(tail);
    }
    return tail();
  };
  const tail = (): Promise<void> | undefined => {
    if (pump.clientGone) return;
    if (!sawDone && !o.mode.eventStream) {
      const last: string[] = [];
      if (o.clientWantsUsage && !usage) last.push(usageEvent());
      last.push('data: [DONE]\n\n');
      return pump.write(last.join(''));
    }
    if (!pump.started) return pump.write('');
  };
  const error = (msg: string): string => {
    const event = `data: ${JSON.stringify({ error: { message: `${msg} (request id: ${o.reqId})`, type: 'upstream_error', code: 'stream_error' } })}\n\n`;
    return o.mode.eventStream ? event : event + 'data: [DONE]\n\n';
  };
  return pump.run({ chunk: onChunk, end, error }, () => ({
    usage,
    firstChunkAt: pump.firstChunkAt,
    started: pump.started,
    clientGone: pump.clientGone,
    error: pump.error,
    completed: sawDone,
    stoppedOnSensitive,
    deliveredText,
  }));
}

/** The stream's payload converter with the sensitive-word masking after it (or the converter alone when it is off). */
function sensitiveConvert(
  convert: ((data: string) => string[]) | undefined,
  scanners: StreamScanners,
  onStop: () => void,
): (data: string) => string[] {
  let stopped = false;
  const mask = (data: string): string[] => {
    if (stopped) return [];
    if (data === '[DONE]') return [data];
    const r = scanners.maskOpenAiEvent(data);
    if (r.stop) {
      stopped = true;
      onStop();
    }
    return r.out;
  };
  return convert ? (d) => convert(d).flatMap(mask) : mask;
}
