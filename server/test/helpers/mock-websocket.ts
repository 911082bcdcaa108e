// A websocket upstream on 127.0.0.1 (an ephemeral port) for the websocket transport's tests and the providers that
// will speak websockets (Spark, realtime): it records every connection (its handshake headers, the frames it got, how
// it closed) and hands each to a handler the test chooses. A refusal (a status other than 101) can be answered too.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

export interface MockConnection {
  ws: WebSocket;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** the peer's port as the mock sees it (a proxy's tunnel shows the proxy's outgoing socket) */
  remotePort: number;
  received: { data: Buffer; binary: boolean }[];
  /** resolves with the close code once the connection is gone */
  closed: Promise<number>;
  /** resolves with the next frame received */
  nextFrame(): Promise<{ data: Buffer; binary: boolean }>;
}

export type ConnectionHandler = (c: MockConnection) => unknown;

export class MockWebSocketServer {
  readonly connections: MockConnection[] = [];
  /** TCP connections accepted, handshakes or not */
  tcpConnections = 0;
  /** most websockets open at the same time */
  maxOpen = 0;
  private open = 0;
  private readonly sockets = new Set<Socket>();
  private waiting: ((c: MockConnection) => void)[] = [];
  /** answer handshakes with this status and body instead of upgrading (null: upgrade) */
  refuse: { status: number; body: string } | null = null;

  private constructor(
    private readonly server: http.Server,
    private readonly wss: WebSocketServer,
    readonly port: number,
  ) {}

  get url(): string {
    return `ws://127.0.0.1:${this.port}`;
  }

  static async start(handler: ConnectionHandler = () => undefined): Promise<MockWebSocketServer> {
    const server = http.createServer((_req, res) => res.writeHead(426).end());
    const wss = new WebSocketServer({ noServer: true });
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const self = new MockWebSocketServer(server, wss, (server.address() as AddressInfo).port);
    server.on('connection', (s: Socket) => {
      self.tcpConnections++;
      self.sockets.add(s);
      s.on('close', () => self.sockets.delete(s));
    });
    server.on('upgrade', (req, socket, head) => {
      if (self.refuse) {
        const body = self.refuse.body;
        socket.end(
          `HTTP/1.1 ${self.refuse.status} Refused\r\ncontent-type: application/json\r\n` +
            `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        );
        return;
      }
      wss.handleUpgrade(req, socket, head, (ws) => {
        const frames: { data: Buffer; binary: boolean }[] = [];
        let waiter: ((f: { data: Buffer; binary: boolean }) => void) | null = null;
        const c: MockConnection = {
          ws,
          path: req.url ?? '',
          headers: req.headers,
          remotePort: req.socket.remotePort ?? 0,
          received: frames,
          closed: new Promise((r) => ws.once('close', (code: number) => r(code))),
          nextFrame: () => new Promise((r) => (waiter = r)),
        };
        ws.on('message', (data: Buffer, binary: boolean) => {
          const f = { data, binary };
          frames.push(f);
          const w = waiter;
          waiter = null;
          w?.(f);
        });
        self.open++;
        self.maxOpen = Math.max(self.maxOpen, self.open);
        void c.closed.then(() => self.open--);
        self.connections.push(c);
        for (const w of self.waiting.splice(0)) w(c);
        void Promise.resolve(handler(c)).catch((err: Error) => ws.close(1011, String(err.message).slice(0, 100)));
      });
    });
    return self;
  }

  /** The next connection (or the n-th, counting from 1, if it has come already). */
  connection(n = this.connections.length + 1): Promise<MockConnection> {
    const have = this.connections[n - 1];
    if (have) return Promise.resolve(have);
    return new Promise((resolve) => {
      const check = () => {
        const c = this.connections[n - 1];
        if (c) resolve(c);
        else this.waiting.push(check);
      };
      this.waiting.push(check);
    });
  }

  async close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    for (const s of this.sockets) s.destroy();
    this.wss.close();
    await new Promise((r) => this.server.close(r));
  }
}
