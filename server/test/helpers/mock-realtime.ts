// A realtime upstream on 127.0.0.1 (an ephemeral port) that checks the handshake as the vendor does and refuses with
// 401 what it would refuse: OpenAI's `/v1/realtime?model=` with `Authorization: Bearer <key>` and
// `OpenAI-Beta: realtime=v1`, or exactly the subprotocols `realtime`, `openai-insecure-api-key.<key>`,
// `openai-beta.realtime-v1` in that order; Azure's `/openai/realtime?deployment=&api-version=` with `api-key`. It answers
// `session.created`, `session.updated` to a `session.update`, and each `response.create` with `response.created`, a
// text delta and `response.done` carrying the next usage the test queued (or nothing, for a turn that never ends).
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface RealtimeUsageSpec {
  input_tokens: number;
  output_tokens: number;
  input_token_details: {
    text_tokens: number;
    audio_tokens: number;
    cached_tokens: number;
    cached_tokens_details?: { text_tokens: number; audio_tokens: number };
  };
  output_token_details: { text_tokens: number; audio_tokens: number };
}

/** a Sec-WebSocket-Protocol header's list, in order, as `a,b,c` (RFC 6455 allows spaces after the commas) */
export function protocolList(header: string | undefined): string {
  return (header ?? '')
    .split(',')
    .map((p) => p.trim())
    .join(',');
}

export interface Handshake {
  path: string;
  headers: http.IncomingHttpHeaders;
}

export class MockRealtime {
  readonly handshakes: Handshake[] = [];
  /** client events received, parsed, over every connection */
  readonly events: Array<{ type: string; [k: string]: unknown }> = [];
  /** usages of the next response.done events, in order; `null`: that turn never ends */
  turns: Array<RealtimeUsageSpec | null> = [];
  refused = 0;
  private readonly sockets = new Set<Socket>();
  private readonly open = new Set<WebSocket>();
  private seq = 0;

  private constructor(
    private readonly server: http.Server,
    readonly port: number,
    /** the channel key it accepts */
    readonly key: string,
    readonly azure: boolean,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static async start(key: string, o: { azure?: boolean } = {}): Promise<MockRealtime> {
    const server = http.createServer((_req, res) => res.writeHead(426).end());
    const wss = new WebSocketServer({
      noServer: true,
      handleProtocols: (p) => (p.has('realtime') ? 'realtime' : false),
    });
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const self = new MockRealtime(server, (server.address() as AddressInfo).port, key, o.azure === true);
    server.on('connection', (s: Socket) => {
      self.sockets.add(s);
      s.on('close', () => self.sockets.delete(s));
    });
    server.on('upgrade', (req, socket, head) => {
      self.handshakes.push({ path: req.url ?? '', headers: req.headers });
      const why = self.refusal(req);
      if (why) {
        self.refused++;
        const body = JSON.stringify({
          error: { message: why, type: 'invalid_request_error', code: 'invalid_api_key' },
        });
        socket.end(
          `HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n` +
            `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        );
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => self.serve(ws, req));
    });
    return self;
  }

  /** why the vendor would refuse this handshake, or null */
  private refusal(req: http.IncomingMessage): string | null {
    const u = new URL(req.url ?? '', 'http://x');
    if (this.azure) {
      if (u.pathname !== '/openai/realtime') return `no such path ${u.pathname}`;
      if (!u.searchParams.get('api-version') || !u.searchParams.get('deployment')) return 'api-version and deployment';
      return req.headers['api-key'] === this.key ? null : 'Access denied due to invalid subscription key';
    }
    if (u.pathname !== '/v1/realtime' || !u.searchParams.get('model')) return `bad realtime URL ${req.url}`;
    const protocols = req.headers['sec-websocket-protocol'];
    if (protocols !== undefined)
      return protocolList(protocols) === `realtime,openai-insecure-api-key.${this.key},openai-beta.realtime-v1`
        ? null
        : 'Incorrect API key provided (subprotocols)';
    if (req.headers.authorization !== `Bearer ${this.key}`) return 'Incorrect API key provided';
    if (req.headers['openai-beta'] !== 'realtime=v1') return 'missing OpenAI-Beta: realtime=v1';
    return null;
  }

  private send(ws: WebSocket, ev: Record<string, unknown>): void {
    ws.send(JSON.stringify({ event_id: `event_${++this.seq}`, ...ev }));
  }

  private serve(ws: WebSocket, req: http.IncomingMessage): void {
    this.open.add(ws);
    ws.on('close', () => this.open.delete(ws));
    const u = new URL(req.url ?? '', 'http://x');
    const model = u.searchParams.get('model') ?? u.searchParams.get('deployment');
    this.send(ws, { type: 'session.created', session: { id: `sess_${this.seq}`, object: 'realtime.session', model } });
    ws.on('message', (data: Buffer) => {
      const ev = JSON.parse(data.toString('utf8')) as { type: string; session?: unknown };
      this.events.push(ev);
      if (ev.type === 'session.update') this.send(ws, { type: 'session.updated', session: ev.session });
      if (ev.type !== 'response.create') return;
      const id = `resp_${this.seq}`;
      this.send(ws, { type: 'response.created', response: { id, object: 'realtime.response', status: 'in_progress' } });
      this.send(ws, { type: 'response.text.delta', response_id: id, item_id: 'item_1', delta: 'hi' });
      const usage = this.turns.shift();
      if (!usage) return;
      this.send(ws, {
        type: 'response.done',
        response: {
          id,
          object: 'realtime.response',
          status: 'completed',
          output: [],
          usage: { total_tokens: usage.input_tokens + usage.output_tokens, ...usage },
        },
      });
    });
  }

  /** client events of a type received so far */
  count(type: string): number {
    return this.events.filter((e) => e.type === type).length;
  }

  async close(): Promise<void> {
    for (const ws of this.open) ws.terminate();
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}
