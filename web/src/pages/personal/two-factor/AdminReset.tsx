// The user list's "reset 2FA" action: shown for the users of the page who have two-factor in force (one query per
// page of ids, shared by the rows), it removes the enrolment after a confirmation.
import { Button, Popconfirm } from 'antd';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { api } from '../../../lib/api.js';
import { message } from '../../../lib/feedback.js';
import { ENABLED_USERS_KEY, twoFactorMutations } from './api.js';
import { NS } from './i18n.js';

function useUsersWithTwoFactor(pageIds: number[]) {
  return useQuery({
    queryKey: [...ENABLED_USERS_KEY, pageIds],
    enabled: pageIds.length > 0,
    queryFn: async () => {
      const res = await api.get<number[]>('/api/user/2fa/enabled', { ids: pageIds.join(',') });
      return res.success && Array.isArray(res.data) ? res.data : [];
    },
  });
}

export default function ResetTwoFactorAction({ userId, pageIds }: { userId: number; pageIds: number[] }) {
  const { t } = useTranslation(NS);
  const qc = useQueryClient();
  const enabled = useUsersWithTwoFactor(pageIds);
  const resetCall = useMutation({
    ...twoFactorMutations.adminReset,
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      void message.success(res.message);
      return qc.invalidateQueries({ queryKey: ENABLED_USERS_KEY });
    },
  });
  if (!enabled.data?.includes(userId)) return null;
  // a thrown call was toasted by the api client
  const reset = () => resetCall.mutateAsync(userId).catch(() => undefined);
  return (
    <Popconfirm title={t('resetConfirm')} okButtonProps={{ danger: true }} onConfirm={() => void reset()}>
      <Button size="small" data-testid={`reset-2fa-${userId}`}>
        {t('reset')}
      </Button>
    </Popconfirm>
  );
}
