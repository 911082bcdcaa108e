// Personal settings card "两步验证 / Two-factor authentication": status, enrolment, disabling with a code and
// regenerating the backup codes.
import { useState } from 'react';
import { Button, Card, Flex, Modal, Spin, Tag, Typography } from 'antd';
import { useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { translateServerMessage } from '../../../i18n/server-message.js';
import { message } from '../../../lib/feedback.js';
import { STATUS_KEY, twoFactorApi, useTwoFactorStatus, type SetupAnswer } from './api.js';
import SetupDialog from './SetupDialog.js';
import CodeDialog from './CodeDialog.js';
import BackupCodes from './BackupCodes.js';
import { NS } from './i18n.js';

export default function TwoFactorCard() {
  const { t } = useTranslation(NS);
  const qc = useQueryClient();
  const status = useTwoFactorStatus();
  const [setup, setSetup] = useState<SetupAnswer | null>(null);
  const [dialog, setDialog] = useState<'' | 'disable' | 'regenerate'>('');
  const [newCodes, setNewCodes] = useState<string[] | null>(null);
  const [starting, setStarting] = useState(false);
  const reload = () => void qc.invalidateQueries({ queryKey: STATUS_KEY });

  const start = async () => {
    setStarting(true);
    try {
      const res = await twoFactorApi.setup();
      if (!res.success) return void message.error(res.message);
      setSetup(res.data);
    } finally {
      setStarting(false);
    }
  };
  const disable = async (code: string) => {
    const res = await twoFactorApi.disable(code);
    if (!res.success) {
      void message.error(res.message);
      return false;
    }
    void message.success(res.message);
    reload();
    return true;
  };
  const regenerate = async (code: string) => {
    const res = await twoFactorApi.regenerate(code);
    if (!res.success) {
      void message.error(res.message);
      return false;
    }
    setNewCodes(res.data.backup_codes);
    reload();
    return true;
  };

  const s = status.data;
  return (
    <Card title={t('title')} data-testid="twofa-card">
      {status.isLoading ? (
        <Spin />
      ) : status.error || !s ? (
        <Typography.Text type="danger">{translateServerMessage(status.error?.message)}</Typography.Text>
      ) : (
        <Flex vertical gap={12}>
          <Typography.Text type="secondary">{t('intro')}</Typography.Text>
          <Flex gap={8} align="center" wrap>
            <Tag color={s.enabled ? 'green' : 'default'} data-testid="twofa-state">
              {s.enabled ? t('enabled') : t('disabled')}
            </Tag>
            {s.enabled && s.backup_codes_remaining !== undefined ? (
              <Typography.Text type="secondary">
                {t('backupRemaining', { n: s.backup_codes_remaining })}
              </Typography.Text>
            ) : null}
            {s.locked ? <Tag color="red">{t('locked')}</Tag> : null}
          </Flex>
          <Flex gap={8} wrap>
            {s.enabled ? (
              <>
                <Button onClick={() => setDialog('regenerate')}>{t('regenerate')}</Button>
                <Button danger onClick={() => setDialog('disable')} data-testid="twofa-disable">
                  {t('disable')}
                </Button>
              </>
            ) : (
              <Button type="primary" loading={starting} onClick={() => void start()} data-testid="twofa-enable">
                {t('enable')}
              </Button>
            )}
          </Flex>
        </Flex>
      )}
      <SetupDialog
        setup={setup}
        onClose={() => setSetup(null)}
        onEnabled={() => {
          setSetup(null);
          reload();
        }}
      />
      <CodeDialog
        open={dialog === 'disable'}
        title={t('disableTitle')}
        hint={t('disableHint')}
        acceptsBackupCode
        onClose={() => setDialog('')}
        onSubmit={disable}
      />
      <CodeDialog
        open={dialog === 'regenerate'}
        title={t('regenerateTitle')}
        hint={t('regenerateHint')}
        acceptsBackupCode={false}
        onClose={() => setDialog('')}
        onSubmit={regenerate}
      />
      <Modal
        open={newCodes !== null}
        title={t('newCodesTitle')}
        onCancel={() => setNewCodes(null)}
        onOk={() => setNewCodes(null)}
        okText={t('done')}
        cancelButtonProps={{ style: { display: 'none' } }}
      >
        <Typography.Paragraph>{t('newCodesHint')}</Typography.Paragraph>
        {newCodes ? <BackupCodes codes={newCodes} /> : null}
      </Modal>
    </Card>
  );
}
