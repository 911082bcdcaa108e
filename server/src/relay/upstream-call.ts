// One upstream request, read through the project's ResponseSink (lib/response-sink.ts) from whichever client the
// transport picked (relay/transport/): the same request and timeouts as undici's Dispatcher.request(), without
// the Readable body stream, the AsyncResource and the per-chunk stream machinery it creates per request (on a 0-ms
// upstream that machinery was a third of a streamed request's CPU and most of its garbage). Two ways to read the response:
//   - whole (JSON): new UpstreamCall(false).send(…) resolves once the body is complete; `body()` is the bytes;
//   - streaming (SSE): new UpstreamCall(true).send(…) resolves at the response headers; the body is then delivered to
//     consume() chunk by chunk, with pause()/resume() for backpressure (the client stops reading the socket meanwhile).
// Both reject only when no response headers arrived (connect error, headers timeout, abort). A body that fails after
// the headers sets `error` (whole) or ends the stream with it (streaming). destroy() (a streaming client went away,
// the reservation was refused, a stop) aborts the request at any point.
import type { OutgoingRequest, ResponseSink } from '../lib/response-sink.js';
import type { Transport } from './transport/index.js';
import type { BodyRewrite } from './providers/dialect.js';

const ABORTED = 'Request aborted';
const noop = (): void => {};

export class UpstreamCall implements ResponseSink {
  statusCode = 0;
  /** content-type response header ('' when absent) */
  contentType = '';
  /** the response headers as received: name, value, name, value… */
  rawHeaders: Buffer[] = [];
  /** Date.now() when the response headers arrived (first-response time) */
  headersAt = 0;
  /** the body failed after the headers arrived */
  error: Error | null = null;

  private chunks: Buffer[] = [];
  private ended = false;
  private settled = false;
  private abortFn: ((err?: Error) => void) | null = null;
  private resumeFn: (() => void) | null = null;
  private aborted = false;
  private paused = false;
  private sink: ((chunk: Buffer) => void) | null = null;
  private sinkEnd: ((err: Error | null) => void) | null = null;
  private endWaiter: (() => void) | null = null;
  private outputWaiter: (() => void) | null = null;
  private rewriter: BodyRewrite | null = null;
  private resolve: ((call: UpstreamCall) => void) | null = null;
  private reject: ((err: Error) => void) | null = null;

  constructor(private readonly streaming: boolean) {}

  /** Sends the request: resolves with this call (whole: at the end of the body; streaming: at the headers). */
  send(transport: Transport, req: OutgoingRequest): Promise<UpstreamCall> {
    return new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
      transport.send(req, this);
    });
  }

  // ---- the ResponseSink
  onStart(abort: (err?: Error) => void): void {
    this.abortFn = abort;
    if (this.aborted) abort(new Error(ABORTED));
  }

  /** the response headers by lower-case name (an error parser may read the vendor's error type from them) */
  headerRecord(): Record<string, string> {
    const out: Record<string, string> = {};
    const raw = this.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2)
      out[raw[i].toString('latin1').toLowerCase()] = raw[i + 1].toString('latin1');
    return out;
  }

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void): void {
    this.statusCode = status;
    this.headersAt = Date.now();
    this.resumeFn = resume;
    this.rawHeaders = rawHeaders;
    for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
      const name = rawHeaders[i];
      if (name.length === 12 && name.toString('latin1').toLowerCase() === 'content-type') {
        const v = rawHeaders[i + 1].toString('latin1');
        this.contentType = this.contentType ? `${this.contentType},${v}` : v;
      }
    }
    if (this.streaming) this.start();
  }

  onData(chunk: Buffer): boolean {
    if (this.rewriter) {
      try {
        this.deliver(this.rewriter.push(chunk));
      } catch (err) {
        this.failRewrite(err as Error);
      }
    } else this.deliver(chunk);
    return !this.paused;
  }

  onEnd(): void {
    if (this.rewriter && !this.ended) {
      try {
        this.deliver(this.rewriter.end());
      } catch (err) {
        return this.end(err as Error);
      }
    }
    this.end(null);
  }

  private deliver(chunk: Buffer): void {
    if (!chunk.length) return;
    if (this.sink) this.sink(chunk);
    else this.chunks.push(chunk);
    this.outputWaiter?.();
  }

  /**
   * From now on the body's bytes are rewritten (a vendor's own answer into OpenAI's: providers/dialect.ts), those
   * already received included. A rewrite that throws ends the body with its error (`error`) and aborts the request.
   */
  rewrite(rewriter: BodyRewrite): void {
    this.contentType = rewriter.contentType;
    const early = this.chunks;
    this.chunks = [];
    this.rewriter = rewriter;
    try {
      for (const chunk of early) this.deliver(rewriter.push(chunk));
      if (this.ended && !this.error) this.deliver(rewriter.end());
    } catch (err) {
      if (this.ended) this.error = err as Error;
      else this.failRewrite(err as Error);
    }
  }

  /** Resolves once the (rewritten) body has given its first bytes, or ended. */
  async firstOutput(): Promise<void> {
    if (this.ended || this.chunks.length) return;
    await new Promise<void>((r) => {
      this.outputWaiter = () => {
        this.outputWaiter = null;
        r();
      };
    });
  }

  private failRewrite(err: Error): void {
    this.end(err);
    this.destroy();
  }

  onError(err: Error): void {
    this.end(err);
  }

  // ---- the relay's side
  /** whole mode: the response body */
  body(): Buffer {
    return this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
  }

  /** streaming mode, a response that is not streamed on: resolves when the body is complete (or failed: `error`) */
  async finished(): Promise<void> {
    if (!this.ended) await new Promise<void>((r) => (this.endWaiter = r));
  }

  /** an error response's body ('' when it failed) */
  async rest(): Promise<Buffer> {
    await this.finished();
    return this.error ? Buffer.alloc(0) : this.body();
  }

  /** streaming mode: delivers the body, chunk by chunk, then its end (null or the error that cut it) */
  consume(onChunk: (chunk: Buffer) => void, onEnd: (err: Error | null) => void): void {
    const early = this.chunks;
    this.chunks = [];
    this.sink = onChunk;
    this.sinkEnd = onEnd;
    if (early.length) onChunk(early.length === 1 ? early[0] : Buffer.concat(early));
    if (this.ended) onEnd(this.error);
  }

  /** streaming mode: reads the rest of the body and drops it (a client that left, billed all the same) */
  drain(): Promise<void> {
    return new Promise((resolve) => this.consume(noop, () => resolve()));
  }

  pause(): void {
    this.paused = true;
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.resumeFn?.();
  }

  /** aborts the request; a consumer gets its end with the abort error */
  destroy(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.abortFn?.(new Error(ABORTED));
  }

  private start(): void {
    if (this.settled) return;
    this.settled = true;
    this.resolve?.(this);
  }

  private end(err: Error | null): void {
    if (this.ended) return;
    this.ended = true;
    if (err && !this.headersAt) {
      this.settled = true;
      return this.reject?.(err);
    }
    this.error = err;
    if (!this.settled) this.start();
    this.sinkEnd?.(err);
    this.endWaiter?.();
    this.outputWaiter?.();
  }
}
