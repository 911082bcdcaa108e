// undici as a Transport: its public Dispatcher.dispatch, with a small adapter from its dispatch handler callbacks to
// the project's ResponseSink. The adapter is the only place that knows undici's handler interface.
import type { Dispatcher } from 'undici';
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

export class UndiciTransport {
  constructor(readonly dispatcher: Dispatcher) {}

  send(req: OutgoingRequest, sink: ResponseSink): void {
    this.dispatcher.dispatch(req, new SinkHandler(sink));
  }
}
