// "Sign in with a passkey" under the login form (new-api-compat.md §9.8): shown when /api/status says passkey login
// is on and the browser has WebAuthn. No user name is asked: the authenticator offers the passkeys it holds for this
// site and the server finds the account from the one chosen.
import { useState } from 'react';
import { Button } from 'antd';
import { KeyOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { message } from '../../../lib/feedback.js';
import { useStatus } from '../../../context/status.js';
import { useUser } from '../../../context/user.js';
import { ceremonyToast, loginWithPasskey, passkeysSupported } from './api.js';
import { NS } from './i18n.js';

export default function PasskeyLoginButton() {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  const { setUser } = useUser();
  const navigate = useNavigate();
  const [busy, setBusy] = useState(false);
  if (!status.passkey_login || !passkeysSupported()) return null;

  const login = async () => {
    setBusy(true);
    try {
      const res = await loginWithPasskey();
      if (res.success && res.data) {
        setUser(res.data);
        void message.success(t('loginSuccess'));
        navigate('/token');
      } else {
        void message.error(res.message);
      }
    } catch (err) {
      const toast = ceremonyToast(err, t);
      if (toast) void message.error(toast);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Button
      block
      icon={<KeyOutlined />}
      loading={busy}
      style={{ marginTop: 12 }}
      onClick={() => void login()}
      data-testid="passkey-login"
    >
      {t('login')}
    </Button>
  );
}
