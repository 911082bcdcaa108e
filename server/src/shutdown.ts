// A clean stop (SIGTERM / SIGINT): requests in flight are let finish, then everything queued is written.
//
// 1. No new connections. A new request on a connection already open gets a 503 with `Connection: close` (Fastify's,
//    or the relay fast path's in the OpenAI shape: relay/fast-path.ts), so a load balancer or an SDK retries it
//    elsewhere.
// 2. Requests in flight (a stream, a slow upstream) run to their end for up to `drainMs` (SHUTDOWN_TIMEOUT); each
//    connection is closed as soon as it is idle.
// 3. At the deadline the connections left are cut. A relay request cut this way goes the client-gone path: its
//    upstream call is aborted and it is billed for what was delivered (or refunded), as if its client had left; a
//    non-stream answer still read for a client who left is given up too (the relay services' close aborts what is in
//    svc.leftBehind; a chat answer is then refunded), so that the stop does not wait for the upstream.
// 4. Once every relay request has settled and queued its log row (svc.inFlight), ctx.close() writes the settlement
//    deltas, log rows and dashboard buckets and closes the databases.
// Before this, connections were cut at once: a stream in flight was ended mid-answer on every deploy.
import type { FastifyInstance } from 'fastify';
import type { AppContext } from './context.js';
import { markShuttingDown } from './services/health.js';

const TICK_MS = 25;

export async function closeGracefully(app: FastifyInstance, ctx: AppContext, drainMs: number): Promise<void> {
  const server = app.server;
  // /readyz answers 503 from here on (services/health.ts)
  markShuttingDown(ctx);
  let closed = false;
  const closing = app
    .close()
    .catch((err) => ctx.log.error({ err }, 'closing the HTTP server failed'))
    .then(() => {
      closed = true;
    });
  const deadline = Date.now() + drainMs;
  try {
    // server.close() closes the connections idle at that moment only; one whose response ends later would stay open
    // until its keep-alive timeout
    while (!closed) {
      if (Date.now() >= deadline) {
        server.closeAllConnections();
        break;
      }
      server.closeIdleConnections();
      await new Promise((r) => setTimeout(r, Math.min(TICK_MS, Math.max(1, deadline - Date.now()))));
    }
    await closing;
  } finally {
    // whatever happened to the server, what is queued is written
    await ctx.close();
  }
}
