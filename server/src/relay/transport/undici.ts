// undici as a Transport: its public Dispatcher.dispatch, with a small adapter from its dispatch handler callbacks to
// the project's ResponseSink. The adapter is the only place that knows undici's handler interface.
//
// The dispatcher may be given made, or as a function of the undici module: then undici is imported (lib/undici.ts)
// and the dispatcher made with the first request, which waits for that import; later requests dispatch at once.
import type { Dispatcher } from 'undici';
import { loadUndici, type UndiciModule } from '../../lib/undici.js';
import type { OutgoingRequest, ResponseSink } from '../../lib/response-sink.js';

class SinkHandler implements Dispatcher.DispatchHandler {
  constructor(private readonly sink: ResponseSink) {}

  onConnect(abort: (err?: Error) => void): void {
    this.sink.onStart(abort);
  }

  onHeaders(status: number, rawHeaders: Buffer[], resume: () => void): boolean {
    // informational heads (100 Continue, 103 Early Hints): the final response follows
    if (status >= 200) this.sink.onHeaders(status, rawHeaders, resume);
    return true;
  }

  onData(chunk: Buffer): boolean {
    return this.sink.onData(chunk);
  }

  onComplete(): void {
    this.sink.onEnd();
  }

  onError(err: Error): void {
    this.sink.onError(err);
  }
}

export type DispatcherSource = Dispatcher | ((undici: UndiciModule) => Dispatcher);

export class UndiciTransport {
  private made: Dispatcher | null;
  private making: Promise<Dispatcher> | null = null;
  private readonly make: ((undici: UndiciModule) => Dispatcher) | null;
  private isClosed = false;

  constructor(source: DispatcherSource) {
    if (typeof source === 'function') {
      this.made = null;
      this.make = source;
    } else {
      this.made = source;
      this.make = null;
    }
  }

  /** the dispatcher; null until the first request (or ready()) of a transport given a function */
  get dispatcher(): Dispatcher | null {
    return this.made;
  }

  /** whether close() was called */
  get closed(): boolean {
    return this.isClosed;
  }

  /** The dispatcher, undici imported and the dispatcher made if not yet. */
  ready(): Promise<Dispatcher> {
    if (this.made) return Promise.resolve(this.made);
    return (this.making ??= loadUndici().then((undici) => {
      const d = (this.made = this.make!(undici));
      // closed while undici loaded: requests still get the dispatcher's own "closed" error
      if (this.isClosed) void d.close().catch(() => undefined);
      return d;
    }));
  }

  send(req: OutgoingRequest, sink: ResponseSink): void {
    const d = this.made;
    if (d) {
      d.dispatch(req, new SinkHandler(sink));
      return;
    }
    this.ready().then(
      (made) => {
        try {
          made.dispatch(req, new SinkHandler(sink));
        } catch (err) {
          sink.onError(err as Error);
        }
      },
      (err: Error) => sink.onError(err),
    );
  }

  /** Closes the dispatcher (once its requests are done); one not made yet is closed as soon as it is. */
  async close(): Promise<void> {
    this.isClosed = true;
    const d = this.made ?? (this.making ? await this.making.catch(() => null) : null);
    await d?.close();
  }
}
