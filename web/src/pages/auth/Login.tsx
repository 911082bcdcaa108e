import { useState } from 'react';
import { Alert, Button, Form, Input, Typography } from 'antd';
import { message } from '../../lib/feedback.js';
import { LockOutlined, UserOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { useMutation } from '@tanstack/react-query';
import { Link, useLocation, useNavigate, useSearchParams } from 'react-router';
import { api } from '../../lib/api.js';
import { useStatus } from '../../context/status.js';
import { useUser, type StoredUser } from '../../context/user.js';
import { useTurnstile } from '../../components/turnstile/index.js';
import AuthCard from './AuthCard.js';
import OAuthButtons from '../oauth/OAuthButtons.js';
import PasskeyLoginButton from '../personal/passkeys/PasskeyLoginButton.js';
import { warnIfDefaultPassword } from '../../components/default-password/index.js';
import { NS } from './i18n.js';
import LoginCodeStep from '../personal/two-factor/LoginCodeStep.js';

export default function Login() {
  const { t } = useTranslation(NS);
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const { setUser } = useUser();
  const { status } = useStatus();
  const [loading, setLoading] = useState(false);
  // the password was accepted for a two-factor account: the code step replaces the form
  const [codeStep, setCodeStep] = useState(false);
  const [form] = Form.useForm<{ username: string; password: string }>();
  // after registering, the name just chosen (Register.tsx passes it in the navigation state)
  const registered = (useLocation().state as { username?: unknown } | null)?.username;
  const turnstile = useTurnstile();

  const signedIn = (user: StoredUser) => {
    setUser(user);
    void message.success(t('loginSuccess'));
    navigate('/token');
  };

  const login = useMutation({
    mutationFn: (c: { url: string; username: string; password: string }) =>
      api.post<StoredUser>(c.url, { username: c.username, password: c.password }),
  });

  const submit = async () => {
    if (!turnstile.check()) return;
    const { username = '', password = '' } = form.getFieldsValue();
    if (!username.trim() || !password) {
      void message.error(t('loginEmpty'));
      return;
    }
    setLoading(true);
    try {
      const res = await login.mutateAsync({
        url: turnstile.withToken('/api/user/login'),
        username: username.trim(),
        password,
      });
      if (res.success && (res.data as { require_2fa?: boolean } | undefined)?.require_2fa) {
        setCodeStep(true);
      } else if (res.success && res.data) {
        signedIn(res.data);
        warnIfDefaultPassword(username.trim(), password);
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
      {codeStep ? <LoginCodeStep<StoredUser> onDone={signedIn} onBack={() => setCodeStep(false)} /> : null}
      <Form
        form={form}
        layout="vertical"
        onFinish={submit}
        hidden={codeStep}
        initialValues={{ username: typeof registered === 'string' ? registered : '' }}
      >
        <Form.Item name="username" label={t('usernameOrEmail')}>
          <Input prefix={<UserOutlined />} placeholder={t('usernameOrEmailPh')} autoComplete="username" />
        </Form.Item>
        <Form.Item name="password" label={t('password')}>
          <Input.Password prefix={<LockOutlined />} placeholder={t('passwordPh')} autoComplete="current-password" />
        </Form.Item>
        {turnstile.widget}
        <Button type="primary" htmlType="submit" block loading={loading}>
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
