// A tiny HTTP CONNECT proxy on 127.0.0.1 for the tests of channel proxies over websockets (transport-websocket,
// realtime): each CONNECT's target and Proxy-Authorization recorded, the tunnel piped both ways.
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';

export interface ConnectProxy {
  url: string;
  port: number;
  tunnels: { target: string; auth?: string }[];
  close(): Promise<void>;
}

/** A tiny HTTP CONNECT proxy: records each CONNECT (target and Proxy-Authorization) and pipes the tunnel. */
export async function startConnectProxy(): Promise<ConnectProxy> {
  const tunnels: { target: string; auth?: string }[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((_req, res) => res.writeHead(405).end());
  server.on('connect', (req: http.IncomingMessage, client: Socket, head: Buffer) => {
    tunnels.push({ target: req.url ?? '', auth: req.headers['proxy-authorization'] });
    const [host, port] = (req.url ?? '').split(':');
    const upstream = net.connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined);
      s.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as AddressInfo).port;
  const close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  };
  return { url: `http://127.0.0.1:${port}`, port, tunnels, close };
}
