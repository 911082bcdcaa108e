// Subscription plans admin page (/subscription; docs/decisions/0015-subscription-plans.md "Console"): every plan with
// its price, duration, windows and scope, an enabled switch (PATCH) and the drawer to create or edit one.
import { useEffect, useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { App as AntApp, Button, Card, Space, Switch, Table, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import PageHeader from '../../components/PageHeader.js';
import { quiet } from '../../components/quiet.js';
import { api } from '../../lib/api.js';
import { formatMoney } from '../../lib/render.js';
import { NS } from './i18n.js';
import type { PlanView } from './logic.js';
import { formatPlanDuration } from './format.js';
import { PlanScope, PlanWindowTags } from './parts.js';
import { SUBSCRIPTION_KEY, usePlans } from './queries.js';
import PlanDrawer from './PlanDrawer.js';

export default function SubscriptionPlansPage() {
  const { t } = useTranslation(NS);
  const { message } = AntApp.useApp();
  const qc = useQueryClient();
  const plans = usePlans(true);
  const [drawer, setDrawer] = useState<{ open: boolean; view?: PlanView }>({ open: false });
  useEffect(() => {
    if (plans.error) message.error(plans.error.message);
  }, [plans.error, message]);

  const toggle = useMutation({
    mutationFn: (p: { id: number; enabled: boolean }) =>
      api.patch(`/api/subscription/admin/plans/${p.id}`, { enabled: p.enabled }),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      message.success(t('msg.done'));
      return qc.invalidateQueries({ queryKey: SUBSCRIPTION_KEY });
    },
  });

  const columns: ColumnsType<PlanView> = [
    { key: 'id', title: t('col.id'), render: (_, v) => v.plan.id, width: 60 },
    {
      key: 'title',
      title: t('col.title'),
      render: (_, v) => (
        <Space orientation="vertical" size={0}>
          <Typography.Text strong>{v.plan.title}</Typography.Text>
          {v.plan.subtitle ? <Typography.Text type="secondary">{v.plan.subtitle}</Typography.Text> : null}
        </Space>
      ),
    },
    { key: 'price', title: t('col.price'), render: (_, v) => formatMoney(v.plan.price_amount, v.plan.currency) },
    { key: 'duration', title: t('col.duration'), render: (_, v) => formatPlanDuration(v.plan) },
    { key: 'windows', title: t('col.windows'), render: (_, v) => <PlanWindowTags view={v} /> },
    { key: 'scope', title: t('col.scope'), render: (_, v) => <PlanScope view={v} /> },
    {
      key: 'max',
      title: t('col.maxPurchase'),
      render: (_, v) => (v.plan.max_purchase_per_user > 0 ? v.plan.max_purchase_per_user : t('noLimit')),
    },
    {
      key: 'enabled',
      title: t('col.enabled'),
      render: (_, v) => (
        <Switch
          checked={v.plan.enabled}
          loading={toggle.isPending && toggle.variables?.id === v.plan.id}
          onChange={(enabled) => quiet(toggle.mutateAsync({ id: v.plan.id, enabled }).catch(() => undefined))}
          data-testid={`plan-enabled-${v.plan.id}`}
        />
      ),
    },
    {
      key: 'actions',
      title: t('col.actions'),
      fixed: 'right',
      render: (_, v) => (
        <Button size="small" onClick={() => setDrawer({ open: true, view: v })} data-testid={`plan-edit-${v.plan.id}`}>
          {t('action.edit')}
        </Button>
      ),
    },
  ];

  return (
    <Card data-testid="subscription-page">
      <PageHeader
        title={t('title')}
        extra={
          <Button type="primary" onClick={() => setDrawer({ open: true })} data-testid="plan-add">
            {t('action.add')}
          </Button>
        }
      />
      <Table<PlanView>
        rowKey={(v) => v.plan.id}
        loading={plans.isFetching}
        columns={columns}
        dataSource={plans.data ?? []}
        scroll={{ x: 'max-content' }}
        pagination={false}
        locale={{ emptyText: t('empty') }}
      />
      <PlanDrawer open={drawer.open} view={drawer.view} onClose={() => setDrawer({ open: false })} />
    </Card>
  );
}
