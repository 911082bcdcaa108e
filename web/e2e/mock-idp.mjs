// A local identity provider for the e2e specs, on 127.0.0.1: GitHub's token and user endpoints (the server reaches
// them through OAUTH_ENDPOINTS_JSON) and an OpenID Connect provider with discovery, each with an authorize page a
// person fills in and approves, as on the real sites. A code is good once, for the client it was issued to, with the
// redirect_uri it was issued for; the user endpoints want the Bearer token the token endpoint gave out.
import http from 'node:http';
import { randomBytes } from 'node:crypto';

export const IDP_CLIENTS = {
  github: { id: 'e2e-github-client', secret: 'e2e-github-secret' },
  oidc: { id: 'e2e-oidc-client', secret: 'e2e-oidc-secret' },
};

const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function send(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'access-control-allow-origin': '*', ...headers });
  res.end(JSON.stringify(body));
}

function authorizePage(vendor, query, redirectUri) {
  const hidden = ['state', 'client_id']
    .map((k) => `<input type="hidden" name="${k}" value="${escape(query.get(k) ?? '')}">`)
    .join('');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Mock ${vendor} sign-in</title></head><body>
<h1>Sign in to Mock ${vendor}</h1>
<p>An application wants to use your account.</p>
<form method="get" action="/${vendor}/approve">${hidden}
<input type="hidden" name="redirect_uri" value="${escape(redirectUri)}">
<label>Login <input name="login" id="login"></label>
<label>Email <input name="email" id="email"></label>
<label>Name <input name="name" id="name"></label>
<button type="submit" id="approve">Authorize</button>
</form></body></html>`;
}

/** Starts the provider; `githubCallback` is the callback URL registered on the GitHub app (GitHub sends none). */
export async function startMockIdp({ githubCallback }) {
  const codes = new Map();
  const tokens = new Map();
  let base = '';

  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', base);
      const raw = Buffer.concat(chunks).toString('utf8');
      const route = `${req.method} ${url.pathname}`;
      const vendor = url.pathname.split('/')[1];
      if (route === 'GET /oidc/.well-known/openid-configuration') {
        return send(res, 200, {
          issuer: `${base}/oidc`,
          authorization_endpoint: `${base}/oidc/authorize`,
          token_endpoint: `${base}/oidc/token`,
          userinfo_endpoint: `${base}/oidc/userinfo`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
        });
      }
      if (req.method === 'GET' && (route === 'GET /github/authorize' || route === 'GET /oidc/authorize')) {
        if (url.searchParams.get('client_id') !== IDP_CLIENTS[vendor].id)
          return send(res, 400, { error: 'invalid_client' });
        const redirectUri = vendor === 'github' ? githubCallback : (url.searchParams.get('redirect_uri') ?? '');
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return res.end(authorizePage(vendor, url.searchParams, redirectUri));
      }
      if (route === 'GET /github/approve' || route === 'GET /oidc/approve') {
        const q = url.searchParams;
        const code = randomBytes(12).toString('hex');
        const login = q.get('login') ?? '';
        const info =
          vendor === 'github'
            ? { login, id: Math.floor(Math.random() * 1e9), name: q.get('name') ?? '', email: q.get('email') ?? '' }
            : {
                sub: `sub-${login}`,
                preferred_username: login,
                name: q.get('name') ?? '',
                email: q.get('email') ?? '',
              };
        codes.set(code, { vendor, info, redirectUri: q.get('redirect_uri') ?? '' });
        const back = new URL(q.get('redirect_uri') ?? '');
        back.searchParams.set('code', code);
        back.searchParams.set('state', q.get('state') ?? '');
        res.writeHead(302, { location: back.toString() });
        return res.end();
      }
      if (route === 'POST /github/token' || route === 'POST /oidc/token') {
        const body = req.headers['content-type']?.includes('json')
          ? JSON.parse(raw || '{}')
          : Object.fromEntries(new URLSearchParams(raw));
        const grant = codes.get(body.code ?? '');
        codes.delete(body.code ?? '');
        const client = IDP_CLIENTS[vendor];
        if (body.client_id !== client.id || body.client_secret !== client.secret) {
          return send(res, 401, { error: 'invalid_client' });
        }
        if (!grant || grant.vendor !== vendor) return send(res, 400, { error: 'invalid_grant' });
        if (vendor === 'oidc' && body.redirect_uri !== grant.redirectUri)
          return send(res, 400, { error: 'invalid_grant' });
        const token = randomBytes(16).toString('hex');
        tokens.set(token, grant);
        return send(res, 200, { access_token: token, token_type: 'bearer' });
      }
      if (route === 'GET /github/user' || route === 'GET /oidc/userinfo') {
        const token = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1] ?? '';
        const grant = tokens.get(token);
        if (!grant || grant.vendor !== vendor) return send(res, 401, { error: 'invalid_token' });
        return send(res, 200, grant.info);
      }
      return send(res, 404, { error: 'not_found' });
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
  return {
    url: base,
    /** OAUTH_ENDPOINTS_JSON for the server under test */
    endpointsJson: JSON.stringify({ github: { token: `${base}/github/token`, user: `${base}/github/user` } }),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
