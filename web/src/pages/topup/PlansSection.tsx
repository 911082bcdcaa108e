// The wallet's subscription plans (docs/decisions/0015-subscription-plans.md "Console"): the enabled plans as cards
// bought with the balance, the caller's plans with each window as a bar (queued ones marked, past ones folded), and
// the billing preference. Hidden when the site sells no plan and the caller never had one.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { App as AntApp, Button, Card, Collapse, Divider, Flex, Radio, Space, Tag, Typography } from 'antd';
import { api } from '../../lib/api.js';
import { quotaPerUnit, renderQuota, renderTime, formatMoney } from '../../lib/render.js';
import { SELF_KEY } from '../../lib/self.js';
import { NS } from '../subscription/i18n.js';
import { formatPlanDuration } from '../subscription/format.js';
import {
  balanceCost,
  BILLING_PREFERENCES,
  hasCalendarWindow,
  queuedStart,
  shownWindows,
  splitSubscriptions,
  subscriptionState,
  type BillingPreference,
  type PlanView,
  type SubscriptionSummary,
} from '../subscription/logic.js';
import { PlanScope, PlanWindowTags, WindowBar } from '../subscription/parts.js';
import {
  plansQuery,
  selfSubscriptionsQuery,
  SELF_SUBSCRIPTIONS_KEY,
  SUBSCRIPTION_KEY,
} from '../subscription/queries.js';

const STATE_COLORS = { active: 'green', queued: 'gold', expired: 'default', cancelled: 'red' } as const;

export function PlansSection() {
  const { t } = useTranslation(NS);
  const { message, modal } = AntApp.useApp();
  const qc = useQueryClient();
  const plans = useQuery(plansQuery(false));
  const self = useQuery(selfSubscriptionsQuery);

  const buy = useMutation({
    mutationFn: (planId: number) => api.post('/api/subscription/balance/pay', { plan_id: planId }),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      message.success(t('wallet.bought'));
      void qc.invalidateQueries({ queryKey: SELF_KEY });
      return qc.invalidateQueries({ queryKey: SUBSCRIPTION_KEY });
    },
  });
  const preference = useMutation({
    mutationFn: (value: BillingPreference) =>
      api.put<{ billing_preference: BillingPreference }>('/api/subscription/self/preference', {
        billing_preference: value,
      }),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      message.success(t('pref.saved'));
      return qc.invalidateQueries({ queryKey: SELF_SUBSCRIPTIONS_KEY });
    },
  });

  const offered = plans.data ?? [];
  const mine = self.data?.all_subscriptions ?? [];
  if (!offered.length && !mine.length) return null;
  const now = Math.floor(Date.now() / 1000);
  const { running, queued, history } = splitSubscriptions(mine, now);
  const titleOf = (planId: number) =>
    offered.find((v) => v.plan.id === planId)?.plan.title ?? t('plan.unknown', { id: planId });

  const confirmBuy = (v: PlanView) => {
    const startsAt = queuedStart(mine, v.plan.id, now);
    return modal.confirm({
      title: t('wallet.confirmTitle'),
      content: (
        <>
          <Typography.Paragraph>
            {t('wallet.confirmContent', {
              title: v.plan.title,
              cost: renderQuota(balanceCost(v.plan.price_amount, quotaPerUnit())),
            })}
          </Typography.Paragraph>
          {startsAt !== null && (
            <Typography.Paragraph type="warning" data-testid="plan-buy-queued">
              {t('wallet.confirmQueued', { time: renderTime(startsAt) })}
            </Typography.Paragraph>
          )}
        </>
      ),
      okText: t('wallet.ok'),
      cancelText: t('action.cancel'),
      okButtonProps: { 'data-testid': 'plan-buy-confirm' },
      centered: true,
      onOk: () => buy.mutateAsync(v.plan.id).catch(() => undefined),
    });
  };

  const subscriptionCard = (s: SubscriptionSummary) => {
    const sub = s.subscription;
    const state = subscriptionState(sub, now);
    return (
      <Card key={sub.id} size="small" data-testid={`my-plan-${sub.id}`}>
        <Flex justify="space-between" wrap gap={8} style={{ marginBottom: 8 }}>
          <Space>
            <Typography.Text strong>{titleOf(sub.plan_id)}</Typography.Text>
            <Tag color={STATE_COLORS[state]} data-testid={`my-plan-${sub.id}-state`}>
              {t(`state.${state}`)}
            </Tag>
          </Space>
          <Typography.Text type="secondary">
            {state === 'queued'
              ? t('wallet.queuedFrom', { time: renderTime(sub.start_time) })
              : t('wallet.validUntil', { time: renderTime(sub.end_time) })}
          </Typography.Text>
        </Flex>
        <Space orientation="vertical" style={{ width: '100%' }}>
          {shownWindows(s.windows ?? []).map((w) => (
            <WindowBar key={w.slot} w={w} now={now} testId={`my-plan-${sub.id}-${w.slot}`} />
          ))}
        </Space>
      </Card>
    );
  };

  return (
    <div data-testid="plans-section">
      <Divider />
      <Typography.Title level={5}>{t('wallet.title')}</Typography.Title>
      <Flex wrap gap={12}>
        {offered.map((v) => (
          <Card key={v.plan.id} size="small" style={{ width: 280 }} data-testid={`plan-card-${v.plan.id}`}>
            <Typography.Text strong>{v.plan.title}</Typography.Text>
            {v.plan.subtitle ? <Typography.Paragraph type="secondary">{v.plan.subtitle}</Typography.Paragraph> : null}
            <Typography.Title level={4} style={{ margin: '8px 0' }}>
              {t('wallet.perDuration', {
                price: formatMoney(v.plan.price_amount, v.plan.currency),
                duration: formatPlanDuration(v.plan),
              })}
            </Typography.Title>
            <Space orientation="vertical" size={4} style={{ width: '100%' }}>
              <PlanWindowTags view={v} />
              <PlanScope view={v} />
              {v.plan.max_purchase_per_user > 0 && (
                <Typography.Text type="secondary">
                  {t('wallet.maxPurchase', { n: v.plan.max_purchase_per_user })}
                </Typography.Text>
              )}
              {v.plan.upgrade_group && (
                <Typography.Text type="secondary">
                  {t('wallet.upgrade', { group: v.plan.upgrade_group })}
                </Typography.Text>
              )}
              <Button
                type="primary"
                block
                loading={buy.isPending && buy.variables === v.plan.id}
                onClick={() => confirmBuy(v)}
                data-testid={`plan-buy-${v.plan.id}`}
              >
                {t('wallet.buy')}
              </Button>
            </Space>
          </Card>
        ))}
      </Flex>
      {offered.some(hasCalendarWindow) && (
        <Typography.Paragraph type="secondary" style={{ marginTop: 8 }} data-testid="plans-calendar-note">
          {t('wallet.calendarNote')}
        </Typography.Paragraph>
      )}
      <Typography.Title level={5} style={{ marginTop: 16 }}>
        {t('wallet.mine')}
      </Typography.Title>
      <Space orientation="vertical" style={{ width: '100%' }} data-testid="my-plans">
        {running.length + queued.length === 0 ? (
          <Typography.Text type="secondary">{t('wallet.noMine')}</Typography.Text>
        ) : (
          [...running, ...queued].map(subscriptionCard)
        )}
      </Space>
      {history.length > 0 && (
        <Collapse
          style={{ marginTop: 12 }}
          size="small"
          data-testid="plans-history"
          items={[
            {
              key: 'history',
              label: t('wallet.history', { n: history.length }),
              children: (
                <Space orientation="vertical" style={{ width: '100%' }}>
                  {history.map(({ subscription: sub }) => (
                    <Flex key={sub.id} justify="space-between" wrap gap={8}>
                      <Space>
                        <span>{titleOf(sub.plan_id)}</span>
                        <Tag color={STATE_COLORS[subscriptionState(sub, now)]}>
                          {t(`state.${subscriptionState(sub, now)}`)}
                        </Tag>
                      </Space>
                      <Typography.Text type="secondary">
                        {t('user.period', { start: renderTime(sub.start_time), end: renderTime(sub.end_time) })}
                      </Typography.Text>
                    </Flex>
                  ))}
                </Space>
              ),
            },
          ]}
        />
      )}
      <Typography.Title level={5} style={{ marginTop: 16 }}>
        {t('pref.title')}
      </Typography.Title>
      <Radio.Group
        value={self.data?.billing_preference}
        disabled={!self.data || preference.isPending}
        onChange={(e) => preference.mutate(e.target.value as BillingPreference)}
        data-testid="billing-preference"
      >
        <Space orientation="vertical">
          {BILLING_PREFERENCES.map((p) => (
            <Radio key={p} value={p} data-testid={`pref-${p}`}>
              <Typography.Text strong>{t(`pref.${p}`)}</Typography.Text>
              <br />
              <Typography.Text type="secondary">{t(`prefDesc.${p}`)}</Typography.Text>
            </Radio>
          ))}
        </Space>
      </Radio.Group>
    </div>
  );
}
