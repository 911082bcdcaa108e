// The console side of /api/custom-oauth-provider (root only; docs/new-api-compat.md §9.9). The client secret is
// write-only: the list never carries it, and an empty one in an update keeps the stored secret.
import { mutationOptions, queryOptions } from '@tanstack/react-query';
import { api } from '../../../../lib/api.js';

export interface CustomProvider {
  id: number;
  name: string;
  slug: string;
  icon: string;
  kind: string;
  enabled: boolean;
  client_id: string;
  authorization_endpoint: string;
  token_endpoint: string;
  user_info_endpoint: string;
  scopes: string;
  user_id_field: string;
  username_field: string;
  display_name_field: string;
  email_field: string;
  well_known: string;
  auth_style: number;
}

/** What the drawer edits: the provider's fields and a new secret (empty: keep). */
export type ProviderForm = Omit<CustomProvider, 'id' | 'kind'> & { client_secret: string };

export const PROVIDERS_KEY = ['custom-oauth-providers'];
const BASE = '/api/custom-oauth-provider/';

export const EMPTY_FORM: ProviderForm = {
  name: '',
  slug: '',
  icon: '',
  enabled: true,
  client_id: '',
  client_secret: '',
  authorization_endpoint: '',
  token_endpoint: '',
  user_info_endpoint: '',
  scopes: 'openid profile email',
  user_id_field: 'sub',
  username_field: 'preferred_username',
  display_name_field: 'name',
  email_field: 'email',
  well_known: '',
  auth_style: 0,
};

export const providersQuery = queryOptions({
  queryKey: PROVIDERS_KEY,
  queryFn: async (): Promise<CustomProvider[]> => {
    const res = await api.get<CustomProvider[]>(BASE);
    if (!res.success) throw new Error(res.message);
    return Array.isArray(res.data) ? res.data : [];
  },
});

/** Creates (id null) or updates a provider. */
export const saveProviderMutation = mutationOptions({
  mutationFn: ({ id, form }: { id: number | null; form: Partial<ProviderForm> }) =>
    id === null ? api.post<CustomProvider>(BASE, form) : api.put<CustomProvider>(`${BASE}${id}`, form),
});

export const deleteProviderMutation = mutationOptions({ mutationFn: (id: number) => api.del(`${BASE}${id}`) });

export interface DiscoveryAnswer {
  well_known_url: string;
  discovery: Record<string, unknown>;
}

/** Fetched by the server (the browser could not read another origin's document without CORS). */
export const discoverMutation = mutationOptions({
  mutationFn: (wellKnownUrl: string) => api.post<DiscoveryAnswer>(`${BASE}discovery`, { well_known_url: wellKnownUrl }),
});

/** The endpoints a discovery document names, as the form's fields (missing ones left out). */
export function endpointsOf(doc: Record<string, unknown>): Partial<ProviderForm> {
  const pick = (key: string) => (typeof doc[key] === 'string' ? (doc[key] as string) : undefined);
  const found: Partial<ProviderForm> = {
    authorization_endpoint: pick('authorization_endpoint'),
    token_endpoint: pick('token_endpoint'),
    user_info_endpoint: pick('userinfo_endpoint'),
  };
  return Object.fromEntries(Object.entries(found).filter(([, v]) => v)) as Partial<ProviderForm>;
}
