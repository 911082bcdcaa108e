// A stand-in for an operator's own OAuth 2.0 / OpenID provider on 127.0.0.1: a discovery document, a token endpoint
// that insists on its client credentials (in the form body or HTTP Basic, as the test configures) and on a code it
// issued, once, and a user-info endpoint that insists on the Bearer token it gave out and answers whatever JSON the
// test chose for that code (nested, to exercise the dotted field paths).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

export const CUSTOM_CLIENT = { id: 'gw-client', secret: 'gw-secret' };

export interface MockCustomOAuth {
  url: string;
  port: number;
  /** where the client credentials must arrive */
  credentialsIn: 'body' | 'basic';
  /** A code the provider accepts once, standing for the given user-info answer. */
  issueCode(userInfo: Record<string, unknown>): string;
  /** what the token endpoint received */
  tokenRequests: Array<{ body: Record<string, string>; authorization?: string }>;
  close(): Promise<void>;
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

export async function startMockCustomOAuth(): Promise<MockCustomOAuth> {
  const codes = new Map<string, Record<string, unknown>>();
  const tokens = new Map<string, Record<string, unknown>>();
  let base = '';

  const credentials = (req: http.IncomingMessage, body: Record<string, string>) => {
    if (mock.credentialsIn === 'body') return { id: body.client_id, secret: body.client_secret };
    const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const [id, secret] = Buffer.from(basic, 'base64').toString('utf8').split(':').map(decodeURIComponent);
    return { id, secret };
  };

  const token = (req: http.IncomingMessage, raw: string, res: http.ServerResponse) => {
    const body = Object.fromEntries(new URLSearchParams(raw));
    mock.tokenRequests.push({ body, authorization: req.headers.authorization });
    const { id, secret } = credentials(req, body);
    if (id !== CUSTOM_CLIENT.id || secret !== CUSTOM_CLIENT.secret) return send(res, 401, { error: 'invalid_client' });
    if (body.grant_type !== 'authorization_code') return send(res, 400, { error: 'unsupported_grant_type' });
    const info = codes.get(body.code ?? '');
    if (!info) return send(res, 400, { error: 'invalid_grant' });
    codes.delete(body.code);
    const accessToken = randomBytes(16).toString('hex');
    tokens.set(accessToken, info);
    return send(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: 3600 });
  };

  const userInfo = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const info = tokens.get(bearer);
    if (!info) return send(res, 401, { error: 'invalid_token' });
    return send(res, 200, info);
  };

  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(parts).toString('utf8');
      const route = `${req.method} ${(req.url ?? '').split('?')[0]}`;
      switch (route) {
        case 'GET /.well-known/openid-configuration':
          return send(res, 200, {
            issuer: base,
            authorization_endpoint: `${base}/authorize`,
            token_endpoint: `${base}/token`,
            userinfo_endpoint: `${base}/userinfo`,
            scopes_supported: ['openid', 'profile', 'email'],
          });
        case 'GET /broken/.well-known/openid-configuration':
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end('{not json');
        case 'POST /token':
          return token(req, raw, res);
        case 'GET /userinfo':
          return userInfo(req, res);
        default:
          return send(res, 404, { error: 'not_found' });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  const mock: MockCustomOAuth = {
    url: base,
    port,
    credentialsIn: 'body',
    tokenRequests: [],
    issueCode(info) {
      const code = randomBytes(10).toString('hex');
      codes.set(code, info);
      return code;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  return mock;
}
