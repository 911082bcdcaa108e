import { useState } from 'react';
import { Alert, Button, Input, Space, Typography } from 'antd';
import { message } from '../../lib/feedback.js';
import { useTranslation } from 'react-i18next';
import { useMutation } from '@tanstack/react-query';
import { Link, useSearchParams } from 'react-router';
import { api } from '../../lib/api.js';
import { copyText } from '../../lib/storage.js';
import AuthCard from './AuthCard.js';
import { NS } from './i18n.js';

export default function PasswordResetConfirm() {
  const { t } = useTranslation(NS);
  const [params] = useSearchParams();
  const email = params.get('email') ?? '';
  const token = params.get('token') ?? '';
  const [loading, setLoading] = useState(false);
  const [newPassword, setNewPassword] = useState('');

  const confirmReset = useMutation({
    mutationFn: (body: { email: string; token: string }) => api.post<string>('/api/user/reset', body),
  });
  const submit = async () => {
    setLoading(true);
    try {
      const res = await confirmReset.mutateAsync({ email, token });
      if (res.success && res.data) {
        setNewPassword(res.data);
        if (await copyText(res.data)) void message.success(t('newPasswordCopied', { password: res.data }));
      } else void message.error(res.message);
    } catch {
      /* toasted */
    } finally {
      setLoading(false);
    }
  };

  return (
    <AuthCard title={t('confirmTitle')}>
      {!email || !token ? (
        <Alert type="error" showIcon title={t('confirmMissing')} />
      ) : (
        <Space direction="vertical" style={{ width: '100%' }}>
          <Input value={email} readOnly />
          {newPassword ? (
            <>
              <Alert type="success" showIcon title={t('passwordResetDone')} />
              <Typography.Text>{t('newPassword')}:</Typography.Text>
              <Typography.Text code copyable data-testid="new-password">
                {newPassword}
              </Typography.Text>
            </>
          ) : (
            <Button type="primary" block loading={loading} onClick={submit}>
              {t('confirmSubmit')}
            </Button>
          )}
        </Space>
      )}
      <Typography.Paragraph style={{ marginTop: 16, marginBottom: 0, textAlign: 'center' }}>
        <Link to="/login">{t('toLogin')}</Link>
      </Typography.Paragraph>
    </AuthCard>
  );
}
