// Asks root once, on the dashboard, to set the site's Server address when it was never set (it still reads new-api's
// default http://localhost:3000 while the console is reached elsewhere): every link the gateway builds (OAuth
// returns, emails, chat links, passkeys) depends on it. "Use this address" saves the page's origin; "Not now" hides
// the prompt in this browser.
import { useState } from 'react';
import { Alert, Button, Space } from 'antd';
import { useTranslation } from 'react-i18next';
import { useMutation } from '@tanstack/react-query';
import { api } from '../../lib/api.js';
import { message } from '../../lib/feedback.js';
import { useStatus } from '../../context/status.js';
import { isRoot, useUser } from '../../context/user.js';
import { serverAddressUnset } from './overview.js';
import './i18n.js';

const DISMISSED_KEY = 'server-address-prompt-dismissed';

export default function ServerAddressPrompt() {
  const { t } = useTranslation('detail');
  const { status, refresh } = useStatus();
  const { user } = useUser();
  const [dismissed, setDismissed] = useState(() => localStorage.getItem(DISMISSED_KEY) === '1');
  const origin = window.location.origin;
  const saveAddress = useMutation({
    mutationFn: () => api.put('/api/option/', { key: 'ServerAddress', value: origin }),
    onSuccess: async (res) => {
      if (!res.success) return void message.error(res.message);
      void message.success(t('serverAddress.saved'));
      await refresh();
    },
  });
  const saving = saveAddress.isPending;
  if (!isRoot(user) || dismissed || !serverAddressUnset(status.server_address, origin)) return null;

  // a failed request was toasted by the api client
  const save = () => saveAddress.mutateAsync().catch(() => undefined);
  const later = () => {
    localStorage.setItem(DISMISSED_KEY, '1');
    setDismissed(true);
  };
  return (
    <Alert
      type="warning"
      showIcon
      data-testid="server-address-prompt"
      style={{ marginBottom: 16 }}
      title={t('serverAddress.title')}
      description={t('serverAddress.text', { current: status.server_address || '-', origin })}
      action={
        <Space direction="vertical">
          <Button
            size="small"
            type="primary"
            loading={saving}
            onClick={() => void save()}
            data-testid="server-address-use"
          >
            {t('serverAddress.use')}
          </Button>
          <Button size="small" onClick={later} data-testid="server-address-later">
            {t('serverAddress.later')}
          </Button>
        </Space>
      }
    />
  );
}
