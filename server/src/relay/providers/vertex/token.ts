// OAuth access tokens for Vertex AI from a service account: a JWT signed with the account's private key is
// exchanged at Google's token endpoint (the JWT bearer grant) for an access token valid about an hour. Signing and
// the exchange are google-auth-library's; when to ask (reuse, refresh, one request in flight, nothing kept on
// failure) is the relay's credential cache's (relay/credential-cache.ts).
// loaded with the first token request: a gateway without Vertex AI channels does not carry the library
import type { JWT } from 'google-auth-library';
import type { ExchangedCredential, ExchangedToken } from '../types.js';
import { parseServiceAccount, type ServiceAccount } from './credentials.js';
import { redactor } from '../../../lib/redact.js';

export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** When the answer names no lifetime: Google's tokens last an hour. */
const DEFAULT_LIFETIME_MS = 3600_000;

export class VertexTokenError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
    this.name = 'VertexTokenError';
  }
}

/**
 * The token endpoint for a service account. The key's own `token_uri` is admin input: it is honoured only when it
 * is an https URL on googleapis.com, so a crafted key cannot make the server send signed grants to another host.
 */
export function tokenUrlFor(sa: ServiceAccount, override?: string): string {
  if (override) return override;
  if (sa.token_uri) {
    try {
      const u = new URL(sa.token_uri);
      if (u.protocol === 'https:' && (u.hostname === 'googleapis.com' || u.hostname.endsWith('.googleapis.com'))) {
        return u.href;
      }
    } catch {
      // not a URL: use Google's
    }
  }
  return GOOGLE_TOKEN_URL;
}

/** Vertex AI's credential: the channel's key (a service-account JSON) is exchanged for an access token. */
export const vertexCredential: ExchangedCredential = {
  kind: 'exchanged',
  id: 'vertex',
  exchange: (key, settings) => exchangeToken(parseServiceAccount(key), settings.vertexTokenUrl || undefined),
};

/** Signs the JWT grant for `sa` and trades it at the token endpoint (`tokenUrl` overrides it) for an access token. */
export async function exchangeToken(sa: ServiceAccount, tokenUrl?: string): Promise<ExchangedToken> {
  const url = tokenUrlFor(sa, tokenUrl);
  const { JWT } = await import('google-auth-library');
  const client = new JWT({
    email: sa.client_email,
    key: sa.private_key,
    keyId: sa.private_key_id,
    scopes: [CLOUD_PLATFORM_SCOPE],
    // the assertion's audience must be the endpoint it is presented to
    additionalClaims: { aud: url },
  });
  if (url !== GOOGLE_TOKEN_URL) redirectTokenRequests(client, url);
  let credentials;
  try {
    credentials = (await client.authorize()) as { access_token?: string | null; expiry_date?: number | null };
  } catch (err) {
    const e = err as { message?: string; status?: number; response?: { status?: number } };
    const status = e.status ?? e.response?.status ?? null;
    // an endpoint that echoes the request would hand on the signed grant (a JWT) or pieces of the key
    const hide = redactor([sa.private_key, sa.private_key_id]);
    throw new VertexTokenError(`Vertex AI token request failed: ${hide(e.message ?? String(err))}`, status);
  }
  if (!credentials.access_token) throw new VertexTokenError('Vertex AI token endpoint returned no access_token', null);
  // the library computes expiry_date from expires_in with the real clock: what is left of it is the lifetime
  const lifetimeMs = credentials.expiry_date ? credentials.expiry_date - Date.now() : DEFAULT_LIFETIME_MS;
  return { token: credentials.access_token, lifetimeMs };
}

/**
 * google-auth-library always posts the grant to Google's endpoint; a request interceptor on the client's own
 * transport sends it to `tokenUrl` instead (tests' mock, or a googleapis.com regional endpoint from the key).
 */
function redirectTokenRequests(client: JWT, tokenUrl: string): void {
  client.transporter.interceptors.request.add({
    resolved: async (config) => {
      const url = String(config.url);
      if (url === GOOGLE_TOKEN_URL) config.url = new URL(tokenUrl);
      return config;
    },
  });
}
