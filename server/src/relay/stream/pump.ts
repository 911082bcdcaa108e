// The one stream pump of the relay: upstream chunks in, the client's bytes out, for every streaming lane. It owns
// what must be right once for all of them: backpressure (a write the client's socket refuses pauses the upstream until
// 'drain'), the client going away (mid-stream the upstream is aborted; before the first byte the stream is read to its
// end for its usage, lanes/run.ts keeping the call for a stop), keep-alive pings told of every write, the first
// chunk's time, an upstream that fails, told in-band once the client has bytes, and the response's end. What differs
// per lane (scanning SSE bytes, decoding events through the hub) is a PumpLane: per chunk, at the end, and the shape
// of an in-band error.
import { drained, type HttpResponse } from '../../lib/http-response.js';
import type { StreamKeepAlive } from '../keepalive.js';

/** The upstream body as the pump reads it (relay/upstream-call.ts). */
export interface UpstreamStream {
  /** delivers the chunks, then the end (null, or the error that cut the body) */
  consume(onChunk: (chunk: Buffer) => void, onEnd: (err: Error | null) => void): void;
  /** stop / go on reading the upstream socket (backpressure) */
  pause(): void;
  resume(): void;
  /** abort the upstream request */
  destroy(): void;
}

/** What a lane does with the stream; it writes through its pump (write, endWith, stop). */
export interface PumpLane {
  /** One upstream chunk. A returned promise (a refused write) pauses the upstream; a throw ends it with that error. */
  chunk(bytes: Buffer): Promise<void> | undefined;
  /** The upstream ended normally and the client is still here: what the lane still owes. A throw is an error. */
  end(): Promise<void> | undefined;
  /**
   * The in-band error for a client that already has bytes (the message is already redacted); null: the lane's bytes
   * cannot carry one (a raw body), the connection is cut instead.
   */
  error(message: string): string | null;
}

export interface PumpOptions {
  res: HttpResponse;
  /** response headers, written with the first bytes (unless a ping sent them already) */
  headers: Record<string, string>;
  /** pings while the stream is silent (its first ping may already have sent the headers) */
  keepAlive?: StreamKeepAlive | null;
  /** hides the channel's secrets in an error text told in-band (relay/redact.ts) */
  redact?: (text: string) => string;
  /** a client that leaves before its first byte aborts the upstream too (an answer billed from the request alone) */
  abortBeforeStart?: boolean;
}

export class StreamPump {
  /** bytes were written to the client */
  started = false;
  clientGone = false;
  /** ms timestamp of the first upstream chunk, 0 if none */
  firstChunkAt = 0;
  /** the upstream failed (mid-stream, or before anything was sent), or the lane's end threw */
  error: Error | null = null;
  /** the lane ended the response itself, with its last bytes */
  ended = false;
  /** the lane stopped the stream (a sensitive word): nothing more is read or owed */
  stopped = false;

  constructor(
    private readonly body: UpstreamStream,
    private readonly o: PumpOptions,
  ) {
    o.res.once('close', this.onClose);
  }

  private readonly onClose = (): void => {
    if (!this.o.res.writableFinished) {
      this.clientGone = true;
      if (this.started || this.o.abortBeforeStart) this.body.destroy();
    }
  };

  /** Writes to the client (the headers first); a promise when the socket refused it, resolved once it drains. */
  write(buf: Buffer | string): Promise<void> | undefined {
    if (this.clientGone) return;
    const res = this.o.res;
    if (!this.started) {
      this.started = true;
      if (!res.headersSent) res.writeHead(200, this.o.headers);
    }
    this.o.keepAlive?.touch();
    if (res.write(buf)) return;
    return drained(res);
  }

  /** The stream's last bytes and the response's end in one go (one socket write instead of two). */
  endWith(buf: Buffer): void {
    if (this.clientGone) return;
    const res = this.o.res;
    if (!this.started) {
      this.started = true;
      if (!res.headersSent) {
        // the whole stream arrived at once: a sized response, without chunked framing
        this.o.headers['Content-Length'] = String(buf.length);
        res.writeHead(200, this.o.headers);
      }
    }
    this.ended = true;
    res.end(buf);
  }

  /** Aborts the upstream: the lane wants nothing more from it (a sensitive word), so it stops generating. */
  abortUpstream(): void {
    this.body.destroy();
  }

  /** Runs the stream to its end through `lane`; resolves with the lane's `result()` then. */
  async run<R>(lane: PumpLane, result: () => R): Promise<R> {
    const failure = await this.pumpChunks(lane);
    if (failure && !this.clientGone && !this.stopped) this.error = failure;
    if (!this.error && !this.clientGone && !this.stopped && !this.ended) {
      try {
        await lane.end();
      } catch (err) {
        if (!this.clientGone) this.error = err as Error;
      }
    }
    const res = this.o.res;
    res.off('close', this.onClose);
    if (this.error && this.started && !this.clientGone && !this.ended) {
      // the upstream broke mid-stream: tell the client in-band, then close the stream properly
      const text = this.error.message || 'upstream stream error';
      const told = lane.error(this.o.redact ? this.o.redact(text) : text);
      if (told === null) res.destroy(this.error);
      else await this.write(told);
    }
    if (this.started && !this.clientGone && !res.writableEnded && !res.destroyed) res.end();
    return result();
  }

  /**
   * Feeds the upstream body to the lane until it ends, the client goes or the lane throws, with backpressure.
   * Resolves with the error that ended the body, if any.
   */
  private pumpChunks(lane: PumpLane): Promise<Error | null> {
    const body = this.body;
    return new Promise((resolve) => {
      let finished = false;
      const finish = (err?: Error | null) => {
        if (finished) return;
        finished = true;
        resolve(err ?? null);
      };
      const resumeUnlessGone = () => {
        if (this.clientGone && this.started) finish();
        else if (!finished) body.resume();
      };
      body.consume(
        (chunk: Buffer) => {
          if (finished) return;
          if (!this.firstChunkAt) this.firstChunkAt = Date.now();
          let p: Promise<void> | undefined;
          try {
            p = lane.chunk(chunk);
          } catch (err) {
            finish(err as Error);
            body.destroy();
            return;
          }
          if (this.clientGone && this.started) return finish();
          if (p) {
            body.pause();
            void p.then(resumeUnlessGone);
          }
        },
        (err) => finish(err),
      );
    });
  }
}
