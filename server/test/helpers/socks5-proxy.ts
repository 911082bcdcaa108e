// A small SOCKS5 proxy on 127.0.0.1 (RFC 1928 CONNECT, RFC 1929 username/password) for the tests of channel proxies
// over websockets: it refuses a client that offers no method it requires (credentials when `auth` is set), records
// each CONNECT's target and the credentials it was given, and pipes the tunnel both ways.
import net, { type AddressInfo, type Socket } from 'node:net';

export interface Socks5Proxy {
  url: string;
  port: number;
  tunnels: { target: string; user?: string; password?: string }[];
  close(): Promise<void>;
}

/** Reads exactly `n` bytes from the socket's stream (the handshake's fields arrive in any chunking). */
function reader(socket: Socket): (n: number) => Promise<Buffer> {
  let buffered = Buffer.alloc(0);
  let want: { n: number; resolve: (b: Buffer) => void } | null = null;
  const flush = () => {
    if (want && buffered.length >= want.n) {
      const out = buffered.subarray(0, want.n);
      buffered = buffered.subarray(want.n);
      const w = want;
      want = null;
      w.resolve(out);
    }
  };
  const onData = (b: Buffer) => {
    buffered = Buffer.concat([buffered, b]);
    flush();
  };
  socket.on('data', onData);
  return (n) =>
    new Promise((resolve) => {
      want = { n, resolve };
      flush();
    });
}

/** The target of a CONNECT request (address type 1 IPv4, 3 domain name, 4 IPv6). */
async function readTarget(read: (n: number) => Promise<Buffer>): Promise<{ host: string; port: number }> {
  const [, , , atyp] = await read(4);
  let host: string;
  if (atyp === 1) host = [...(await read(4))].join('.');
  else if (atyp === 3) host = (await read((await read(1))[0])).toString();
  else {
    const b = await read(16);
    host = Array.from({ length: 8 }, (_, i) => b.readUInt16BE(i * 2).toString(16)).join(':');
  }
  return { host, port: (await read(2)).readUInt16BE(0) };
}

/** `auth`: the username and password the proxy requires (method 2); none: it accepts no-auth (method 0). */
export async function startSocks5Proxy(auth?: { user: string; password: string }): Promise<Socks5Proxy> {
  const tunnels: Socks5Proxy['tunnels'] = [];
  const sockets = new Set<Socket>();
  const server = net.createServer((client) => {
    sockets.add(client);
    client.on('error', () => undefined);
    void (async () => {
      const read = reader(client);
      const [version, count] = await read(2);
      const methods = [...(await read(count))];
      const method = auth ? 2 : 0;
      if (version !== 5 || !methods.includes(method)) return client.end(Buffer.from([5, 0xff]));
      client.write(Buffer.from([5, method]));
      const given: { user?: string; password?: string } = {};
      if (auth) {
        await read(1); // the sub-negotiation's version (1)
        given.user = (await read((await read(1))[0])).toString();
        given.password = (await read((await read(1))[0])).toString();
        const ok = given.user === auth.user && given.password === auth.password;
        client.write(Buffer.from([1, ok ? 0 : 1]));
        if (!ok) return client.end();
      }
      const { host, port } = await readTarget(read);
      tunnels.push({ target: `${host}:${port}`, ...given });
      client.removeAllListeners('data');
      const upstream = net.connect(port, host, () => {
        // succeeded, bound to 0.0.0.0:0 (the client does not use it)
        client.write(Buffer.from([5, 0, 0, 1, 0, 0, 0, 0, 0, 0]));
        upstream.pipe(client);
        client.pipe(upstream);
      });
      sockets.add(upstream);
      upstream.on('error', () => client.end(Buffer.from([5, 5, 0, 1, 0, 0, 0, 0, 0, 0])));
      for (const s of [client, upstream])
        s.on('close', () => {
          client.destroy();
          upstream.destroy();
        });
    })();
  });
  server.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as AddressInfo).port;
  const close = async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
  };
  return { url: `socks5://127.0.0.1:${port}`, port, tunnels, close };
}
