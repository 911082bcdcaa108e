// The login's second step: after a password accepted with `require_2fa`, a TOTP code or a backup code completes it
// (POST /api/user/login/2fa answers as the password login would have).
import { useState } from 'react';
import { Button, Flex, Input, Typography } from 'antd';
import { SafetyOutlined } from '@ant-design/icons';
import { useMutation } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { message } from '../../../lib/feedback.js';
import { loginStepMutation } from './api.js';
import { NS } from './i18n.js';

interface Props<U> {
  onDone(user: U): void;
  onBack(): void;
}

export default function LoginCodeStep<U>({ onDone, onBack }: Props<U>) {
  const { t } = useTranslation(NS);
  const [code, setCode] = useState('');
  const step = useMutation({
    ...loginStepMutation<U>(),
    onSuccess: (res) => (res.success && res.data ? onDone(res.data) : void message.error(res.message)),
  });
  const submit = () => {
    if (!code.trim()) return void message.error(t('codeRequired'));
    // a thrown call was toasted by the api client
    step.mutateAsync(code.trim()).catch(() => undefined);
  };
  const loading = step.isPending;
  return (
    <Flex vertical gap={12} data-testid="login-2fa-step">
      <Typography.Title level={5} style={{ margin: 0 }}>
        {t('loginStepTitle')}
      </Typography.Title>
      <Typography.Text type="secondary">{t('loginStepHint')}</Typography.Text>
      <Input
        autoFocus
        prefix={<SafetyOutlined />}
        value={code}
        onChange={(e) => setCode(e.target.value)}
        onPressEnter={() => void submit()}
        placeholder={t('codeOrBackupPh')}
        autoComplete="one-time-code"
        data-testid="login-2fa-code"
      />
      <Button type="primary" block loading={loading} onClick={() => void submit()} data-testid="login-2fa-submit">
        {t('verify')}
      </Button>
      <Button type="link" onClick={onBack}>
        {t('back')}
      </Button>
    </Flex>
  );
}
