// Server state of two-factor (new-api-compat.md §9.7) for the console: the caller's status and the calls that
// change it, each answering new-api's envelope.
import { mutationOptions, useQuery } from '@tanstack/react-query';
import { api } from '../../../lib/api.js';

export interface TwoFactorStatus {
  enabled: boolean;
  locked: boolean;
  backup_codes_remaining?: number;
}

export interface SetupAnswer {
  secret: string;
  qr_code_data: string;
  backup_codes: string[];
}

export const STATUS_KEY = ['user', '2fa', 'status'] as const;
/** the admin list's query of which users have two-factor in force */
export const ENABLED_USERS_KEY = ['users', '2fa', 'enabled'] as const;

export function useTwoFactorStatus() {
  return useQuery({
    queryKey: STATUS_KEY,
    queryFn: async () => {
      const res = await api.get<TwoFactorStatus>('/api/user/2fa/status');
      if (!res.success) throw new Error(res.message);
      return res.data;
    },
  });
}

/** The calls that change two-factor, as mutation options: a component adds what follows a success. */
export const twoFactorMutations = {
  setup: mutationOptions({ mutationFn: () => api.post<SetupAnswer>('/api/user/2fa/setup') }),
  enable: mutationOptions({ mutationFn: (code: string) => api.post<null>('/api/user/2fa/enable', { code }) }),
  disable: mutationOptions({ mutationFn: (code: string) => api.post<null>('/api/user/2fa/disable', { code }) }),
  regenerate: mutationOptions({
    mutationFn: (code: string) => api.post<{ backup_codes: string[] }>('/api/user/2fa/backup_codes', { code }),
  }),
  adminReset: mutationOptions({ mutationFn: (userId: number) => api.del<null>(`/api/user/${userId}/2fa`) }),
};

/** The login's second step answers as the password login would have (`T`: the logged-in user). */
export const loginStepMutation = <T>() =>
  mutationOptions({ mutationFn: (code: string) => api.post<T>('/api/user/login/2fa', { code }) });
