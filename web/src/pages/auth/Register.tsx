import { useEffect, useState } from 'react';
import { Button, Form, Input, Space, Typography } from 'antd';
import { message } from '../../lib/feedback.js';
import { useTranslation } from 'react-i18next';
import { useMutation } from '@tanstack/react-query';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { api } from '../../lib/api.js';
import { useStatus } from '../../context/status.js';
import { useTurnstile } from '../../components/turnstile/index.js';
import AuthCard from './AuthCard.js';
import { useCountdown } from './useCountdown.js';
import { NS } from './i18n.js';

export const AFF_KEY = 'aff';

interface RegisterForm {
  username?: string;
  password?: string;
  password2?: string;
  email?: string;
  verification_code?: string;
}

export default function Register() {
  const { t } = useTranslation(NS);
  const navigate = useNavigate();
  const [params] = useSearchParams();
  const { status } = useStatus();
  const [form] = Form.useForm<RegisterForm>();
  const [loading, setLoading] = useState(false);
  const countdown = useCountdown();
  const turnstile = useTurnstile();
  const verification = useMutation({
    mutationFn: (params: Record<string, unknown>) => api.get('/api/verification', params),
  });
  const register = useMutation({ mutationFn: (c: { url: string; body: unknown }) => api.post(c.url, c.body) });

  // An invite link (/register?aff=CODE) is remembered so it survives navigation before registering.
  useEffect(() => {
    const aff = params.get('aff');
    if (aff) localStorage.setItem(AFF_KEY, aff);
  }, [params]);

  const sendCode = async () => {
    if (!turnstile.check()) return;
    const email = (form.getFieldValue('email') as string | undefined)?.trim();
    if (!email) {
      void message.error(t('emailRequired'));
      return;
    }
    try {
      const res = await verification.mutateAsync({ email, ...turnstile.params() });
      if (res.success) {
        void message.success(t('codeSent'));
        countdown.start(30);
      } else void message.error(res.message);
    } catch {
      /* toasted */
    } finally {
      turnstile.reset();
    }
  };

  const submit = async (v: RegisterForm) => {
    if (!turnstile.check()) return;
    const username = v.username?.trim() ?? '';
    const password = v.password ?? '';
    if (!username || !password) return void message.error(t('required'));
    if (password.length < 8) return void message.error(t('passwordShort'));
    if (password !== v.password2) return void message.error(t('passwordMismatch'));
    if (status.email_verification && !v.email?.trim()) return void message.error(t('emailRequired'));
    setLoading(true);
    try {
      const res = await register.mutateAsync({
        url: turnstile.withToken('/api/user/register'),
        body: {
          username,
          password,
          password2: v.password2,
          email: v.email?.trim() ?? '',
          verification_code: v.verification_code?.trim() ?? '',
          aff_code: localStorage.getItem(AFF_KEY) ?? '',
        },
      });
      if (res.success) {
        void message.success(t('registerSuccess'));
        // the login form starts with the name just registered
        navigate('/login', { state: { username } });
      } else void message.error(res.message);
    } catch {
      /* toasted */
    } finally {
      turnstile.reset();
      setLoading(false);
    }
  };

  return (
    <AuthCard title={t('registerTitle')}>
      <Form form={form} layout="vertical" onFinish={submit}>
        <Form.Item name="username" label={t('username')}>
          <Input placeholder={t('usernamePh')} maxLength={20} autoComplete="username" />
        </Form.Item>
        <Form.Item name="password" label={t('password')}>
          <Input.Password placeholder={t('registerPasswordPh')} maxLength={20} autoComplete="new-password" />
        </Form.Item>
        <Form.Item name="password2" label={t('password2')}>
          <Input.Password placeholder={t('password2Ph')} maxLength={20} autoComplete="new-password" />
        </Form.Item>
        {status.email_verification ? (
          <>
            <Form.Item label={t('email')}>
              <Space.Compact style={{ width: '100%' }}>
                <Form.Item name="email" noStyle>
                  <Input placeholder={t('emailPh')} type="email" />
                </Form.Item>
                <Button onClick={sendCode} disabled={countdown.left > 0}>
                  {countdown.left > 0 ? t('resendIn', { n: countdown.left }) : t('sendCode')}
                </Button>
              </Space.Compact>
            </Form.Item>
            <Form.Item name="verification_code" label={t('code')}>
              <Input placeholder={t('codePh')} />
            </Form.Item>
          </>
        ) : null}
        {turnstile.widget}
        <Button type="primary" htmlType="submit" block loading={loading}>
          {t('register')}
        </Button>
      </Form>
      <Typography.Paragraph style={{ marginTop: 16, marginBottom: 0, textAlign: 'center' }}>
        {t('hasAccount')} <Link to="/login">{t('toLogin')}</Link>
      </Typography.Paragraph>
    </AuthCard>
  );
}
