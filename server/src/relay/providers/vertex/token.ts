// OAuth access tokens for Vertex AI from a service account: a JWT signed with the account's private key is
// exchanged at Google's token endpoint (the JWT bearer grant) for an access token valid about an hour. Signing and
// the exchange are google-auth-library's; this module decides when to ask: one token per service account, reused
// until 5 minutes before it expires, one request in flight however many callers wait, nothing cached on failure.
// loaded with the first token request: a gateway without Vertex AI channels does not carry the library
import type { JWT } from 'google-auth-library';
import type { ServiceAccount } from './credentials.js';
import { CappedMap } from '../../../lib/bounded.js';
import { redactor } from '../../../lib/redact.js';

export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** A token is replaced this long before it expires, so a request never leaves with one about to lapse. */
const REFRESH_MARGIN_MS = 5 * 60_000;
/** When the answer names no lifetime: Google's tokens last an hour. */
const DEFAULT_LIFETIME_MS = 3600_000;
/** Bounds the cache when keys churn (a channel's key edited many times, keys tried by the channel test). */
const MAX_ACCOUNTS = 1000;

export class VertexTokenError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
    this.name = 'VertexTokenError';
  }
}

export interface VertexTokenCacheOptions {
  /** where to exchange the JWT (tests point it at a mock); default Google's token endpoint */
  tokenUrl?: string;
  /** the clock, in ms (tests) */
  now?: () => number;
  /** most service accounts whose token is kept (the oldest forgotten first); default 1000 */
  maxAccounts?: number;
}

interface CachedToken {
  token: string;
  expiresAt: number;
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

function cacheKey(sa: ServiceAccount): string {
  return `${sa.client_email}\n${sa.private_key_id}`;
}

export class VertexTokenCache {
  private readonly tokens: CappedMap<string, CachedToken>;
  private readonly inFlight = new Map<string, Promise<CachedToken>>();
  private readonly now: () => number;

  constructor(private readonly options: VertexTokenCacheOptions = {}) {
    this.now = options.now ?? Date.now;
    this.tokens = new CappedMap(options.maxAccounts ?? MAX_ACCOUNTS);
  }

  /** service accounts with a token kept */
  get size(): number {
    return this.tokens.size;
  }

  async get(sa: ServiceAccount): Promise<string> {
    const key = cacheKey(sa);
    const cached = this.tokens.get(key);
    if (cached && cached.expiresAt - REFRESH_MARGIN_MS > this.now()) return cached.token;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.fetchToken(sa);
      this.inFlight.set(key, pending);
      const settle = () => {
        if (this.inFlight.get(key) === pending) this.inFlight.delete(key);
      };
      pending.then((fresh) => {
        // an invalidate() while the request was out means its answer is not wanted in the cache either
        if (this.inFlight.get(key) === pending) {
          // re-inserted, so an account in use is the newest and the last one the bound forgets
          this.tokens.delete(key);
          this.tokens.set(key, fresh);
        }
        settle();
      }, settle);
    }
    return (await pending).token;
  }

  /** Drops the account's token (the upstream answered 401 with it): the next get() asks for a new one. */
  invalidate(sa: ServiceAccount): void {
    const key = cacheKey(sa);
    this.tokens.delete(key);
    this.inFlight.delete(key);
  }

  private async fetchToken(sa: ServiceAccount): Promise<CachedToken> {
    const tokenUrl = tokenUrlFor(sa, this.options.tokenUrl);
    const { JWT } = await import('google-auth-library');
    const client = new JWT({
      email: sa.client_email,
      key: sa.private_key,
      keyId: sa.private_key_id,
      scopes: [CLOUD_PLATFORM_SCOPE],
      // the assertion's audience must be the endpoint it is presented to
      additionalClaims: { aud: tokenUrl },
    });
    if (tokenUrl !== GOOGLE_TOKEN_URL) redirectTokenRequests(client, tokenUrl);
    const startedAt = this.now();
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
    if (!credentials.access_token)
      throw new VertexTokenError('Vertex AI token endpoint returned no access_token', null);
    // the library computes expiry_date from expires_in with the real clock; keep the lifetime, on our clock
    const lifetime = credentials.expiry_date ? credentials.expiry_date - Date.now() : DEFAULT_LIFETIME_MS;
    return { token: credentials.access_token, expiresAt: startedAt + lifetime };
  }
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
