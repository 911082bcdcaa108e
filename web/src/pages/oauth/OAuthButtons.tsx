// Third-party login buttons under the password form: one per provider /api/status enables (spec §2 Login).
import { Button, Divider, Flex } from 'antd';
import { DiscordOutlined, GithubOutlined, KeyOutlined, LoginOutlined } from '@ant-design/icons';
import { useMutation } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { message } from '../../lib/feedback.js';
import { useStatus } from '../../context/status.js';
import { enabledProviders, startOAuthMutation, type OAuthProvider, type OAuthProviderId } from './providers.js';
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

/** Starts a login or binding with a provider (busy: its id while the state is asked) and shows why no state came back. */
export function useStartOAuth() {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  const startCall = useMutation({
    ...startOAuthMutation,
    onSuccess: (failure) => {
      if (failure !== null) void message.error(t('stateFailed', { message: failure }));
    },
  });
  // a thrown call was toasted by the api client
  const start = (provider: OAuthProvider | CustomLoginProvider) =>
    startCall.mutateAsync({ provider, status }).catch(() => undefined);
  const busy = startCall.isPending ? startCall.variables.provider.id : '';
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
