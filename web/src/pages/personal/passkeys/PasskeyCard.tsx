// Personal settings card (new-api-compat.md §9.8): the user's passkeys with their names, when they were added and
// last used; add one for this device, remove one. Adding needs the administrator's switch and a WebAuthn browser;
// listing and removing do not.
import { useState } from 'react';
import { Alert, Button, Card, Empty, Flex, Input, List, Popconfirm, Space, Tag, Typography } from 'antd';
import { KeyOutlined } from '@ant-design/icons';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { message } from '../../../lib/feedback.js';
import { useStatus } from '../../../context/status.js';
import {
  ceremonyToast,
  passkeyIpHost,
  passkeysQuery,
  passkeysSupported,
  registerPasskeyMutation,
  removePasskeyMutation,
} from './api.js';
import { NS } from './i18n.js';
import { renderTime } from '../../../lib/render.js';

// in the console's language's form, as every other time it shows
const when = (iso: string | null): string => (iso ? renderTime(Date.parse(iso) / 1000) : '');

export default function PasskeyCard() {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  const qc = useQueryClient();
  const [name, setName] = useState('');
  const passkeys = useQuery(passkeysQuery);
  const reload = () => qc.invalidateQueries({ queryKey: passkeysQuery.queryKey });
  const register = useMutation({
    ...registerPasskeyMutation,
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      void message.success(t('added'));
      setName('');
      return reload();
    },
    // the browser's refusal of the ceremony; a failed call was toasted by the api client
    onError: (err) => {
      const toast = ceremonyToast(err, t);
      if (toast) void message.error(toast);
    },
  });
  const removal = useMutation({
    ...removePasskeyMutation,
    onSuccess: (res) => {
      if (res.success) void message.success(t('removed'));
      else void message.error(res.message);
      return reload();
    },
  });
  const adding = register.isPending;
  const removing = removal.isPending ? removal.variables : null;

  const enabled = !!status.passkey_login;
  // an IP-addressed site cannot hold passkeys: said here rather than as the browser's raw error
  const ipHost = passkeyIpHost(status.server_address);
  const supported = passkeysSupported() && !ipHost;

  const add = () => register.mutateAsync(name).catch(() => undefined);
  const remove = (id: number) => removal.mutateAsync(id).catch(() => undefined);

  const notice = !enabled
    ? t('disabled')
    : ipHost
      ? t('needsHostName', { host: ipHost })
      : !supported
        ? t('unsupported')
        : null;
  const items = passkeys.data?.passkeys ?? [];
  return (
    <Card title={t('title')} data-testid="passkey-card">
      <Typography.Paragraph type="secondary">{t('desc')}</Typography.Paragraph>
      {notice ? <Alert type="info" showIcon title={notice} style={{ marginBottom: 12 }} /> : null}
      <List
        size="small"
        loading={passkeys.isLoading}
        dataSource={items}
        locale={{ emptyText: <Empty image={Empty.PRESENTED_IMAGE_SIMPLE} description={t('empty')} /> }}
        renderItem={(p) => (
          <List.Item
            data-testid={`passkey-${p.id}`}
            actions={[
              <Popconfirm
                key="remove"
                title={t('removeConfirm')}
                okText={t('common:action.ok')}
                cancelText={t('common:action.cancel')}
                okButtonProps={{ 'data-testid': 'passkey-remove-confirm' } as Record<string, string>}
                onConfirm={() => remove(p.id)}
              >
                <Button size="small" danger loading={removing === p.id} data-testid={`passkey-remove-${p.id}`}>
                  {t('remove')}
                </Button>
              </Popconfirm>,
            ]}
          >
            <List.Item.Meta
              avatar={<KeyOutlined />}
              title={
                <Space size={4}>
                  <span>{p.name}</span>
                  {p.backup_state ? <Tag>{t('synced')}</Tag> : null}
                </Space>
              }
              description={
                <Space size={12} wrap>
                  <span>{t('created', { time: when(p.created_at) })}</span>
                  <span>{p.last_used_at ? t('lastUsed', { time: when(p.last_used_at) }) : t('neverUsed')}</span>
                </Space>
              }
            />
          </List.Item>
        )}
      />
      <Flex gap={8} style={{ marginTop: 12 }}>
        <Input
          value={name}
          maxLength={64}
          placeholder={t('namePh')}
          onChange={(e) => setName(e.target.value)}
          disabled={!enabled || !supported}
          data-testid="passkey-name"
        />
        <Button
          type="primary"
          icon={<KeyOutlined />}
          loading={adding}
          disabled={!enabled || !supported}
          onClick={() => void add()}
          data-testid="passkey-add"
        >
          {t('add')}
        </Button>
      </Flex>
    </Card>
  );
}
