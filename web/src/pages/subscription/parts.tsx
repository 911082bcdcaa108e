// Pieces the plan screens share: a plan's windows and scope as tags (admin table, wallet cards, user editor), and a
// running subscription's windows as bars (used / limit, what is left, when it resets).
import { Flex, Progress, Space, Tag, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { renderQuota } from '../../lib/render.js';
import { formatReset, formatSeconds } from './format.js';
import { barPercent, planWindows, windowRemaining, type PlanView, type PlanWindow, type WindowView } from './logic.js';
import { NS } from './i18n.js';

function useWindowLabel() {
  const { t } = useTranslation(NS);
  return (w: PlanWindow): string => {
    if (w.slot === 'main')
      return w.period === 'custom'
        ? t('win.custom', { length: formatSeconds(w.customSeconds) })
        : t(`win.${w.period === 'daily' || w.period === 'weekly' || w.period === 'monthly' ? w.period : 'never'}`);
    if (w.slot === 'rolling') return t('win.rolling', { length: formatSeconds(w.seconds) });
    return t(`win.${w.slot}`);
  };
}

/** A plan's windows as tags ("Daily $5.00"); a plan without any shows "Unlimited". */
export function PlanWindowTags({ view }: { view: PlanView }) {
  const { t } = useTranslation(NS);
  const label = useWindowLabel();
  const windows = planWindows(view);
  if (!windows.length) return <Tag>{t('win.unlimited')}</Tag>;
  return (
    <Space size={4} wrap>
      {windows.map((w) => (
        <Tag key={w.slot} color="blue" data-testid={`plan-window-${view.plan.id}-${w.slot}`}>
          {label(w)} {renderQuota(w.amount)}
        </Tag>
      ))}
    </Space>
  );
}

/** Which models and groups a plan pays for. */
export function PlanScope({ view }: { view: PlanView }) {
  const { t } = useTranslation(NS);
  const models = view.limits?.models ?? [];
  const groups = view.limits?.groups ?? [];
  return (
    <Space orientation="vertical" size={0}>
      <Typography.Text type="secondary">
        {models.length ? t('scope.models', { list: models.join(', ') }) : t('scope.allModels')}
      </Typography.Text>
      <Typography.Text type="secondary">
        {groups.length ? t('scope.groups', { list: groups.join(', ') }) : t('scope.allGroups')}
      </Typography.Text>
    </Space>
  );
}

/** One window of a running subscription: its bar, used / limit, what is left and when it resets. */
export function WindowBar({ w, now, testId }: { w: WindowView; now: number; testId: string }) {
  const { t } = useTranslation(NS);
  const left = windowRemaining(w);
  const reset = formatReset(w.resets_at, now);
  const percent = barPercent(w);
  return (
    <div data-testid={testId}>
      <Flex justify="space-between" wrap gap={8}>
        <Typography.Text strong>{t(`slot.${w.slot}`)}</Typography.Text>
        <Typography.Text data-testid={`${testId}-used`}>
          {w.limit > 0
            ? t('win.usedOf', { used: renderQuota(w.used), limit: renderQuota(w.limit) })
            : t('win.usedNoLimit', { used: renderQuota(w.used) })}
        </Typography.Text>
      </Flex>
      <Progress percent={percent} showInfo={false} status={percent >= 100 ? 'exception' : 'normal'} size="small" />
      <Flex justify="space-between" wrap gap={8}>
        <Typography.Text type="secondary" data-testid={`${testId}-left`}>
          {left === null ? t('win.unlimited') : t('win.left', { left: renderQuota(left) })}
        </Typography.Text>
        <Typography.Text type="secondary" data-testid={`${testId}-reset`}>
          {reset === null ? t('win.untilEnd') : t('win.resets', { time: reset })}
        </Typography.Text>
      </Flex>
    </div>
  );
}
