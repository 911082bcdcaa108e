// Third-party login buttons under the password form: one per provider /api/status enables (spec §2 Login).
import { useState } from 'react';
import { Button, Divider, Flex } from 'antd';
import { DiscordOutlined, GithubOutlined, KeyOutlined, LoginOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { message } from '../../lib/feedback.js';
import { useStatus } from '../../context/status.js';
import { enabledProviders, startOAuth, type OAuthProvider, type OAuthProviderId } from './providers.js';
import { NS } from './i18n.js';
import { customLoginProviders, isImageIcon, type CustomLoginProvider } from './custom/providers.js';
import { ExtraLoginButtons, extraLoginsOn } from '../login-bindings/index.js';

const ICONS: Record<OAuthProviderId, React.ReactNode> = {
  github: <GithubOutlined />,
  linuxdo: <LoginOutlined />,
  oidc: <KeyOutlined />,
  discord: <DiscordOutlined />,
};

export function ProviderIcon({ id, icon }: { id: OAuthProviderId | string; icon?: string }) {
  if (icon && isImageIcon(icon)) return <img src={icon} alt="" width={14} height={14} />;
  return <>{ICONS[id as OAuthProviderId] ?? <LoginOutlined />}</>;
}

/** Runs startOAuth with a busy flag and shows why no state came back. */
export function useStartOAuth() {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  const [busy, setBusy] = useState('');
  const start = async (provider: OAuthProvider | CustomLoginProvider) => {
    setBusy(provider.id);
    try {
      const failure = await startOAuth(provider, status);
      if (failure !== undefined) void message.error(t('stateFailed', { message: failure }));
    } catch {
      /* toasted by the client */
    } finally {
      setBusy('');
    }
  };
  return { busy, start };
}

export default function OAuthButtons() {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  const { busy, start } = useStartOAuth();
  // the built-ins first, then the operator's own providers (a custom provider's id is its slug)
  const providers: Array<OAuthProvider | CustomLoginProvider> = [
    ...enabledProviders(status),
    ...customLoginProviders(status),
  ];
  if (providers.length === 0 && !extraLoginsOn(status)) return null;
  return (
    <div data-testid="oauth-buttons">
      <Divider plain>{t('otherLogin')}</Divider>
      <Flex wrap gap={8} justify="center">
        {providers.map((p) => (
          <Button
            key={p.id}
            icon={<ProviderIcon id={p.id} icon={'icon' in p ? p.icon : undefined} />}
            loading={busy === p.id}
            aria-label={t('loginWith', { name: p.label })}
            data-testid={`oauth-${p.id}`}
            onClick={() => void start(p)}
          >
            {p.label}
          </Button>
        ))}
        <ExtraLoginButtons />
      </Flex>
    </div>
  );
}
