// Hot-path shortcut: POST requests to the plain JSON relay routes (/v1/chat/completions, /v1/completions,
// /v1/embeddings) skip Fastify's router, hooks and body parser and go straight to the engine. Everything else —
// including these same routes through app.inject(), other methods, the playground and every other path — still goes
// through Fastify, where the same routes are registered.
// Why: on a 0-ms upstream the framework work per request was ~10-15 % of the relay's CPU (perf goals G1/G3).
// Two ways in: the lean HTTP front (lib/lean-http/) serves the common form of these requests on its own connections
// without Node's IncomingMessage/ServerResponse; connections it hands to Node's server reach the `request` hook.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import zlib from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { RelayServices } from '../services/cache/index.js';
import { newRequestId } from '../lib/request-id.js';
import { clientIpOf, proxyTrust } from '../lib/ip-match.js';
import { LeanHttpFront } from '../lib/lean-http/front.js';
import type { HttpResponse } from '../lib/lean-http/response.js';
import { relayJson } from './engine.js';
import { RelayError, sendRelayError } from './errors.js';
import type { RelayMode } from './modes.js';

const BODY_LIMIT = 64 * 1024 * 1024;

function decode(enc: string | undefined, body: Buffer, cb: (err: Error | null, out?: Buffer) => void): void {
  if (!enc || enc === 'identity') return cb(null, body);
  const opts = { maxOutputLength: BODY_LIMIT };
  if (enc === 'gzip' || enc === 'x-gzip') zlib.gunzip(body, opts, cb);
  else if (enc === 'br') zlib.brotliDecompress(body, opts, cb);
  else if (enc === 'deflate') zlib.inflate(body, opts, cb);
  else cb(null, body);
}

export function installRelayFastPath(app: FastifyInstance, ctx: AppContext, svc: RelayServices, routes: Record<string, RelayMode>): void {
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

  /** one relay request whose body has been read */
  const serve = (mode: RelayMode, url: string, headers: IncomingHttpHeaders, socketIp: string, raw: Buffer, res: HttpResponse): void => {
    const id = newRequestId();
    if (closing) {
      res.setHeader('Connection', 'close');
      return sendRelayError(res, new RelayError(503, 'the gateway is shutting down; retry the request', 'new_api_error', 'shutting_down'), id, headers.origin);
    }
    decode(headers['content-encoding'], raw, (err, body) => {
      if (err) return sendRelayError(res, new RelayError(400, `invalid ${headers['content-encoding']} request body`), id, headers.origin);
      // the few request/reply members the engine uses
      const freq = { id, headers, url, ip: clientIpOf(socketIp, headers['x-forwarded-for'] as string | undefined, trusted), body, params: {} } as unknown as FastifyRequest;
      const freply = { raw: res, hijack() {} } as unknown as FastifyReply;
      relayJson(svc, ctx, freq, freply, { mode }).catch((e) => {
        ctx.log.error({ err: e, reqId: id }, 'relay failed');
        if (!res.headersSent) sendRelayError(res, new RelayError(500, 'internal error'), id, headers.origin);
        else res.destroy();
      });
    });
  };

  if (ctx.config.leanHttp) {
    LeanHttpFront.install(server, {
      isRoute: (url) => Object.hasOwn(routes, url),
      bodyLimit: BODY_LIMIT,
      handle: (req, res) => serve(routes[req.url], req.url, req.headers, req.socket.remoteAddress ?? '', req.body, res),
      stopping: () => closing,
    });
  }
  app.addHook('preClose', async () => {
    closing = true;
  });

  server.removeListener('request', fastify);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const mode = req.method === 'POST' && Object.hasOwn(routes, req.url ?? '') ? routes[req.url!] : undefined;
    if (!mode) return fastify(req, res);
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > BODY_LIMIT) tooLarge = true;
      else chunks.push(c);
    });
    req.on('error', () => res.destroy());
    req.on('end', () => {
      if (tooLarge) return sendRelayError(res, new RelayError(413, 'Request body is too large'), newRequestId(), req.headers.origin);
      serve(mode, req.url!, req.headers, req.socket.remoteAddress ?? '', chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), res);
    });
  });
}
