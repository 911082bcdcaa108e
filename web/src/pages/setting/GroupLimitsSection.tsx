// Default usage limits per group (issue 35): requests and tokens per minute and a budget per period for every user of a
// group that has no setting of its own, saved as the option UsageLimitGroupDefaults through the option route.
import { useEffect, useState } from 'react';
import { Button, Card, InputNumber, Select, Table, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import QuotaInput from '../../components/quota-input/QuotaInput.js';
import type { LimitSettings, Period, Reset } from '../../components/usage-limits/api.js';
import { NS as LIMITS_NS } from '../../components/usage-limits/i18n.js';
import { sameJson, type Options } from './logic.js';
import { GROUP_LIMITS_KEY, groupDefaultsJson, groupLimitRows, type GroupLimitRow } from './groupLimits.js';
import { useSaveOptions } from './useOptions.js';
import { NS } from './i18n.js';

const PERIODS: Period[] = ['daily', 'weekly', 'monthly'];
const RESETS: Reset[] = ['calendar', 'rolling'];
const whole = (v: number | null) => (v && v > 0 ? Math.floor(v) : undefined);

export default function GroupLimitsSection({ options }: { options: Options }) {
  const { t } = useTranslation(NS);
  const { t: tl } = useTranslation(LIMITS_NS);
  const { save, saving } = useSaveOptions();
  const [rows, setRows] = useState<GroupLimitRow[]>(() => groupLimitRows(options));
  useEffect(() => setRows(groupLimitRows(options)), [options]);

  const set = (group: string, patch: LimitSettings) =>
    setRows((rs) => rs.map((r) => (r.group === group ? { ...r, ...patch } : r)));

  const onSave = async () => {
    const value = groupDefaultsJson(rows);
    await save(sameJson(value, options[GROUP_LIMITS_KEY] ?? '{}') ? [] : [{ key: GROUP_LIMITS_KEY, value }]);
  };

  const number = (field: 'rpm' | 'tpm') => ({
    title: tl(field),
    key: field,
    render: (_: unknown, r: GroupLimitRow) => (
      <InputNumber<number>
        style={{ width: '100%' }}
        min={0}
        precision={0}
        value={r[field] ?? null}
        onChange={(v) => set(r.group, { [field]: whole(v) })}
        data-testid={`group-limit-${r.group}-${field}`}
      />
    ),
  });

  return (
    <Card title={t('sec.groupLimits')} data-testid="section-group-limits" style={{ marginBottom: 16 }}>
      <Typography.Paragraph type="secondary">{t('groupLimitsDesc')}</Typography.Paragraph>
      <Table<GroupLimitRow>
        rowKey="group"
        size="small"
        pagination={false}
        dataSource={rows}
        scroll={{ x: 900 }}
        style={{ marginBottom: 16 }}
        columns={[
          { title: t('groupLimitsGroup'), dataIndex: 'group', key: 'group' },
          number('rpm'),
          number('tpm'),
          {
            title: tl('budget'),
            key: 'budget',
            render: (_, r) => (
              <QuotaInput
                value={r.budget ?? null}
                onChange={(q) => set(r.group, { budget: whole(q) })}
                data-testid={`group-limit-${r.group}-budget`}
              />
            ),
          },
          {
            title: tl('period'),
            key: 'period',
            render: (_, r) => (
              <Select
                style={{ width: 110 }}
                value={r.period ?? 'monthly'}
                onChange={(p: Period) => set(r.group, { period: p })}
                options={PERIODS.map((p) => ({ value: p, label: tl(`period.${p}`) }))}
                data-testid={`group-limit-${r.group}-period`}
              />
            ),
          },
          {
            title: tl('reset'),
            key: 'reset',
            render: (_, r) => (
              <Select
                style={{ width: 170 }}
                value={r.reset ?? 'calendar'}
                onChange={(v: Reset) => set(r.group, { reset: v })}
                options={RESETS.map((v) => ({ value: v, label: tl(`reset.${v}`) }))}
                data-testid={`group-limit-${r.group}-reset`}
              />
            ),
          },
        ]}
      />
      <Button type="primary" onClick={() => void onSave()} loading={saving} data-testid="save-group-limits">
        {t('save', { name: t('sec.groupLimits') })}
      </Button>
    </Card>
  );
}
