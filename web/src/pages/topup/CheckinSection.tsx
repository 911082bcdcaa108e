// The daily check-in on the wallet page (new-api's /api/user/checkin): shown only when the server has it on (its
// status answers success); the button is spent for the day once checked in, and a check-in reloads the balance.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { App as AntApp, Button, Divider, Space, Typography } from 'antd';
import { useTurnstile } from '../../components/turnstile/index.js';
import { api } from '../../lib/api.js';
import { renderQuota } from '../../lib/render.js';
import './i18n.js';

interface CheckinStatus {
  enabled: boolean;
  min_quota: number;
  max_quota: number;
  stats: { total_quota: number; total_checkins: number; checkin_count: number; checked_in_today: boolean };
}

const CHECKIN_KEY = ['user', 'checkin'] as const;

export function CheckinSection() {
  const { t } = useTranslation('topup');
  const { message } = AntApp.useApp();
  const qc = useQueryClient();
  const turnstile = useTurnstile();
  const status = useQuery({
    queryKey: CHECKIN_KEY,
    // switched off: the server answers success false, and the section stays hidden
    queryFn: async () => {
      const res = await api.get<CheckinStatus>('/api/user/checkin');
      return res.success ? res.data : null;
    },
  });
  const checkin = useMutation({
    mutationFn: async () => {
      const res = await api.post<{ quota_awarded: number }>(turnstile.withToken('/api/user/checkin'), {});
      if (!res.success) throw new Error(res.message);
      return res.data;
    },
    onSuccess: (d) => {
      message.success(t('checkin.done', { quota: renderQuota(d.quota_awarded) }));
      void qc.invalidateQueries({ queryKey: CHECKIN_KEY });
      void qc.invalidateQueries({ queryKey: ['user', 'self'] });
    },
    onError: (e: Error) => message.error(e.message),
    onSettled: () => turnstile.reset(),
  });
  const s = status.data;
  if (!s?.enabled) return null;
  const done = s.stats.checked_in_today;
  return (
    <div data-testid="checkin-section">
      <Divider />
      <Typography.Title level={5}>{t('checkin.title')}</Typography.Title>
      <Space wrap align="center">
        <Button
          type="primary"
          disabled={done}
          loading={checkin.isPending}
          onClick={() => {
            if (turnstile.check()) checkin.mutate();
          }}
          data-testid="checkin-submit"
        >
          {done ? t('checkin.doneToday') : t('checkin.submit')}
        </Button>
        <Typography.Text type="secondary" data-testid="checkin-range">
          {t('checkin.range', { min: renderQuota(s.min_quota), max: renderQuota(s.max_quota) })}
        </Typography.Text>
      </Space>
      <Typography.Paragraph style={{ marginTop: 8 }} data-testid="checkin-stats">
        {t('checkin.stats', {
          month: s.stats.checkin_count,
          total: s.stats.total_checkins,
          quota: renderQuota(s.stats.total_quota),
        })}
      </Typography.Paragraph>
      {turnstile.widget}
    </div>
  );
}
