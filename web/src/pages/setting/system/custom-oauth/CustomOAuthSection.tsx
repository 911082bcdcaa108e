// "Custom OAuth providers" card of the system settings (docs/new-api-compat.md §9.9): the providers in a table with
// an enable switch, edit and delete, and the add / edit drawer. Saved through /api/custom-oauth-provider (root).
import { useState } from 'react';
import { App, Button, Card, Popconfirm, Space, Switch, Table, Typography } from 'antd';
import { PlusOutlined } from '@ant-design/icons';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import {
  deleteProviderMutation,
  providersQuery,
  PROVIDERS_KEY,
  saveProviderMutation,
  type CustomProvider,
} from './api.js';
import ProviderDrawer from './ProviderDrawer.js';
import { NS } from './i18n.js';

export default function CustomOAuthSection({ origin }: { origin: string }) {
  const { t } = useTranslation(NS);
  const { message } = App.useApp();
  const qc = useQueryClient();
  const providers = useQuery(providersQuery);
  // undefined: closed; null: adding; a provider: editing it
  const [editing, setEditing] = useState<CustomProvider | null | undefined>(undefined);
  const reload = () => qc.invalidateQueries({ queryKey: PROVIDERS_KEY });

  const save = useMutation({
    ...saveProviderMutation,
    onSuccess: (res) => (res.success ? reload() : void message.error(res.message)),
  });
  const deletion = useMutation({
    ...deleteProviderMutation,
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      void message.success(t('deleted'));
      return reload();
    },
  });
  // a thrown call was toasted by the api client
  const toggle = (p: CustomProvider, enabled: boolean) =>
    save.mutateAsync({ id: p.id, form: { enabled } }).catch(() => undefined);
  const remove = (p: CustomProvider) => deletion.mutateAsync(p.id).catch(() => undefined);

  return (
    <Card
      title={t('title')}
      data-testid="section-custom-oauth"
      style={{ marginBottom: 16 }}
      extra={
        <Button icon={<PlusOutlined />} onClick={() => setEditing(null)} data-testid="custom-oauth-add">
          {t('add')}
        </Button>
      }
    >
      <Typography.Paragraph type="secondary">{t('desc', { callback: `${origin}/oauth/<slug>` })}</Typography.Paragraph>
      <Table<CustomProvider>
        rowKey="id"
        size="small"
        pagination={false}
        loading={providers.isLoading}
        dataSource={providers.data ?? []}
        locale={{ emptyText: t('empty') }}
        columns={[
          { title: t('col.name'), dataIndex: 'name' },
          { title: t('col.slug'), dataIndex: 'slug' },
          {
            title: t('col.enabled'),
            dataIndex: 'enabled',
            render: (_, p) => (
              <Switch
                size="small"
                checked={p.enabled}
                onChange={(on) => void toggle(p, on)}
                data-testid={`custom-oauth-enabled-${p.slug}`}
              />
            ),
          },
          {
            title: t('col.actions'),
            key: 'actions',
            render: (_, p) => (
              <Space>
                <Button size="small" onClick={() => setEditing(p)} data-testid={`custom-oauth-edit-${p.slug}`}>
                  {t('edit')}
                </Button>
                <Popconfirm title={t('deleteConfirm', { name: p.name })} onConfirm={() => remove(p)}>
                  <Button size="small" danger data-testid={`custom-oauth-delete-${p.slug}`}>
                    {t('delete')}
                  </Button>
                </Popconfirm>
              </Space>
            ),
          },
        ]}
      />
      <ProviderDrawer
        open={editing !== undefined}
        provider={editing ?? null}
        onClose={() => setEditing(undefined)}
        onSaved={() => setEditing(undefined)}
      />
    </Card>
  );
}
