// A local stand-in for a wechat-server on 127.0.0.1: GET /api/wechat/user?code= with the token in Authorization
// answers `{success, message, data: <wechat id>}` for a code it issued (once), new-api's shape. It can hold answers
// until several requests are in (to make callbacks race) and can answer with a redirect (never to be followed).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

export const WECHAT_SERVER_TOKEN = 'wechat-server-token';

export interface MockWechatServer {
  url: string;
  /** A code the server accepts once for the WeChat id. */
  issueCode(wechatId: string): string;
  /** the Authorization headers the user endpoint received */
  authorizations: string[];
  /** requests that followed a redirect (must stay empty) */
  redirectHits: number;
  /** 'json' (default), 'redirect' (302 elsewhere) or 'html' (no JSON) */
  mode: 'json' | 'redirect' | 'html';
  /** hold answers until this many user requests arrived (0: answer at once) */
  holdUntil: number;
  close(): Promise<void>;
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

export async function startMockWechatServer(): Promise<MockWechatServer> {
  const codes = new Map<string, string>();
  let waiting: Array<() => void> = [];

  const answer = (url: URL, req: http.IncomingMessage, res: http.ServerResponse) => {
    mock.authorizations.push(req.headers.authorization ?? '');
    if (mock.mode === 'redirect') {
      res.writeHead(302, { location: `${mock.url}/elsewhere` });
      return res.end();
    }
    if (mock.mode === 'html') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end('<html>maintenance</html>');
    }
    if (req.headers.authorization !== WECHAT_SERVER_TOKEN)
      return send(res, 200, { success: false, message: '无权进行此操作，未登录或 token 无效', data: '' });
    const code = url.searchParams.get('code') ?? '';
    const id = codes.get(code);
    if (!id) return send(res, 200, { success: false, message: '验证码错误或已过期', data: '' });
    codes.delete(code);
    return send(res, 200, { success: true, message: '', data: id });
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/elsewhere') {
      mock.redirectHits += 1;
      return send(res, 200, { success: true, message: '', data: 'followed-a-redirect' });
    }
    if (req.method !== 'GET' || url.pathname !== '/api/wechat/user') return send(res, 404, { message: 'not found' });
    if (mock.holdUntil > 0) {
      waiting.push(() => answer(url, req, res));
      if (waiting.length >= mock.holdUntil) {
        const release = waiting;
        waiting = [];
        mock.holdUntil = 0;
        for (const go of release) go();
      }
      return;
    }
    answer(url, req, res);
  });

  const mock: MockWechatServer = {
    url: '',
    authorizations: [],
    redirectHits: 0,
    mode: 'json',
    holdUntil: 0,
    issueCode(wechatId) {
      const code = randomBytes(4).toString('hex');
      codes.set(code, wechatId);
      return code;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  mock.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return mock;
}
