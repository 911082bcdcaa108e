// Enrolment: the otpauth URI as a QR code and the secret as text, the ten backup codes (shown only here), and the
// first code from the authenticator that puts two-factor in force.
import { useState } from 'react';
import { Alert, Flex, Input, Modal, QRCode, Typography } from 'antd';
import { useMutation } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { message } from '../../../lib/feedback.js';
import { twoFactorMutations, type SetupAnswer } from './api.js';
import BackupCodes from './BackupCodes.js';
import { NS } from './i18n.js';

interface Props {
  setup: SetupAnswer | null;
  onClose(): void;
  onEnabled(): void;
}

export default function SetupDialog({ setup, onClose, onEnabled }: Props) {
  const { t } = useTranslation(NS);
  const [code, setCode] = useState('');
  const enableCall = useMutation({
    ...twoFactorMutations.enable,
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      void message.success(res.message);
      setCode('');
      onEnabled();
    },
  });
  const enable = () => {
    if (!code.trim()) return void message.error(t('codeRequired'));
    // a thrown call was toasted by the api client
    enableCall.mutateAsync(code.trim()).catch(() => undefined);
  };
  return (
    <Modal
      open={setup !== null}
      title={t('setupTitle')}
      onCancel={onClose}
      onOk={() => void enable()}
      okText={t('enable')}
      confirmLoading={enableCall.isPending}
      destroyOnHidden
      width={560}
    >
      {setup ? (
        <Flex vertical gap={12}>
          <Typography.Text>{t('scan')}</Typography.Text>
          <Flex gap={16} align="center" wrap>
            <QRCode value={setup.qr_code_data} size={160} data-testid="twofa-qrcode" />
            <Typography.Text code copyable data-testid="twofa-secret" style={{ wordBreak: 'break-all' }}>
              {setup.secret}
            </Typography.Text>
          </Flex>
          <Typography.Text>{t('saveCodes')}</Typography.Text>
          <BackupCodes codes={setup.backup_codes} />
          <Alert type="info" showIcon title={t('enterFirst')} />
          <Input
            value={code}
            onChange={(e) => setCode(e.target.value)}
            onPressEnter={() => void enable()}
            placeholder={t('codePh')}
            inputMode="numeric"
            autoComplete="one-time-code"
            maxLength={6}
            data-testid="twofa-first-code"
          />
        </Flex>
      ) : null}
    </Modal>
  );
}
