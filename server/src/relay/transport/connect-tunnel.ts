// A TCP tunnel through an HTTP CONNECT proxy (a channel's `setting.proxy`, http:// or https://), for the upstream
// websockets (transport/websocket.ts): undici's ProxyAgent tunnels the HTTP requests, but it hands out no raw socket,
// and a websocket needs one. The proxy's credentials in its URL go in Proxy-Authorization, as undici sends them.
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIPv6, type Socket } from 'node:net';

/** Whether `proxy` is one this module can tunnel through (socks5 proxies are undici's alone: not for websockets). */
export function isConnectProxy(proxy: string): boolean {
  return /^https?:\/\//i.test(proxy);
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
  if (!isConnectProxy(proxy))
    return Promise.reject(new Error(`websockets go through http(s) proxies only, not ${u.protocol}`));
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
