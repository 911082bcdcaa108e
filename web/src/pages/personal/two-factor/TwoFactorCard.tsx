// Personal settings card "两步验证 / Two-factor authentication": status, enrolment, disabling with a code and
// regenerating the backup codes.
import { useState } from 'react';
import { Button, Card, Flex, Modal, Spin, Tag, Typography } from 'antd';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { translateServerMessage } from '../../../i18n/server-message.js';
import { message } from '../../../lib/feedback.js';
import { STATUS_KEY, twoFactorMutations, useTwoFactorStatus, type SetupAnswer } from './api.js';
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
  const reload = () => void qc.invalidateQueries({ queryKey: STATUS_KEY });

  const setupCall = useMutation({
    ...twoFactorMutations.setup,
    onSuccess: (res) => (res.success ? setSetup(res.data) : void message.error(res.message)),
  });
  const disableCall = useMutation({
    ...twoFactorMutations.disable,
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      void message.success(res.message);
      reload();
    },
  });
  const regenerateCall = useMutation({
    ...twoFactorMutations.regenerate,
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      setNewCodes(res.data.backup_codes);
      reload();
    },
  });
  // a thrown call was toasted by the api client
  const start = () => setupCall.mutateAsync().catch(() => undefined);
  const starting = setupCall.isPending;
  // the code dialog stays open for another try when the server refused the code
  const disable = async (code: string) => (await disableCall.mutateAsync(code)).success;
  const regenerate = async (code: string) => (await regenerateCall.mutateAsync(code)).success;

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
