// An upstream that answers over a websocket (iFlytek Spark) carried as one HTTP exchange, so the relay's engine reads
// it as it reads any upstream (lanes/run.ts, relay/upstream-call.ts): the request's URL (http(s) → ws(s)) is opened,
// its body sent as the one text frame, and each received frame given on as one Server-Sent Event (`data: <frame>`)
// of a 200 event stream that ends when the upstream closes. A refused handshake is the HTTP answer it was (status and
// body, for the provider's error parser); a socket that fails before opening is a request that never got an answer.
import type { OutgoingRequest, ResponseSink } from '../../lib/response-sink.js';
import type { Transport } from './index.js';
import { UpgradeRefusedError, type WebSocketTransport } from './websocket.js';

const latin1 = (s: string) => Buffer.from(s, 'latin1');

export class WebSocketExchange implements Transport {
  constructor(
    private readonly sockets: WebSocketTransport,
    /** the channel's proxy (channel-setting.ts proxyOf) */
    private readonly proxy: string | null,
  ) {}

  send(req: OutgoingRequest, sink: ResponseSink): void {
    const abort = new AbortController();
    sink.onStart((err) => abort.abort(err));
    const url = req.origin.replace(/^http/i, 'ws') + req.path;
    this.sockets
      .open({
        url,
        headers: {},
        proxy: this.proxy,
        headersTimeout: req.headersTimeout,
        bodyTimeout: req.bodyTimeout,
        signal: abort.signal,
      })
      .then(
        async (socket) => {
          const body = req.body === null ? '' : req.body.toString();
          await socket.send(body);
          const stream = socket.stream();
          sink.onHeaders(200, [latin1('content-type'), latin1('text/event-stream')], () => stream.resume());
          stream.consume(
            (frame) => {
              if (!sink.onData(Buffer.concat([latin1('data: '), frame, latin1('\n\n')]))) stream.pause();
            },
            (err) => (err ? sink.onError(err) : sink.onEnd()),
          );
        },
        (err: Error) => {
          if (!(err instanceof UpgradeRefusedError)) return sink.onError(err);
          sink.onHeaders(err.status, [latin1('content-type'), latin1('application/json')], () => undefined);
          sink.onData(err.body);
          sink.onEnd();
        },
      )
      .catch((err: Error) => sink.onError(err));
  }
}
