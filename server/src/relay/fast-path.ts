// Hot-path shortcut: POST requests to the plain JSON relay routes (/v1/chat/completions, /v1/completions,
// /v1/embeddings) skip Fastify's router, hooks and body parser and go straight to the engine. Everything else —
// including these same routes through app.inject(), other methods, the playground and every other path — still goes
// through Fastify, where the same routes are registered.
// Why: on a 0-ms upstream the framework work per request was ~10-15 % of the relay's CPU (perf goals G1/G3).
// Two ways in: the lean HTTP front (lib/lean-http/) serves the common form of these requests on its own connections
// without Node's IncomingMessage/ServerResponse; connections it hands to Node's server reach the `request` hook.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import type { RelayServices } from './services.js';
import { newRequestId } from '../lib/request-id.js';
import { clientIpOf, proxyTrust } from '../lib/ip-match.js';
import { LeanHttpFront } from '../lib/lean-http/front.js';
import type { HttpResponse } from '../lib/http-response.js';
import { BODY_LIMIT } from '../lib/body-limits.js';
import { relayJson, type JsonRelayOptions } from './pipeline/run.js';
import { RelayError, sendRelayError } from './errors.js';
import type { RelayMode } from './modes/mode.js';
import { refuseUnread } from './admit.js';
import { tokenAuth, type RelayCaller } from './auth.js';
import { decodeBody } from './body-decode.js';

export function installRelayFastPath(
  app: FastifyInstance,
  ctx: AppContext,
  svc: RelayServices,
  routes: Record<string, RelayMode>,
): void {
  const server = app.server;
  const handlers = server.listeners('request') as Array<(req: IncomingMessage, res: ServerResponse) => void>;
  if (handlers.length !== 1) return; // not the layout we know: leave Fastify in charge
  const fastify = handlers[0];
  // the same client address as Fastify's request.ip (app.ts)
  const trusted = proxyTrust(ctx.config.trustedProxies);
  // A request that arrives on an open connection once a stop has begun (shutdown.ts) is refused with a 503 and
  // `Connection: close`, so the client retries it on another node: Fastify's answer on its routes, the OpenAI error
  // shape here. preClose, not onClose: Fastify's own onClose handler, which runs first, waits for every connection.
  let closing = false;

  /** TokenAuth from the head alone, before the body is read (admit.ts): the caller, or a promise of it; throws */
  const admit = (url: string, headers: IncomingHttpHeaders) => tokenAuth(ctx, svc, headers, url);

  // the engine's options per route, made once rather than per request
  const optionsOf: Record<string, JsonRelayOptions> = {};
  for (const url of Object.keys(routes)) optionsOf[url] = { mode: routes[url] };
  /** the client format of a route: its refusals are written in that format's error shape */
  const formatOf = (url: string | undefined) => (url && Object.hasOwn(routes, url) ? routes[url].format : undefined);

  /** one relay request whose caller is authenticated and whose body has been read */
  const serve = (
    url: string,
    headers: IncomingHttpHeaders,
    socketIp: string,
    caller: RelayCaller,
    raw: Buffer,
    res: HttpResponse,
  ): void => {
    const id = newRequestId();
    if (closing) {
      res.setHeader('Connection', 'close');
      svc.metrics.countLocal('refused', 503, formatOf(url));
      return sendRelayError(
        res,
        new RelayError(503, 'the gateway is shutting down; retry the request', 'new_api_error', 'shutting_down'),
        id,
        headers,
        formatOf(url),
      );
    }
    decodeBody(headers['content-encoding'], raw, BODY_LIMIT, (err, body) => {
      if (err) {
        svc.metrics.countLocal('refused', err.status, formatOf(url));
        return sendRelayError(res, err, id, headers, formatOf(url));
      }
      const ip = clientIpOf(socketIp, headers['x-forwarded-for'] as string | undefined, trusted);
      relayJson(svc, ctx, { id, url, headers, ip, body: body!, caller, sessionUserId: 0 }, res, optionsOf[url]).catch(
        (e) => {
          ctx.log.error({ err: e, reqId: id }, 'relay failed');
          if (!res.headersSent) sendRelayError(res, new RelayError(500, 'internal error'), id, headers, formatOf(url));
          else res.destroy();
        },
      );
    });
  };

  if (ctx.config.leanHttp) {
    LeanHttpFront.install(server, {
      isRoute: (url) => Object.hasOwn(routes, url),
      bodyLimit: BODY_LIMIT,
      admission: {
        check: (head) => admit(head.url, head.headers),
        refuse: (err, head, res) =>
          refuseUnread(res, head.headers, err, newRequestId(), formatOf(head.url), svc.metrics),
      },
      handle: (req, res) =>
        serve(req.url, req.headers, req.socket.remoteAddress ?? '', req.admitted as RelayCaller, req.body, res),
      stopping: () => closing,
    });
  }
  app.addHook('preClose', async () => {
    closing = true;
  });

  /** Node's request: its body is read once the caller is known */
  const readBody = (req: IncomingMessage, res: ServerResponse, caller: RelayCaller): void => {
    const tooLarge = () =>
      refuseUnread(
        res,
        req.headers,
        new RelayError(413, 'Request body is too large'),
        newRequestId(),
        formatOf(req.url),
        svc.metrics,
      );
    if (Number(req.headers['content-length']) > BODY_LIMIT) return tooLarge();
    let chunks: Buffer[] = [];
    let size = 0;
    const onData = (c: Buffer) => {
      size += c.length;
      if (size <= BODY_LIMIT) return void chunks.push(c);
      // a chunked body past the limit: what was kept goes, the rest is not read
      req.off('data', onData);
      req.pause();
      chunks = [];
      tooLarge();
    };
    req.on('data', onData);
    req.on('error', () => res.destroy());
    req.on('end', () => {
      if (size > BODY_LIMIT) return;
      serve(
        req.url!,
        req.headers,
        req.socket.remoteAddress ?? '',
        caller,
        chunks.length === 1 ? chunks[0] : Buffer.concat(chunks),
        res,
      );
    });
  };

  server.removeListener('request', fastify);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST' || !Object.hasOwn(routes, req.url ?? '')) return fastify(req, res);
    let caller: RelayCaller | Promise<RelayCaller>;
    try {
      caller = admit(req.url!, req.headers);
    } catch (err) {
      return refuseUnread(res, req.headers, err, newRequestId(), formatOf(req.url), svc.metrics);
    }
    // nothing is read from the request until its caller is known
    if (caller instanceof Promise)
      caller.then(
        (c) => readBody(req, res, c),
        (err) => refuseUnread(res, req.headers, err, newRequestId(), formatOf(req.url), svc.metrics),
      );
    else readBody(req, res, caller);
  });
}
