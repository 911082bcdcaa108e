// GET /v1/realtime?model= upgraded to a websocket (vendors-and-tasks.md §4). Everything is decided before the client's
// upgrade completes, from the request's head: the key (a Bearer header, or the `openai-insecure-api-key.<key>`
// subprotocol the official browser clients send), the token's model limits, group, IP list and the model rate limit,
// the channel, the usage limits, one turn's reservation and the upstream's own handshake (through the channel's proxy,
// transport/websocket.ts). Any refusal is an HTTP answer in OpenAI's error shape, without upgrading. Then the session
// (session.ts) relays frames and bills once. `ws` is imported with the first realtime request: the relay's start does
// not load it. Sessions are counted in /metrics and ended (close 1001, then settled) when the gateway stops.
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { WebSocketServer } from 'ws';
import type { AppContext } from '../../context.js';
import { clientIpOf, proxyTrust } from '../../lib/ip-match.js';
import { newRequestId } from '../../lib/request-id.js';
import { keyedChannel } from '../../services/multi-key-pick.js';
import { preConsumeQuota } from '../../services/pricing/index.js';
import { tokenAuth, type RelayCaller } from '../auth.js';
import { proxyOf } from '../channel-setting.js';
import { asRelayError, RelayError, sendRelayError } from '../errors.js';
import type { RelayMode } from '../modes/mode.js';
import { admit } from '../pipeline/admit.js';
import { authenticate } from '../pipeline/authenticate.js';
import { holdChannel } from '../pipeline/channel-cap.js';
import { limit, releaseLimits } from '../pipeline/limit.js';
import { observe } from '../pipeline/observe.js';
import { price } from '../pipeline/price.js';
import { reserve } from '../pipeline/reserve.js';
import { route } from '../pipeline/route.js';
import { refund } from '../pipeline/settle.js';
import { newState, type RelayState } from '../pipeline/state.js';
import type { RelayServices } from '../services.js';
import { UpgradeRefusedError, type UpstreamSocket } from '../transport/websocket.js';
import { GOING_AWAY, RealtimeSession } from './session.js';
import { realtimeTarget, speaksRealtime } from './upstream.js';

const none = () => ({ text: '', toolCalls: 0 });

/** The pipeline's mode of a realtime session: no body; the model comes from the query. */
const REALTIME_MODE: RelayMode = {
  name: 'realtime',
  endpoint: 'realtime',
  canStream: true,
  validate: (body) => (body.model ? null : 'model is required'),
  promptTokens: () => 0,
  responseText: none,
  chunkText: none,
};

const KEY_PROTOCOL = 'openai-insecure-api-key.';
/** the largest client frame taken (audio is sent in appends of a few hundred kB) */
const MAX_FRAME = 16 * 1024 * 1024;

/** The key from the subprotocols when no Authorization header names one (browsers cannot set headers). */
function protocolKey(req: IncomingMessage): string {
  const list = req.headers['sec-websocket-protocol'];
  if (typeof list !== 'string') return '';
  for (const p of list.split(',')) {
    const t = p.trim();
    if (t.startsWith(KEY_PROTOCOL)) return t.slice(KEY_PROTOCOL.length);
  }
  return '';
}

/** What `ws` would refuse in the client's handshake, found before anything is reserved (ws then never calls back). */
function handshakeError(req: IncomingMessage): RelayError | null {
  const key = req.headers['sec-websocket-key'];
  const version = req.headers['sec-websocket-version'];
  if (
    req.method !== 'GET' ||
    req.headers.upgrade?.toLowerCase() !== 'websocket' ||
    typeof key !== 'string' ||
    !/^[+/0-9A-Za-z]{22}==$/.test(key.trim()) ||
    (version !== '13' && version !== '8')
  )
    return new RelayError(400, 'invalid websocket handshake', 'invalid_request_error');
  return null;
}

/** An HTTP answer on the socket of an upgrade request that is refused; the socket is then closed. */
function answerOnSocket(req: IncomingMessage, socket: Duplex, err: RelayError, reqId: string): void {
  if (socket.destroyed) return;
  const res = new ServerResponse(req);
  res.shouldKeepAlive = false;
  res.assignSocket(socket as never);
  res.once('finish', () => socket.destroy());
  sendRelayError(res, err, reqId, req.headers);
}

export function installRealtime(app: FastifyInstance, ctx: AppContext, svc: RelayServices): void {
  const sessions = new Set<RealtimeSession>();
  const trusted = proxyTrust(ctx.config.trustedProxies);
  let server: Promise<WebSocketServer> | null = null;
  let closing = false;
  // `ws` on the first realtime request only
  const wsServer = () =>
    (server ??= import('ws').then(
      ({ WebSocketServer }) =>
        new WebSocketServer({
          noServer: true,
          perMessageDeflate: false,
          maxPayload: MAX_FRAME,
          // new-api answers with the `realtime` subprotocol when the client offers it
          handleProtocols: (offered) => (offered.has('realtime') ? 'realtime' : false),
        }),
    ));

  // without an upgrade there is nothing to relay
  app.get('/v1/realtime', (req, reply) => {
    reply.hijack();
    const err = new RelayError(426, 'websocket upgrade required', 'invalid_request_error');
    sendRelayError(reply.raw, err, req.id, req.headers);
  });

  app.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const reqId = newRequestId();
    const path = (req.url ?? '').split('?')[0];
    if (path !== '/v1/realtime') {
      return answerOnSocket(req, socket, new RelayError(404, `Invalid URL (${req.method} ${path})`), reqId);
    }
    if (closing) return answerOnSocket(req, socket, new RelayError(503, 'the gateway is stopping'), reqId);
    const p = open(req, socket, head, reqId).catch((err) => ctx.log.error({ err, reqId }, 'realtime failed'));
    svc.inFlight.add(p);
    void p.finally(() => svc.inFlight.delete(p));
  });

  // preClose: before Fastify waits for the connections; an upgraded socket is no longer the HTTP server's to close
  app.addHook('preClose', async () => {
    closing = true;
    for (const s of sessions) s.end(GOING_AWAY, 'the gateway is stopping');
    await Promise.all([...sessions].map((s) => s.done));
    const wss = await server;
    wss?.close();
  });

  async function open(req: IncomingMessage, socket: Duplex, head: Buffer, reqId: string): Promise<void> {
    const byProtocols = !req.headers.authorization && protocolKey(req) !== '';
    const headers = byProtocols ? { ...req.headers, authorization: `Bearer ${protocolKey(req)}` } : req.headers;
    const url = req.url ?? '';
    const ip = clientIpOf(
      req.socket.remoteAddress ?? '',
      req.headers['x-forwarded-for'] as string | undefined,
      trusted,
    );
    const handshake = handshakeError(req);
    if (handshake) return answerOnSocket(req, socket, handshake, reqId);
    // the key before anything else, as on every relay route (admit.ts)
    let caller: RelayCaller;
    try {
      const c = tokenAuth(ctx, svc, headers, url);
      caller = c instanceof Promise ? await c : c;
    } catch (err) {
      return answerOnSocket(req, socket, asRelayError(err), reqId);
    }
    // the session answers on its websocket: the state's HTTP answer is only written by answerOnSocket
    const s = newState(
      svc,
      ctx,
      { id: reqId, url, headers, ip, body: Buffer.alloc(0), caller, sessionUserId: 0 },
      new ServerResponse(req),
      { mode: REALTIME_MODE },
    );
    const departed = new AbortController();
    const onGone = () => departed.abort();
    socket.once('close', onGone);
    let status = 101;
    let upstream: UpstreamSocket | null = null;
    try {
      await authenticate(s);
      s.model = new URLSearchParams(url.includes('?') ? url.slice(url.indexOf('?') + 1) : '').get('model') ?? '';
      s.body = { model: s.model };
      await admit(s);
      route(s);
      if (!speaksRealtime(s.channel.type))
        throw new RelayError(400, `channel type ${s.channel.type} does not support realtime`, 'new_api_error');
      price(s);
      // one turn's reservation, held above the completed turns' price for the whole session
      s.reserveAmount = preConsumeQuota(s.price, 0, undefined, ctx.options);
      const limited = limit(s);
      if (limited) await limited;
      const held = holdChannel(s);
      if (held) await held;
      // wallet only: a session's turns grow its reservation on the wallet (docs/new-api-compat.md §33)
      await reserve(s, false);
      if (!s.reservation) await s.reserving;
      let keyed = keyedChannel(ctx, s.channel);
      if (keyed instanceof Promise) keyed = await keyed;
      if (!keyed) throw new RelayError(503, `当前分组 ${s.group} 下对于模型 ${s.model} 无可用渠道`);
      const channel = keyed;
      s.used.push(channel.id);
      const mapped = channel.modelMapping?.[s.model];
      const upstreamModel = typeof mapped === 'string' && mapped ? mapped : s.model;
      const target = realtimeTarget(channel, upstreamModel, byProtocols, ctx.config.azureDefaultApiVersion);
      upstream = await openUpstream(s, target, proxyOf(channel), departed.signal);
      if (socket.destroyed) throw new RelayError(499, 'the client went away');
      const wss = await wsServer();
      const up = upstream;
      // the client may leave meanwhile: ws then never calls back
      const client = await new Promise<import('ws').WebSocket>((resolve, reject) => {
        const gone = () => reject(new RelayError(499, 'the client went away'));
        socket.once('close', gone);
        wss.handleUpgrade(req, socket, head, (ws) => {
          socket.off('close', gone);
          resolve(ws);
        });
      });
      socket.off('close', onGone);
      const session = new RealtimeSession(s, client, up, channel, upstreamModel, s.reserveAmount);
      sessions.add(session);
      session.start();
      await session.done;
      sessions.delete(session);
    } catch (err) {
      upstream?.destroy();
      if (!s.reservation && s.reserving) await s.reserving.catch(() => null);
      if (s.reservation) await refund(s, s.reservation);
      await releaseLimits(s);
      const answer = asRelayError(err);
      if (!(err instanceof RelayError)) ctx.log.error({ err, reqId }, 'realtime failed');
      status = answer.status;
      answerOnSocket(req, socket, answer, reqId);
    } finally {
      socket.off('close', onGone);
      observe(s, status);
    }
  }
}

/** The upstream's websocket; its refusal becomes the client's error (its auth failure is the gateway's 502). */
async function openUpstream(
  s: RelayState,
  target: ReturnType<typeof realtimeTarget>,
  proxy: string | null,
  signal: AbortSignal,
): Promise<UpstreamSocket> {
  try {
    return await s.svc.websockets.open({
      url: target.url,
      headers: target.headers,
      protocols: target.protocols,
      proxy,
      headersTimeout: s.ctx.config.relayTimeoutSec * 1000,
      // a session may be silent for minutes between turns
      bodyTimeout: 0,
      signal,
    });
  } catch (e) {
    if (signal.aborted) throw new RelayError(499, 'the client went away');
    if (e instanceof UpgradeRefusedError) {
      const passed = e.status >= 400 && e.status < 500 && ![401, 403, 429].includes(e.status);
      const text = e.body.toString('utf8').slice(0, 500);
      throw new RelayError(passed ? e.status : 502, `上游请求失败: ${text || e.status}`, 'upstream_error', null, false);
    }
    throw new RelayError(502, `上游请求失败: ${(e as Error).message}`, 'upstream_error', 'do_request_failed', false);
  }
}
