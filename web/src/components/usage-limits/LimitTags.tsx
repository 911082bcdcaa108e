// The token list's view of the limits in force: the budget as used / limit with its period (rolling ones say so) and
// its reset time, and the per-minute rates; a limit that comes from the user or its group says so.
import { Space, Tag, Tooltip } from 'antd';
import { useTranslation } from 'react-i18next';
import { dollarDigits, quotaToDollars, renderQuota, renderTime } from '../../lib/render.js';
import type { LimitStatus } from './api.js';
import { NS } from './i18n.js';
import './i18n.js';

export default function LimitTags({ status }: { status: LimitStatus | undefined }) {
  const { t } = useTranslation(NS);
  if (!status || (!status.rpm && !status.tpm && !status.budget)) return <span>-</span>;
  const from = (scope: 'token' | 'user') => (scope === 'user' ? t('tag.fromUser') : '');
  const b = status.budget;
  const rolling = b?.reset === 'rolling';
  const resets = b && (b.resetAt === null ? t('notStarted') : t('resets', { time: renderTime(b.resetAt) }));
  // used and limit in one precision, enough for the limit ("$0.00 / $0.00011" read as nothing allowed)
  const digits = b ? dollarDigits(quotaToDollars(b.limit)) : 2;
  return (
    <Space size={4} wrap data-testid="limit-tags">
      {b && (
        <Tooltip title={resets + from(b.scope)}>
          <Tag color={b.used >= b.limit ? 'red' : 'blue'}>
            {t('used', { used: renderQuota(b.used, digits), limit: renderQuota(b.limit, digits) })} ·{' '}
            {t(`period.${b.period}`)}
            {rolling ? ` (${t('tag.rolling')})` : ''}
          </Tag>
        </Tooltip>
      )}
      {status.rpm && <Tag>{t('tag.rpm', { limit: status.rpm.limit }) + from(status.rpm.scope)}</Tag>}
      {status.tpm && <Tag>{t('tag.tpm', { limit: status.tpm.limit }) + from(status.tpm.scope)}</Tag>}
    </Space>
  );
}
