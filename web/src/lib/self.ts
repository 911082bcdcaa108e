// The caller's own user, models and groups, as TanStack Query options shared by every page that shows them (dashboard,
// wallet, personal settings): one key per resource, so a change seen on one page (a redeemed code, a binding) is seen
// on the others, and a page opened after another is served from the cache.
import { queryOptions } from '@tanstack/react-query';
import { api } from './api.js';

/** /api/user/self as the console reads it. */
export interface SelfUser {
  id: number;
  username: string;
  display_name: string;
  role: number;
  status: number;
  group: string;
  email: string;
  quota: number;
  used_quota: number;
  request_count: number;
  aff_code?: string;
  aff_count: number;
  aff_quota: number;
  aff_history_quota: number;
  github_id?: string;
  oidc_id?: string;
  wechat_id?: string;
  telegram_id?: string;
  linux_do_id?: string;
  /** Sent only by servers that offer Discord login. */
  discord_id?: string;
  access_token?: string | null;
  setting?: string;
}

export const SELF_KEY = ['user', 'self'] as const;
export const SELF_MODELS_KEY = ['user', 'models'] as const;

export const selfQuery = queryOptions({
  queryKey: SELF_KEY,
  queryFn: async () => {
    const res = await api.get<SelfUser>('/api/user/self');
    if (!res.success) throw new Error(res.message);
    return res.data;
  },
});

/** The models the caller's group may call; an unsuccessful answer is an empty list. */
export const selfModelsQuery = queryOptions({
  queryKey: SELF_MODELS_KEY,
  queryFn: async () => {
    const res = await api.get<string[]>('/api/user/models');
    return res.success && Array.isArray(res.data) ? res.data : [];
  },
});

/** The groups the caller may put a token or a playground call in, with their descriptions and ratios. */
export type SelfGroups = Record<string, { desc?: string; ratio?: number }>;

export const selfGroupsQuery = queryOptions({
  queryKey: ['user', 'groups'],
  queryFn: async (): Promise<SelfGroups> => {
    const res = await api.get<SelfGroups>('/api/user/self/groups');
    return res.success ? (res.data ?? {}) : {};
  },
});
