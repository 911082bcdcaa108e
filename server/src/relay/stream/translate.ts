// The translated lane's stream pump: upstream bytes → events (the provider's framing: SSE, AWS event-stream) → hub
// chunks (the provider's wire codec) → the client's stream (the client's wire codec). Unlike the OpenAI native lane
// (relay/stream.ts), every event is decoded; state lives in the per-request framing, decoder and encoder.
// Backpressure: a write the client's socket refuses pauses the upstream until 'drain'.
import type { HttpResponse } from '../../lib/http-response.js';
import type { StreamDecoder, StreamEncoder } from '../formats/codec.js';
import type { HubChunk, HubUsage } from '../hub/types.js';
import type { StreamKeepAlive } from '../keepalive.js';
import { drained, pumpChunks, type UpstreamStream } from '../stream.js';
import type { StreamDelta } from '../modes/mode.js';
import { stopChunk, type StreamScanners } from '../sensitive-output.js';
import type { EventFraming } from './framing.js';

export type { EventFraming } from './framing.js';

export interface TranslateOptions {
  res: HttpResponse;
  /** response headers (the encoder's content type is set on them) */
  headers: Record<string, string>;
  framing: EventFraming;
  decoder: StreamDecoder;
  encoder: StreamEncoder;
  keepAlive?: StreamKeepAlive | null;
  /**
   * the native lane: each upstream event is written as it came (only reframed by the encoder's passEvent); the
   * decoder still reads every event, for the usage and the delivered text
   */
  pass?: boolean;
  /** hides the channel's secrets in an error text told in-band (relay/redact.ts) */
  redact?: (text: string) => string;
  /**
   * the completion's sensitive-word check (relay/sensitive-output.ts), when on (events are then re-encoded, never
   * passed): words are masked in the hub chunks; a stop ends the stream there, in the client's format, with a
   * content_filter finish and the usage of what was delivered, and aborts the upstream
   */
  sensitive?: { scanners: StreamScanners; deliveredUsage(delivered: StreamDelta): HubUsage } | null;
}

export interface TranslateResult {
  usage: HubUsage | null;
  firstChunkAt: number;
  started: boolean;
  clientGone: boolean;
  error: Error | null;
  /** what reached the client, for local counting when the upstream reported no usage */
  delivered: StreamDelta;
  /** the stream was ended by the relay for a sensitive word (StopOnSensitiveEnabled) */
  stoppedOnSensitive: boolean;
}

export async function pumpTranslated(body: UpstreamStream, o: TranslateOptions): Promise<TranslateResult> {
  const { res } = o;
  let started = false;
  let clientGone = false;
  let firstChunkAt = 0;
  let error: Error | null = null;
  let stoppedOnSensitive = false;
  let text = '';
  const toolIds = new Set<string>();

  // mid-stream the upstream is aborted; before the first byte it is read to its end for its usage (relay/stream.ts)
  const onClose = () => {
    if (!res.writableFinished) {
      clientGone = true;
      if (started) body.destroy();
    }
  };
  res.once('close', onClose);

  const write = (s: string): Promise<void> | undefined => {
    if (clientGone || !s) return;
    if (!started) {
      started = true;
      if (!res.headersSent) {
        o.headers['Content-Type'] = o.encoder.contentType;
        res.writeHead(200, o.headers);
      }
    }
    o.keepAlive?.touch();
    if (res.write(s)) return;
    return drained(res);
  };

  /** counts what the client is given, for local counting when the upstream reports no usage */
  const account = (chunks: HubChunk[]): void => {
    for (const c of chunks) {
      for (const ch of c.choices) {
        const d = ch.delta;
        if (d.content) text += d.content;
        if (d.reasoning_content) text += d.reasoning_content;
        for (const t of d.tool_calls ?? []) {
          if (t.id) toolIds.add(t.id);
          if (t.function?.name) text += t.function.name;
          if (t.function?.arguments) text += t.function.arguments;
        }
      }
    }
  };

  const encode = (chunks: HubChunk[]): string => {
    account(chunks);
    let out = '';
    for (const c of chunks) out += o.encoder.push(c);
    return out;
  };

  const sensitive = o.sensitive ?? null;
  const pass = o.pass && o.encoder.passEvent && !sensitive ? o.encoder : null;

  /** The client's bytes for decoded chunks, their sensitive words masked (chosen once: nothing per event when off). */
  const emit = !sensitive
    ? encode
    : (chunks: HubChunk[]): string => {
        if (!sensitive.scanners.maskChunks(chunks)) return encode(chunks);
        // stopped for a word: these chunks (masked) are the last ones sent, the rest of the upstream is not read
        stoppedOnSensitive = true;
        let out = encode(chunks);
        const last = chunks[chunks.length - 1];
        if (last) out += encode([stopChunk(last)]);
        return out + o.encoder.end(sensitive.deliveredUsage({ text, toolCalls: toolIds.size }));
      };
  /** The events' bytes for the client, and the error of an event that reports the stream failed (the events before
   * it arrived in the same read and were delivered, so they are written and billed, then the error is told). */
  const decode = (events: { data: string; event?: string }[]): { out: string; failed: Error | null } => {
    let out = '';
    for (const ev of events) {
      let chunks: HubChunk[];
      try {
        chunks = o.decoder.push(ev.data, ev.event);
      } catch (err) {
        return { out, failed: err as Error };
      }
      if (!pass) {
        out += emit(chunks);
        if (stoppedOnSensitive) break;
      } else {
        account(chunks);
        out += pass.passEvent!(ev.data, ev.event);
      }
    }
    return { out, failed: null };
  };

  const failure = await pumpChunks(
    body,
    (chunk) => {
      if (stoppedOnSensitive) return;
      if (!firstChunkAt) firstChunkAt = Date.now();
      const { out, failed } = decode(o.framing.push(chunk));
      const written = write(out);
      if (stoppedOnSensitive) {
        body.destroy();
        return written;
      }
      if (failed) throw failed;
      return written;
    },
    () => clientGone && started,
  );
  if (failure && !clientGone && !stoppedOnSensitive) error = failure;

  if (!error && !clientGone && !stoppedOnSensitive) {
    try {
      const last = decode(o.framing.end());
      if (last.failed) {
        await write(last.out);
        throw last.failed;
      }
      if (stoppedOnSensitive) await write(last.out);
      else {
        const tail = last.out + (pass ? '' : emit(o.decoder.end()));
        const end = stoppedOnSensitive ? '' : pass ? (pass.passEnd?.() ?? '') : o.encoder.end(o.decoder.usage());
        await write(tail + end);
      }
    } catch (err) {
      error = err as Error;
    }
  }
  res.off('close', onClose);
  if (error && started && !clientGone) {
    const text = (error as Error).message || 'upstream stream error';
    const msg = o.redact ? o.redact(text) : text;
    await write(o.encoder.error({ status: 502, message: msg, type: 'upstream_error', code: 'stream_error' }));
  }
  if (started && !clientGone && !res.writableEnded) res.end();

  return {
    usage: o.decoder.usage(),
    firstChunkAt,
    started,
    clientGone,
    error,
    delivered: { text, toolCalls: toolIds.size },
    stoppedOnSensitive,
  };
}
