// The decoded lanes of the stream pump (stream/pump.ts): upstream bytes → events (the provider's framing,
// stream/framing.ts) → hub chunks (the provider's wire codec) → the client's stream (the client's wire codec). Unlike
// the native lane's byte scanner (stream/sse-scan.ts), every event is decoded; state lives in the per-request framing,
// decoder and encoder.
import type { HttpResponse } from '../../lib/http-response.js';
import type { StreamDecoder, StreamEncoder } from '../formats/codec.js';
import type { HubOutputTransform } from '../hub/output-transforms.js';
import type { HubChunk, HubUsage } from '../hub/types.js';
import type { StreamKeepAlive } from '../keepalive.js';
import type { StreamDelta } from '../modes/mode.js';
import { stopChunk, type StreamScanners } from '../sensitive-output.js';
import type { EventFraming } from './framing.js';
import { StreamPump, type UpstreamStream } from './pump.js';

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
  /** the channel's output settings on the hub chunks (hub/output-transforms.ts): events are then re-encoded */
  transform?: HubOutputTransform | null;
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

export function pumpTranslated(body: UpstreamStream, o: TranslateOptions): Promise<TranslateResult> {
  // the encoder's content type (the response starts with the first bytes the encoder gives)
  o.headers['Content-Type'] = o.encoder.contentType;
  const pump = new StreamPump(body, o);
  let stoppedOnSensitive = false;
  let text = '';
  const toolIds = new Set<string>();

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

  const transform = o.transform ?? null;
  const encode = (chunks: HubChunk[]): string => {
    if (transform) transform.chunks(chunks);
    account(chunks);
    let out = '';
    for (const c of chunks) out += o.encoder.push(c);
    return out;
  };

  const sensitive = o.sensitive ?? null;
  const pass = o.pass && o.encoder.passEvent && !sensitive && !transform ? o.encoder : null;

  /** The client's bytes for decoded chunks, their sensitive words masked (chosen once: nothing per event when off). */
  const emit = !sensitive
    ? encode
    : (chunks: HubChunk[]): string => {
        if (!sensitive.scanners.maskChunks(chunks)) return encode(chunks);
        // stopped for a word: these chunks (masked) are the last ones sent, the rest of the upstream is not read
        stoppedOnSensitive = pump.stopped = true;
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

  const chunk = (bytes: Buffer): Promise<void> | undefined => {
    if (stoppedOnSensitive) return;
    const { out, failed } = decode(o.framing.push(bytes));
    const written = out ? pump.write(out) : undefined;
    if (stoppedOnSensitive) {
      pump.abortUpstream();
      return written;
    }
    if (failed) throw failed;
    return written;
  };
  /** The upstream ended: the framing's and the decoder's last events, and the end of the client's stream. */
  const end = (): Promise<void> | undefined => {
    const last = decode(o.framing.end());
    let out = last.out;
    if (last.failed) {
      const failed = last.failed;
      const written = out ? pump.write(out) : undefined;
      if (written)
        return written.then(() => {
          throw failed;
        });
      throw failed;
    }
    if (!stoppedOnSensitive) {
      out += pass ? '' : emit(o.decoder.end());
      if (!stoppedOnSensitive) out += pass ? (pass.passEnd?.() ?? '') : o.encoder.end(o.decoder.usage());
    }
    return out ? pump.write(out) : undefined;
  };
  const error = (message: string): string =>
    o.encoder.error({ status: 502, message, type: 'upstream_error', code: 'stream_error' });

  return pump.run({ chunk, end, error }, () => ({
    usage: o.decoder.usage(),
    firstChunkAt: pump.firstChunkAt,
    started: pump.started,
    clientGone: pump.clientGone,
    error: pump.error,
    delivered: { text, toolCalls: toolIds.size },
    stoppedOnSensitive,
  }));
}
