// The plans' server state through TanStack Query: one key per resource, so a purchase, a bind or a plan edit
// invalidates what it touched. Every read throws the server's refusal, which the page shows.
import { queryOptions, useQuery } from '@tanstack/react-query';
import { api, type Envelope } from '../../lib/api.js';
import type { PlanView, SelfSubscriptions, SubscriptionSummary } from './logic.js';

/** Every subscription query starts with this key (a write invalidates them all). */
export const SUBSCRIPTION_KEY = ['subscription'] as const;
export const ADMIN_PLANS_KEY = [...SUBSCRIPTION_KEY, 'admin-plans'] as const;
export const PLANS_KEY = [...SUBSCRIPTION_KEY, 'plans'] as const;
export const SELF_SUBSCRIPTIONS_KEY = [...SUBSCRIPTION_KEY, 'self'] as const;
export const userSubscriptionsKey = (userId: number) => [...SUBSCRIPTION_KEY, 'user', userId] as const;

/** An answer's data, or its refusal thrown (the page shows it). */
function unwrap<T>(res: Envelope<T>): T {
  if (!res.success) throw new Error(res.message);
  return res.data;
}

/** A list answer's rows (an empty list for null or anything else a server that predates plans sends). */
function listOf<T>(res: Envelope<T[] | null>): T[] {
  const data = unwrap(res);
  return Array.isArray(data) ? data : [];
}

/** Every plan (admin), or the enabled ones a user may buy. */
export function plansQuery(admin: boolean) {
  return queryOptions({
    queryKey: admin ? ADMIN_PLANS_KEY : PLANS_KEY,
    queryFn: async () =>
      listOf(await api.get<PlanView[] | null>(admin ? '/api/subscription/admin/plans' : '/api/subscription/plans')),
  });
}

export const usePlans = (admin: boolean) => useQuery(plansQuery(admin));

export const selfSubscriptionsQuery = queryOptions({
  queryKey: SELF_SUBSCRIPTIONS_KEY,
  queryFn: async () => unwrap(await api.get<SelfSubscriptions>('/api/subscription/self')),
});

export function useUserSubscriptions(userId: number | null) {
  return useQuery({
    queryKey: userSubscriptionsKey(userId ?? 0),
    enabled: userId !== null,
    queryFn: async () =>
      listOf(await api.get<SubscriptionSummary[] | null>(`/api/subscription/admin/users/${userId}/subscriptions`)),
  });
}
