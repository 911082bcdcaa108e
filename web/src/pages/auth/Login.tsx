import { useState } from 'react';
import { Alert, Button, Form, Input, Typography } from 'antd';
import { message } from '../../lib/feedback.js';
import { LockOutlined, UserOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { api } from '../../lib/api.js';
import { useStatus } from '../../context/status.js';
import { useUser, type StoredUser } from '../../context/user.js';
import { useTurnstile } from '../../components/turnstile/index.js';
import AuthCard from './AuthCard.js';
import OAuthButtons from '../oauth/OAuthButtons.js';
import PasskeyLoginButton from '../personal/passkeys/PasskeyLoginButton.js';
import { warnIfDefaultPassword } from '../../components/default-password/index.js';
import { NS } from './i18n.js';

export default function Login() {
  const { t } = useTranslation(NS);
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const { setUser } = useUser();
  const { status } = useStatus();
  const [loading, setLoading] = useState(false);
  const [form] = Form.useForm<{ username: string; password: string }>();
  const turnstile = useTurnstile();

  const submit = async () => {
    const { username = '', password = '' } = form.getFieldsValue();
    if (!username.trim() || !password) {
      void message.error(t('loginEmpty'));
      return;
    }
    setLoading(true);
    try {
      const res = await api.post<StoredUser>(turnstile.withToken('/api/user/login'), {
        username: username.trim(),
        password,
      });
      if (res.success && res.data) {
        setUser(res.data);
        void message.success(t('loginSuccess'));
        warnIfDefaultPassword(username.trim(), password);
        navigate('/token');
      } else {
        void message.error(res.message);
      }
    } catch {
      /* toasted by the client */
    } finally {
      turnstile.reset();
      setLoading(false);
    }
  };

  return (
    <AuthCard title={t('loginTitle')}>
      {params.get('expired') === 'true' ? (
        <Alert type="warning" showIcon title={t('expired')} style={{ marginBottom: 16 }} data-testid="expired-notice" />
      ) : null}
      <Form form={form} layout="vertical" onFinish={submit}>
        <Form.Item name="username" label={t('usernameOrEmail')}>
          <Input prefix={<UserOutlined />} placeholder={t('usernameOrEmailPh')} autoComplete="username" />
        </Form.Item>
        <Form.Item name="password" label={t('password')}>
          <Input.Password prefix={<LockOutlined />} placeholder={t('passwordPh')} autoComplete="current-password" />
        </Form.Item>
        {turnstile.widget}
        <Button type="primary" htmlType="submit" block loading={loading} disabled={!turnstile.ready}>
          {t('login')}
        </Button>
      </Form>
      <PasskeyLoginButton />
      <OAuthButtons />
      <Typography.Paragraph style={{ marginTop: 16, marginBottom: 0, textAlign: 'center' }}>
        {status.self_use_mode_enabled ? null : (
          <>
            {t('noAccount')} <Link to="/register">{t('toRegister')}</Link>
            {' · '}
          </>
        )}
        {t('forgot')} <Link to="/reset">{t('toReset')}</Link>
      </Typography.Paragraph>
    </AuthCard>
  );
}
