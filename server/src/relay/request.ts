// The request the relay engine runs: the few facts it needs, built by each way in (the lean front and Node's `request`
// hook in fast-path.ts, the Fastify routes in index.ts) from what that way has at hand, once the caller is
// authenticated (admit.ts) and the body is read and decoded (body-decode.ts).
import type { IncomingHttpHeaders } from 'node:http';
import type { RelayCaller } from './auth.js';

export interface RelayRequest {
  /** the request id: the answer's X-Oneapi-Request-Id and the log lines' reqId */
  readonly id: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** the client's address (forwarded headers believed from trusted proxies only), for the token's IP allow-list */
  readonly ip: string;
  /** the body as sent, its content coding removed; parsed once by the engine, forwarded as is when nothing changes */
  readonly body: Buffer;
  /** the token's caller, authenticated from the head; null on the playground, whose caller is the session's user */
  readonly caller: RelayCaller | null;
  /** the playground's console session user (0 elsewhere) */
  readonly sessionUserId: number;
}
