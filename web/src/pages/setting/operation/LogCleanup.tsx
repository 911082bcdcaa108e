// Deletes usage logs older than a chosen time (DELETE /api/log/?target_timestamp=, default one month ago).
import { useState } from 'react';
import { App, Button, DatePicker, Flex, Form, Popconfirm } from 'antd';
import dayjs, { type Dayjs } from 'dayjs';
import { useTranslation } from 'react-i18next';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { api } from '../../../lib/api.js';
import { NS } from '../i18n.js';

export function defaultCleanupTime(now = dayjs()): Dayjs {
  return now.subtract(1, 'month');
}

export default function LogCleanup() {
  const { t } = useTranslation(NS);
  const { message } = App.useApp();
  const [time, setTime] = useState<Dayjs | null>(() => defaultCleanupTime());
  const qc = useQueryClient();
  const cleanup = useMutation({
    mutationFn: (before: number) => api.del<number>(`/api/log/?target_timestamp=${before}`),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message || t('saveFailed'));
      void message.success(t('log.cleaned', { count: res.data ?? 0 }));
      // the usage logs page's queries (pages/log) show what is left
      return qc.invalidateQueries({ queryKey: ['logs'] });
    },
  });
  const busy = cleanup.isPending;

  const clean = async () => {
    if (!time) {
      void message.error(t('log.pickTime'));
      return;
    }
    // a failed request was reported by the api client
    await cleanup.mutateAsync(Math.floor(time.valueOf() / 1000)).catch(() => undefined);
  };

  return (
    <Form.Item label={t('log.cleanup')} extra={t('log.cleanupHint')}>
      <Flex gap={8} wrap>
        <DatePicker showTime value={time} onChange={setTime} data-testid="log-cleanup-time" />
        <Popconfirm title={t('log.cleanupConfirm')} onConfirm={() => void clean()}>
          <Button danger loading={busy}>
            {t('log.cleanupButton')}
          </Button>
        </Popconfirm>
      </Flex>
    </Form.Item>
  );
}
