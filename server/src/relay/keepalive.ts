// general_setting.ping_interval_enabled: a stream request whose response has been silent for
// general_setting.ping_interval_seconds gets an SSE comment, `: PING` (new-api's bytes), so that a proxy or load
// balancer in front (Cloudflare cuts a response idle for 100 s) keeps the connection while a model thinks, or while
// the upstream has not answered yet. SSE clients skip comment lines.
//
// new-api commits the 200 and the SSE headers before its upstream call whenever pings are on. Here they go out with
// the first ping, once an interval has passed with nothing written: a stream that starts within the interval keeps
// its HTTP error statuses. Once a ping has committed the headers, the relay reports a failure in-band instead
// (sendStreamError), and still retries another channel: nothing but pings has been written.
import type { HttpResponse } from '../lib/http-response.js';
import type { AppContext } from '../context.js';

const PING = Buffer.from(': PING\n\n');
const DEFAULT_SECONDS = 60;

export class StreamKeepAlive {
  private timer: NodeJS.Timeout | undefined;
  private last = Date.now();
  /** the headers went out with a ping: the response is an event stream from now on */
  committed = false;

  private constructor(
    private readonly res: HttpResponse,
    private readonly intervalMs: number,
    private readonly headers: () => Record<string, string>,
  ) {
    this.arm(intervalMs);
  }

  /** A keep-alive for `res` when the option is on, else null. `headers`: the event stream's response headers. */
  static start(ctx: AppContext, res: HttpResponse, headers: () => Record<string, string>): StreamKeepAlive | null {
    if (!ctx.options.bool('general_setting.ping_interval_enabled')) return null;
    const seconds = ctx.options.num('general_setting.ping_interval_seconds', DEFAULT_SECONDS);
    return new StreamKeepAlive(res, (seconds >= 1 ? seconds : DEFAULT_SECONDS) * 1000, headers);
  }

  /** Something was written to the client: the silence starts again. */
  touch(): void {
    this.last = Date.now();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = setTimeout(this.tick, ms);
  }

  private readonly tick = (): void => {
    const res = this.res;
    if (res.writableEnded || res.destroyed) return this.stop();
    const wait = this.last + this.intervalMs - Date.now();
    if (wait > 0) return this.arm(wait);
    if (!res.headersSent) {
      res.writeHead(200, this.headers());
      this.committed = true;
    }
    // a client that is not reading gets no pings piled up in our memory
    if (!res.writableNeedDrain) res.write(PING);
    this.last = Date.now();
    this.arm(this.intervalMs);
  };
}
