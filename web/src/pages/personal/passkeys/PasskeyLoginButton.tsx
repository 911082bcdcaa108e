// "Sign in with a passkey" under the login form (new-api-compat.md §9.8): shown when /api/status says passkey login
// is on and the browser has WebAuthn. No user name is asked: the authenticator offers the passkeys it holds for this
// site and the server finds the account from the one chosen.
import { Button } from 'antd';
import { KeyOutlined } from '@ant-design/icons';
import { useMutation } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { message } from '../../../lib/feedback.js';
import { useStatus } from '../../../context/status.js';
import { useUser } from '../../../context/user.js';
import { ceremonyToast, passkeyLoginMutation, passkeyIpHost, passkeysSupported } from './api.js';
import { NS } from './i18n.js';

export default function PasskeyLoginButton() {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  const { setUser } = useUser();
  const navigate = useNavigate();
  const passkeyLogin = useMutation({
    ...passkeyLoginMutation,
    onSuccess: (res) => {
      if (!res.success || !res.data) return void message.error(res.message);
      setUser(res.data);
      void message.success(t('loginSuccess'));
      navigate('/token');
    },
    // the browser's refusal of the ceremony; a failed call was toasted by the api client
    onError: (err) => {
      const toast = ceremonyToast(err, t);
      if (toast) void message.error(toast);
    },
  });
  // an IP-addressed site cannot use passkeys (the personal page says why)
  if (!status.passkey_login || !passkeysSupported() || passkeyIpHost(status.server_address)) return null;

  const busy = passkeyLogin.isPending;
  const login = () => passkeyLogin.mutateAsync().catch(() => undefined);

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
