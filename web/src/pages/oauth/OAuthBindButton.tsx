// "Bind" action of a provider row in personal settings: the same state + authorize redirect as a login; the server
// binds instead of logging in because the session already holds a user, and the return page then goes to /setting.
import { Button } from 'antd';
import { useTranslation } from 'react-i18next';
import { useStatus } from '../../context/status.js';
import { useStartOAuth } from './OAuthButtons.js';
import type { OAuthProvider } from './providers.js';
import { NS } from './i18n.js';

export default function OAuthBindButton({ provider, bound }: { provider: OAuthProvider; bound: boolean }) {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  const { busy, start } = useStartOAuth();
  // A bound account cannot be rebound here (new-api has no rebinding), and a disabled provider cannot be started.
  const usable = !bound && provider.enabled(status);
  return (
    <Button
      size="small"
      disabled={!usable}
      loading={busy === provider.id}
      data-testid={`bind-${provider.id}`}
      onClick={() => void start(provider)}
    >
      {bound ? t('bound') : t('bind')}
    </Button>
  );
}
