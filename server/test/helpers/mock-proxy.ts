// An HTTP proxy on 127.0.0.1 for the tests of a channel's `setting.proxy`: it tunnels CONNECT and forwards
// absolute-form requests, records what it was asked to reach, and resolves the names in `hosts` itself (a name only
// the proxy knows, so a request that bypasses it cannot reach that upstream at all).
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

export class MockProxy {
  /** what the proxy was asked: `CONNECT host:port` or `METHOD absolute-url` */
  readonly asked: string[] = [];
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  /** `hosts`: a host name the proxy resolves to a local `host:port` of its own */
  static async start(hosts: Record<string, string> = {}): Promise<MockProxy> {
    const server = http.createServer();
    // made once the server listens; its handlers run after that
    let proxy!: MockProxy;
    const target = (host: string, port: string) => (hosts[host] ?? `${host}:${port}`).split(':');
    server.on('connection', (s) => proxy.track(s));
    server.on('request', (req, res) => {
      proxy.asked.push(`${req.method} ${req.url}`);
      const u = new URL(req.url ?? '');
      const [host, port] = target(u.hostname, u.port || '80');
      const fwd = http.request(
        { host, port, path: u.pathname + u.search, method: req.method, headers: req.headers, agent: false },
        (up) => {
          res.writeHead(up.statusCode!, up.headers);
          up.pipe(res);
        },
      );
      fwd.on('error', () => res.destroy());
      req.pipe(fwd);
    });
    server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      proxy.asked.push(`CONNECT ${req.url}`);
      const [name, namePort] = String(req.url).split(':');
      const [host, port] = target(name, namePort);
      const up = net.connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) up.write(head);
        up.pipe(client);
        client.pipe(up);
      });
      proxy.track(up);
      up.on('error', () => client.destroy());
      client.on('error', () => up.destroy());
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    proxy = new MockProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return proxy;
  }

  /** Whether the proxy was asked for `host` (`name:port`): a tunnel to it, or an absolute URL on it. */
  reached(host: string): boolean {
    return this.asked.some((a) => a === `CONNECT ${host}` || a.includes(`//${host}/`));
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }

  private track(s: net.Socket): void {
    this.sockets.add(s);
    s.on('close', () => this.sockets.delete(s));
  }
}
