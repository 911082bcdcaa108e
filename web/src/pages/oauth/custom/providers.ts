// Custom OAuth providers on the login page and in personal settings (docs/new-api-compat.md §9.9): /api/status lists
// the enabled ones with their public fields, and each is sent to its own authorize endpoint with the return page
// /oauth/<slug>, the address the server also names as redirect_uri when it exchanges the code.
import type { Status } from '../../../context/status.js';
import { returnUrl, type OAuthProvider } from '../providers.js';

/** One entry of /api/status `custom_oauth_providers`. */
export interface PublicCustomProvider {
  id: number;
  name: string;
  slug: string;
  icon: string;
  client_id: string;
  authorization_endpoint: string;
  scopes: string;
}

/** What startOAuthMutation needs of a provider, with the custom provider's own fields. */
export interface CustomLoginProvider extends Pick<OAuthProvider, 'authorizeUrl'> {
  id: string;
  label: string;
  icon: string;
  providerId: number;
}

function isPublicProvider(v: unknown): v is PublicCustomProvider {
  const p = v as Partial<PublicCustomProvider> | null;
  return (
    !!p &&
    typeof p.id === 'number' &&
    typeof p.slug === 'string' &&
    /^[a-z0-9-]+$/.test(p.slug) &&
    typeof p.name === 'string' &&
    typeof p.client_id === 'string' &&
    !!p.client_id &&
    typeof p.authorization_endpoint === 'string' &&
    /^https?:\/\//i.test(p.authorization_endpoint)
  );
}

export function customAuthorizeUrl(p: PublicCustomProvider, state: string, origin: string): string {
  const url = new URL(p.authorization_endpoint);
  url.searchParams.set('client_id', p.client_id);
  url.searchParams.set('redirect_uri', returnUrl(origin, p.slug));
  url.searchParams.set('response_type', 'code');
  if (p.scopes) url.searchParams.set('scope', p.scopes);
  url.searchParams.set('state', state);
  return url.toString();
}

/** The custom providers the login page offers, in the server's order; malformed entries are skipped. */
export function customLoginProviders(status: Status): CustomLoginProvider[] {
  const listed = Array.isArray(status.custom_oauth_providers) ? status.custom_oauth_providers : [];
  return listed.filter(isPublicProvider).map((p) => ({
    id: p.slug,
    label: p.name,
    icon: p.icon ?? '',
    providerId: p.id,
    authorizeUrl: (_status, state, origin) => customAuthorizeUrl(p, state, origin),
  }));
}

/** An icon given as an image address is shown as that image; anything else gets the generic login icon. */
export const isImageIcon = (icon: string) => /^(https?:\/\/|data:image\/)/i.test(icon);
