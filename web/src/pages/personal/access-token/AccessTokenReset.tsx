// Resetting the system access token (issue 34 "safer actions"): the old token dies at once, so the button asks first;
// the new token is shown once in a dialog with a copy button instead of being silently put on the clipboard.
import { useState } from 'react';
import { Alert, Button, Input, Modal, Space } from 'antd';
import { useTranslation } from 'react-i18next';
import { useMutation } from '@tanstack/react-query';
import { api } from '../../../lib/api.js';
import { message } from '../../../lib/feedback.js';
import { copyText } from '../../../lib/storage.js';
import { NS } from './i18n.js';

interface Props {
  /** the button's label (owned by the personal page) */
  label: string;
  /** called after a successful reset, e.g. to reload the user */
  onReset(): void;
}

export default function AccessTokenReset({ label, onReset }: Props) {
  const { t } = useTranslation(NS);
  const [confirming, setConfirming] = useState(false);
  const [token, setToken] = useState('');

  // GET, as new-api has it, but it changes the token: a mutation, never cached or retried
  const resetToken = useMutation({
    mutationFn: () => api.get<string>('/api/user/token'),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      setConfirming(false);
      setToken(res.data);
      onReset();
    },
  });
  const loading = resetToken.isPending;
  const reset = () => resetToken.mutateAsync().catch(() => undefined);
  const copy = async () => {
    if (await copyText(token)) void message.success(t('copied'));
    else void message.warning(t('copyFailed'));
  };

  return (
    <>
      <Button onClick={() => setConfirming(true)} data-testid="reset-access-token">
        {label}
      </Button>
      <Modal
        open={confirming}
        title={t('confirmTitle')}
        okText={t('confirmOk')}
        okButtonProps={{ danger: true, 'data-testid': 'confirm-reset-access-token' }}
        confirmLoading={loading}
        onOk={() => void reset()}
        onCancel={() => setConfirming(false)}
      >
        {t('confirmBody')}
      </Modal>
      <Modal
        open={token !== ''}
        title={t('newTitle')}
        closable={false}
        maskClosable={false}
        footer={
          <Button type="primary" onClick={() => setToken('')}>
            {t('done')}
          </Button>
        }
        destroyOnHidden
      >
        <Alert type="warning" showIcon title={t('newHint')} style={{ marginBottom: 12 }} />
        <Space.Compact style={{ width: '100%' }}>
          <Input readOnly value={token} data-testid="new-access-token" />
          <Button onClick={() => void copy()}>{t('copy')}</Button>
        </Space.Compact>
      </Modal>
    </>
  );
}
