// A user's subscriptions in the admin's user editor (docs/decisions/0015-subscription-plans.md "Console"): the list,
// binding a plan without payment, invalidating (ends now) or deleting one, each after a confirmation. The server's
// notice of a group change ("用户分组将升级到 vip") is shown as it answers it.
import { useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { App as AntApp, Button, Divider, Popconfirm, Select, Space, Table, Tag, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { api, type Envelope } from '../../lib/api.js';
import { renderTime } from '../../lib/render.js';
import { translateServerMessage } from '../../i18n/server-message.js';
import { NS } from '../subscription/i18n.js';
import { subscriptionState, type SubscriptionSummary } from '../subscription/logic.js';
import { SUBSCRIPTION_KEY, usePlans, useUserSubscriptions } from '../subscription/queries.js';

const STATE_COLORS = { active: 'green', queued: 'gold', expired: 'default', cancelled: 'red' } as const;

type Change = { kind: 'bind'; planId: number } | { kind: 'invalidate' | 'delete'; id: number };

export default function UserSubscriptions({ userId }: { userId: number }) {
  const { t } = useTranslation(NS);
  const { message, modal } = AntApp.useApp();
  const qc = useQueryClient();
  const list = useUserSubscriptions(userId);
  const plans = usePlans(true);
  const [planId, setPlanId] = useState<number | undefined>();
  const now = Math.floor(Date.now() / 1000);
  const titleOf = (id: number) => plans.data?.find((v) => v.plan.id === id)?.plan.title ?? t('plan.unknown', { id });

  const change = useMutation({
    mutationFn: (c: Change): Promise<Envelope<{ message?: string } | null>> =>
      c.kind === 'bind'
        ? api.post(`/api/subscription/admin/users/${userId}/subscriptions`, { plan_id: c.planId })
        : c.kind === 'invalidate'
          ? api.post(`/api/subscription/admin/user_subscriptions/${c.id}/invalidate`)
          : api.del(`/api/subscription/admin/user_subscriptions/${c.id}`),
    onSuccess: (res, c) => {
      if (!res.success) return void message.error(res.message);
      message.success(t('msg.done'));
      // the group change new-api reports ("用户分组将升级到 vip"), in the console's language
      if (res.data?.message) modal.info({ content: translateServerMessage(res.data.message), centered: true });
      if (c.kind === 'bind') setPlanId(undefined);
      // a bind or an end may move the user to another group: the users list shows it
      void qc.invalidateQueries({ queryKey: ['users'] });
      return qc.invalidateQueries({ queryKey: SUBSCRIPTION_KEY });
    },
  });
  const run = (c: Change) => change.mutateAsync(c).catch(() => undefined);

  const columns: ColumnsType<SubscriptionSummary> = [
    {
      key: 'plan',
      title: t('col.title'),
      render: (_, { subscription: s }) => (
        <Space orientation="vertical" size={0}>
          <span>{titleOf(s.plan_id)}</span>
          {/* the id the confirmations name, and how the user got it */}
          <Typography.Text type="secondary">
            #{s.id} · {s.source === 'admin' ? t('source.admin') : t('source.order')}
          </Typography.Text>
        </Space>
      ),
    },
    {
      key: 'state',
      title: t('user.col.state'),
      render: (_, s) => {
        const state = subscriptionState(s.subscription, now);
        return <Tag color={STATE_COLORS[state]}>{t(`state.${state}`)}</Tag>;
      },
    },
    {
      key: 'period',
      title: t('user.col.period'),
      // start and end on two lines: the drawer is narrow and the actions must stay in view
      render: (_, { subscription: s }) => (
        <Space orientation="vertical" size={0}>
          <span>{renderTime(s.start_time)}</span>
          <span>{renderTime(s.end_time)}</span>
        </Space>
      ),
    },
    {
      key: 'actions',
      title: t('col.actions'),
      render: (_, { subscription: s }) => (
        <Space orientation="vertical" size={4}>
          {s.status === 'active' && s.end_time > now && (
            <Popconfirm
              title={t('user.confirmInvalidate', { id: s.id })}
              onConfirm={() => run({ kind: 'invalidate', id: s.id })}
              okButtonProps={{ 'data-testid': `user-sub-invalidate-ok-${s.id}` }}
            >
              <Button size="small" data-testid={`user-sub-invalidate-${s.id}`}>
                {t('user.invalidate')}
              </Button>
            </Popconfirm>
          )}
          <Popconfirm
            title={t('user.confirmDelete', { id: s.id })}
            onConfirm={() => run({ kind: 'delete', id: s.id })}
            okButtonProps={{ danger: true, 'data-testid': `user-sub-delete-ok-${s.id}` }}
          >
            <Button size="small" danger data-testid={`user-sub-delete-${s.id}`}>
              {t('user.delete')}
            </Button>
          </Popconfirm>
        </Space>
      ),
    },
  ];

  const chosen = plans.data?.find((v) => v.plan.id === planId);
  return (
    <div data-testid="user-subscriptions">
      <Divider />
      <Typography.Text strong>{t('user.title')}</Typography.Text>
      <Space.Compact style={{ width: '100%', margin: '8px 0' }}>
        <Select
          style={{ flex: 1 }}
          placeholder={t('user.pick')}
          value={planId}
          onChange={setPlanId}
          options={(plans.data ?? []).map((v) => ({ value: v.plan.id, label: v.plan.title }))}
          data-testid="user-sub-plan"
        />
        <Popconfirm
          title={t('user.confirmBind', { title: chosen?.plan.title ?? '' })}
          disabled={!chosen}
          onConfirm={() => chosen && run({ kind: 'bind', planId: chosen.plan.id })}
          okButtonProps={{ 'data-testid': 'user-sub-bind-ok' }}
        >
          <Button type="primary" disabled={!chosen} loading={change.isPending} data-testid="user-sub-bind">
            {t('user.bind')}
          </Button>
        </Popconfirm>
      </Space.Compact>
      <Table<SubscriptionSummary>
        size="small"
        rowKey={(s) => s.subscription.id}
        loading={list.isFetching}
        columns={columns}
        dataSource={list.data ?? []}
        pagination={false}
        scroll={{ x: 'max-content' }}
        locale={{ emptyText: t('user.empty') }}
      />
    </div>
  );
}
