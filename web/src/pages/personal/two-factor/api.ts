// Server state of two-factor (new-api-compat.md §9.7) for the console: the caller's status and the calls that
// change it, each answering new-api's envelope.
import { useQuery } from '@tanstack/react-query';
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

export const twoFactorApi = {
  setup: () => api.post<SetupAnswer>('/api/user/2fa/setup'),
  enable: (code: string) => api.post<null>('/api/user/2fa/enable', { code }),
  disable: (code: string) => api.post<null>('/api/user/2fa/disable', { code }),
  regenerate: (code: string) => api.post<{ backup_codes: string[] }>('/api/user/2fa/backup_codes', { code }),
  loginStep: <T>(code: string) => api.post<T>('/api/user/login/2fa', { code }),
  adminReset: (userId: number) => api.del<null>(`/api/user/${userId}/2fa`),
};
