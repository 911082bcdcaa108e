// Third-party login providers of the console (spec §2 Login, §3 status fields; docs/new-api-compat.md §9.4): which
// ones /api/status enables, and the provider authorize URL each one is sent to once the server handed out a state.
import { mutationOptions } from '@tanstack/react-query';
import type { Status } from '../../context/status.js';
import { api, navigation } from '../../lib/api.js';

/** The invite code kept by /register?aff= (same key as the register page; imported there would pull that page in). */
const AFF_KEY = 'aff';

export type OAuthProviderId = 'github' | 'linuxdo' | 'oidc' | 'discord';

export interface OAuthProvider {
  id: OAuthProviderId;
  /** Shown on buttons and binding rows; brand names are not translated. */
  label: string;
  /** The SelfUser field holding the provider account id once bound. */
  userField: 'github_id' | 'linux_do_id' | 'oidc_id' | 'discord_id';
  enabled(status: Status): boolean;
  authorizeUrl(status: Status, state: string, origin: string): string;
}

function text(status: Status, key: string): string {
  const v = status[key];
  return typeof v === 'string' ? v : '';
}

/** The return page the provider sends the browser back to (routes `/oauth/:provider`). */
export function returnUrl(origin: string, id: OAuthProviderId | string): string {
  return `${origin}/oauth/${id}`;
}

function withQuery(base: string, params: Record<string, string>): string {
  const url = new URL(base);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}

export const OAUTH_PROVIDERS: readonly OAuthProvider[] = [
  {
    id: 'github',
    label: 'GitHub',
    userField: 'github_id',
    enabled: (s) => !!s.github_oauth && !!s.github_client_id,
    // GitHub returns to the callback URL registered on the OAuth app, so no redirect_uri is sent.
    authorizeUrl: (s, state) =>
      withQuery('https://github.com/login/oauth/authorize', {
        client_id: text(s, 'github_client_id'),
        state,
        scope: 'user:email',
      }),
  },
  {
    id: 'linuxdo',
    label: 'Linux DO',
    userField: 'linux_do_id',
    enabled: (s) => !!s.linuxdo_oauth && !!s.linuxdo_client_id,
    authorizeUrl: (s, state) =>
      withQuery('https://connect.linux.do/oauth2/authorize', {
        response_type: 'code',
        client_id: text(s, 'linuxdo_client_id'),
        state,
      }),
  },
  {
    id: 'oidc',
    label: 'OIDC',
    userField: 'oidc_id',
    enabled: (s) => !!s.oidc_enabled && !!s.oidc_client_id && !!s.oidc_authorization_endpoint,
    // The server exchanges the code with redirect_uri {ServerAddress}/oauth/oidc, so the two must name the same page.
    authorizeUrl: (s, state, origin) =>
      withQuery(text(s, 'oidc_authorization_endpoint'), {
        client_id: text(s, 'oidc_client_id'),
        redirect_uri: returnUrl(origin, 'oidc'),
        response_type: 'code',
        scope: 'openid profile email',
        state,
      }),
  },
  {
    id: 'discord',
    label: 'Discord',
    userField: 'discord_id',
    // Not in the snapshot's status object; shown only when a server that offers Discord sends these flags.
    enabled: (s) => s.discord_oauth === true && !!text(s, 'discord_client_id'),
    authorizeUrl: (s, state, origin) =>
      withQuery('https://discord.com/oauth2/authorize', {
        response_type: 'code',
        client_id: text(s, 'discord_client_id'),
        redirect_uri: returnUrl(origin, 'discord'),
        scope: 'identify openid',
        state,
      }),
  },
];

export function enabledProviders(status: Status): OAuthProvider[] {
  return OAUTH_PROVIDERS.filter((p) => p.enabled(status));
}

export function findProvider(id: string | undefined): OAuthProvider | undefined {
  return OAUTH_PROVIDERS.find((p) => p.id === id);
}

/**
 * Starts a login or a binding (the server tells them apart by the session): asks for a state, carrying the stored
 * invite code so an OAuth sign-up credits the inviter, then leaves for the provider. Resolves to the failure message
 * when the state could not be had (the caller shows it), or null once the browser is on its way.
 */
export const startOAuthMutation = mutationOptions({
  mutationFn: async ({
    provider,
    status,
  }: {
    /** a built-in provider or a custom one (whose id is its slug) */
    provider: Pick<OAuthProvider, 'authorizeUrl'> & { id: string };
    status: Status;
  }): Promise<string | null> => {
    const aff = localStorage.getItem(AFF_KEY) ?? '';
    const res = await api.get<string>('/api/oauth/state', { aff });
    if (!res.success || typeof res.data !== 'string' || !res.data) return res.message || 'no state';
    navigation.redirect(provider.authorizeUrl(status, res.data, window.location.origin));
    return null;
  },
});
