import { useState } from 'react';
import { Button, Form, Input, Typography } from 'antd';
import { message } from '../../lib/feedback.js';
import { MailOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { useMutation } from '@tanstack/react-query';
import { Link } from 'react-router';
import { api } from '../../lib/api.js';
import { useTurnstile } from '../../components/turnstile/index.js';
import AuthCard from './AuthCard.js';
import { useCountdown } from './useCountdown.js';
import { NS } from './i18n.js';

export default function PasswordReset() {
  const { t } = useTranslation(NS);
  const [email, setEmail] = useState('');
  const [loading, setLoading] = useState(false);
  const countdown = useCountdown();
  const turnstile = useTurnstile();

  const sendReset = useMutation({
    mutationFn: (params: Record<string, unknown>) => api.get('/api/reset_password', params),
  });

  const submit = async () => {
    if (!turnstile.check()) return;
    if (!email.trim()) return void message.error(t('resetEmailRequired'));
    setLoading(true);
    try {
      const res = await sendReset.mutateAsync({ email: email.trim(), ...turnstile.params() });
      if (res.success) {
        void message.success(t('resetSent'));
        setEmail('');
      } else void message.error(res.message);
      countdown.start(30);
    } catch {
      /* toasted */
    } finally {
      turnstile.reset();
      setLoading(false);
    }
  };

  return (
    <AuthCard title={t('resetTitle')}>
      <Form layout="vertical" onFinish={submit}>
        <Form.Item>
          <Input
            prefix={<MailOutlined />}
            placeholder={t('resetEmailPh')}
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </Form.Item>
        {turnstile.widget}
        <Button type="primary" htmlType="submit" block loading={loading} disabled={countdown.left > 0}>
          {countdown.left > 0 ? t('resetRetry', { n: countdown.left }) : t('resetSubmit')}
        </Button>
      </Form>
      <Typography.Paragraph style={{ marginTop: 16, marginBottom: 0, textAlign: 'center' }}>
        <Link to="/login">{t('toLogin')}</Link>
      </Typography.Paragraph>
    </AuthCard>
  );
}
