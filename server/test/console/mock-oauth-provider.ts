// Local stand-ins for GitHub, Linux DO, Discord and an OpenID Connect provider on 127.0.0.1, answering in each
// vendor's documented OAuth2 shapes: the token endpoints insist on the client credentials (in the body, or HTTP Basic
// for Linux DO) and a code they issued, once; the user endpoints insist on the Bearer token they gave out.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

export type Vendor = 'github' | 'linuxdo' | 'discord' | 'oidc';

export const CLIENTS: Record<Vendor, { id: string; secret: string }> = {
  github: { id: 'Iv1.gh-client', secret: 'gh-secret' },
  linuxdo: { id: 'ld-client', secret: 'ld-secret' },
  discord: { id: '1100000000000000001', secret: 'dc-secret' },
  oidc: { id: 'oidc-client', secret: 'oidc-secret' },
};

export interface MockOAuthProvider {
  url: string;
  /** A code the provider will accept once for `vendor`, standing for the given user-info answer. */
  issueCode(vendor: Vendor, userInfo: Record<string, unknown>): string;
  /** the bodies (and Authorization headers) the token endpoints received */
  tokenRequests: Array<{ vendor: Vendor; body: Record<string, string>; authorization?: string }>;
  /** whether the discovery document answers (false: 404) */
  discoveryUp: boolean;
  /** how many times the OIDC discovery document was asked for */
  discoveryRequests: number;
  close(): Promise<void>;
}

function readForm(raw: string, type: string | undefined): Record<string, string> {
  if (type?.includes('application/json')) {
    try {
      return JSON.parse(raw) as Record<string, string>;
    } catch {
      return {};
    }
  }
  return Object.fromEntries(new URLSearchParams(raw));
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

export async function startMockOAuthProvider(): Promise<MockOAuthProvider> {
  const codes = new Map<string, { vendor: Vendor; userInfo: Record<string, unknown> }>();
  const tokens = new Map<string, { vendor: Vendor; userInfo: Record<string, unknown> }>();
  const tokenRequests: MockOAuthProvider['tokenRequests'] = [];
  let base = '';

  const tokenEndpoint = (vendor: Vendor, req: http.IncomingMessage, raw: string, res: http.ServerResponse) => {
    const body = readForm(raw, req.headers['content-type']);
    tokenRequests.push({ vendor, body, authorization: req.headers.authorization });
    let id = body.client_id;
    let secret = body.client_secret;
    if (vendor === 'linuxdo') {
      const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      [id, secret] = Buffer.from(basic, 'base64').toString('utf8').split(':');
    }
    const client = CLIENTS[vendor];
    const grant = codes.get(body.code ?? '');
    if (id !== client.id || secret !== client.secret) {
      // GitHub answers its OAuth errors with 200 and an `error` field
      if (vendor === 'github') return send(res, 200, { error: 'incorrect_client_credentials' });
      return send(res, 401, { error: 'invalid_client' });
    }
    if (!grant || grant.vendor !== vendor) {
      if (vendor === 'github')
        return send(res, 200, {
          error: 'bad_verification_code',
          error_description: 'The code passed is incorrect or expired.',
        });
      return send(res, 400, { error: 'invalid_grant' });
    }
    if (vendor !== 'github' && body.grant_type !== 'authorization_code')
      return send(res, 400, { error: 'unsupported_grant_type' });
    codes.delete(body.code);
    const accessToken = randomBytes(16).toString('hex');
    tokens.set(accessToken, grant);
    if (vendor === 'github') return send(res, 200, { access_token: accessToken, token_type: 'bearer', scope: '' });
    return send(res, 200, {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: randomBytes(16).toString('hex'),
      scope: vendor === 'discord' ? 'identify email' : 'openid profile email',
    });
  };

  const userEndpoint = (vendor: Vendor, req: http.IncomingMessage, res: http.ServerResponse) => {
    const token = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const grant = tokens.get(token);
    if (!grant || grant.vendor !== vendor) {
      if (vendor === 'discord') return send(res, 401, { message: '401: Unauthorized', code: 0 });
      if (vendor === 'github')
        return send(res, 401, {
          message: 'Bad credentials',
          documentation_url: 'https://docs.github.com/rest',
          status: '401',
        });
      return send(res, 401, { error: 'invalid_token' });
    }
    return send(res, 200, grant.userInfo);
  };

  const provider: MockOAuthProvider = {
    url: '',
    tokenRequests,
    discoveryUp: true,
    discoveryRequests: 0,
    issueCode(vendor, userInfo) {
      const code = randomBytes(10).toString('hex');
      codes.set(code, { vendor, userInfo });
      return code;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(parts).toString('utf8');
      const path = (req.url ?? '').split('?')[0];
      const route = `${req.method} ${path}`;
      switch (route) {
        case 'POST /github/login/oauth/access_token':
          return tokenEndpoint('github', req, raw, res);
        case 'GET /github/api/user':
          return userEndpoint('github', req, res);
        case 'POST /linuxdo/oauth2/token':
          return tokenEndpoint('linuxdo', req, raw, res);
        case 'GET /linuxdo/api/user':
          return userEndpoint('linuxdo', req, res);
        case 'POST /discord/api/v10/oauth2/token':
          return tokenEndpoint('discord', req, raw, res);
        case 'GET /discord/api/v10/users/@me':
          return userEndpoint('discord', req, res);
        case 'GET /oidc/.well-known/openid-configuration':
          provider.discoveryRequests += 1;
          if (!provider.discoveryUp) return send(res, 404, { error: 'not_found' });
          return send(res, 200, {
            issuer: `${base}/oidc`,
            authorization_endpoint: `${base}/oidc/authorize`,
            token_endpoint: `${base}/oidc/token`,
            userinfo_endpoint: `${base}/oidc/userinfo`,
            jwks_uri: `${base}/oidc/jwks`,
            response_types_supported: ['code'],
            subject_types_supported: ['public'],
            id_token_signing_alg_values_supported: ['RS256'],
            scopes_supported: ['openid', 'profile', 'email'],
          });
        case 'POST /oidc/token':
          return tokenEndpoint('oidc', req, raw, res);
        case 'GET /oidc/userinfo':
          return userEndpoint('oidc', req, res);
        default:
          return send(res, 404, { error: 'not_found' });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  provider.url = base;
  return provider;
}

/** OAUTH_ENDPOINTS_JSON pointing the server's GitHub, Linux DO and Discord calls at the mock. */
export function endpointsEnv(base: string): string {
  return JSON.stringify({
    github: { token: `${base}/github/login/oauth/access_token`, user: `${base}/github/api/user` },
    linuxdo: { token: `${base}/linuxdo/oauth2/token`, user: `${base}/linuxdo/api/user` },
    discord: { token: `${base}/discord/api/v10/oauth2/token`, user: `${base}/discord/api/v10/users/@me` },
  });
}
