// A TCP tunnel through a channel's `setting.proxy` for the upstream websockets (transport/websocket.ts): undici's
// proxy agents tunnel the HTTP requests, but they hand out no raw socket, and a websocket needs one. http:// and
// https:// proxies are asked with CONNECT (the URL's credentials in Proxy-Authorization, as undici sends them);
// socks5:// and socks5h:// proxies through the `socks` package (the URL's credentials as SOCKS5 username/password),
// imported with the first such tunnel.
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect as netConnect, isIPv6, type Socket } from 'node:net';

/** Whether `proxy` is an HTTP CONNECT proxy (http:// or https://). */
export function isConnectProxy(proxy: string): boolean {
  return /^https?:\/\//i.test(proxy);
}

/** Whether `proxy` is a SOCKS5 proxy (socks5:// or socks5h://, the schemes the HTTP transport accepts). */
export function isSocksProxy(proxy: string): boolean {
  return /^socks5h?:\/\//i.test(proxy);
}

/** `host:port` as CONNECT's target, an IPv6 address in brackets */
const authority = (host: string, port: number) => `${isIPv6(host) ? `[${host}]` : host}:${port}`;

/** Opens a tunnel to host:port through the proxy; the socket carries the target's bytes (TLS is the caller's). */
export function connectTunnel(proxy: string, host: string, port: number, signal?: AbortSignal): Promise<Socket> {
  let u: URL;
  try {
    u = new URL(proxy);
  } catch {
    return Promise.reject(new Error(`invalid proxy URL ${proxy}`));
  }
  if (isSocksProxy(proxy)) return socksTunnel(u, host, port, signal);
  if (!isConnectProxy(proxy))
    return Promise.reject(new Error(`websockets go through http(s) or socks5 proxies only, not ${u.protocol}`));
  const target = authority(host, port);
  const headers: Record<string, string> = { host: target };
  if (u.username || u.password) {
    const user = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
    headers['proxy-authorization'] = `Basic ${Buffer.from(user).toString('base64')}`;
  }
  const secure = u.protocol === 'https:';
  return new Promise<Socket>((resolve, reject) => {
    const req: ClientRequest = (secure ? httpsRequest : httpRequest)({
      method: 'CONNECT',
      host: u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname,
      port: Number(u.port) || (secure ? 443 : 80),
      path: target,
      headers,
      signal,
      agent: false,
    });
    req.once('connect', (res: IncomingMessage, socket: Socket, head: Buffer) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        reject(new Error(`proxy answered ${res.statusCode} to CONNECT ${target}`));
        return;
      }
      // bytes the target sent right after the proxy's answer belong to the tunnel's reader
      if (head.length) socket.unshift(head);
      resolve(socket);
    });
    req.once('error', reject);
    req.end();
  });
}

/** the proxy's own TCP connection, destroyed when `signal` aborts (the SOCKS handshake then fails with it) */
function proxyConnection(host: string, port: number, signal?: AbortSignal): Promise<Socket> {
  return new Promise<Socket>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const socket = netConnect({ host, port });
    const abort = () => socket.destroy(signal?.reason as Error);
    signal?.addEventListener('abort', abort, { once: true });
    socket.once('connect', () => {
      signal?.removeEventListener('abort', abort);
      resolve(socket);
    });
    socket.once('error', (err) => {
      signal?.removeEventListener('abort', abort);
      reject(err);
    });
  });
}

/** Opens a tunnel through a SOCKS5 proxy: the connection is ours (so `signal` can end it), the handshake the package's. */
async function socksTunnel(u: URL, host: string, port: number, signal?: AbortSignal): Promise<Socket> {
  const proxyHost = u.hostname.startsWith('[') ? u.hostname.slice(1, -1) : u.hostname;
  const proxyPort = Number(u.port) || 1080;
  const existing = await proxyConnection(proxyHost, proxyPort, signal);
  const abort = () => existing.destroy(signal?.reason as Error);
  signal?.addEventListener('abort', abort, { once: true });
  try {
    const { SocksClient } = await import('socks');
    const { socket } = await SocksClient.createConnection({
      proxy: {
        host: proxyHost,
        port: proxyPort,
        type: 5,
        ...(u.username || u.password
          ? { userId: decodeURIComponent(u.username), password: decodeURIComponent(u.password) }
          : {}),
      },
      command: 'connect',
      destination: { host, port },
      existing_socket: existing,
    });
    return socket;
  } catch (err) {
    existing.destroy();
    // an abort ends the handshake with a closed socket: the abort's reason is the error to report
    throw signal?.aborted ? (signal.reason as Error) : err;
  } finally {
    signal?.removeEventListener('abort', abort);
  }
}
