// Personal settings rows for the custom OAuth providers (docs/new-api-compat.md §9.9): one per provider the login
// page offers or the user is bound to, with the account id, "bind" (the same state + authorize redirect as a login;
// the server binds because a session exists) and "unbind" (the server refuses to remove the last way to sign in).
import { Button, Descriptions, Flex, Popconfirm, Typography } from 'antd';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { api } from '../../../lib/api.js';
import { message } from '../../../lib/feedback.js';
import { useStatus } from '../../../context/status.js';
import { useStartOAuth } from '../OAuthButtons.js';
import { customLoginProviders } from './providers.js';
import { NS } from './i18n.js';

export interface CustomBinding {
  provider_id: number;
  provider_name: string;
  provider_slug: string;
  provider_icon: string;
  provider_user_id: string;
}

const BINDINGS_KEY = ['user', 'oauth-bindings'];

export default function CustomOAuthBindings() {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  const qc = useQueryClient();
  const { busy, start } = useStartOAuth();
  const bindings = useQuery({
    queryKey: BINDINGS_KEY,
    queryFn: async () => {
      const res = await api.get<CustomBinding[]>('/api/user/oauth/bindings');
      return res.success && Array.isArray(res.data) ? res.data : [];
    },
  });
  const unbindCall = useMutation({
    mutationFn: (b: CustomBinding) => api.del(`/api/user/oauth/bindings/${b.provider_id}`),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      void message.success(t('unbound'));
      return qc.invalidateQueries({ queryKey: BINDINGS_KEY });
    },
  });
  const offered = customLoginProviders(status);
  const bound = bindings.data ?? [];
  const rows = [
    ...offered.map((p) => ({
      key: p.id,
      label: p.label,
      provider: p,
      binding: bound.find((b) => b.provider_id === p.providerId),
    })),
    // bound to a provider that is switched off now: still shown, so it can be unbound
    ...bound
      .filter((b) => !offered.some((p) => p.providerId === b.provider_id))
      .map((b) => ({ key: b.provider_slug, label: b.provider_name, provider: undefined, binding: b })),
  ];
  if (rows.length === 0) return null;

  // a thrown call was toasted by the api client
  const unbind = (b: CustomBinding) => unbindCall.mutateAsync(b).catch(() => undefined);

  return (
    <Descriptions column={1} size="small" data-testid="custom-oauth-bindings">
      {rows.map((r) => (
        <Descriptions.Item key={r.key} label={r.label}>
          <Flex justify="space-between" style={{ width: '100%' }} align="center">
            <span>
              {r.binding?.provider_user_id || <Typography.Text type="secondary">{t('notBound')}</Typography.Text>}
            </span>
            {r.binding ? (
              <Popconfirm title={t('unbindConfirm', { name: r.label })} onConfirm={() => unbind(r.binding!)}>
                <Button size="small" danger data-testid={`unbind-${r.key}`}>
                  {t('unbind')}
                </Button>
              </Popconfirm>
            ) : (
              <Button
                size="small"
                loading={busy === r.key}
                disabled={!r.provider}
                data-testid={`bind-${r.key}`}
                onClick={() => r.provider && void start(r.provider)}
              >
                {t('bind')}
              </Button>
            )}
          </Flex>
        </Descriptions.Item>
      ))}
    </Descriptions>
  );
}
