// A collapsible "Limits" section for an editor form: requests and tokens per minute, a budget, its period and how
// it resets (calendar or rolling from its first charge; services/limits/ on the server). Folded by default, and folded it shows what is set, so the form stays short.
import { Collapse, Form, InputNumber, Select, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import QuotaInput from '../quota-input/QuotaInput.js';
import type { LimitSettings, Period, Reset } from './api.js';
import { NS } from './i18n.js';
import './i18n.js';

interface Props {
  value: LimitSettings;
  onChange(v: LimitSettings): void;
}

const PERIODS: Period[] = ['daily', 'weekly', 'monthly'];
const RESETS: Reset[] = ['calendar', 'rolling'];

export function summary(v: LimitSettings, t: (k: string, o?: Record<string, unknown>) => string): string {
  const parts = [];
  if (v.rpm) parts.push(t('tag.rpm', { limit: v.rpm }));
  if (v.tpm) parts.push(t('tag.tpm', { limit: v.tpm }));
  if (v.budget)
    parts.push(
      `${v.budget} / ${t(`period.${v.period ?? 'monthly'}`)}` + (v.reset === 'rolling' ? ` (${t('tag.rolling')})` : ''),
    );
  return parts.length ? parts.join(' · ') : t('none');
}

export default function LimitsSection({ value, onChange }: Props) {
  const { t } = useTranslation(NS);
  const set = (patch: LimitSettings) => onChange({ ...value, ...patch });
  const whole = (v: number | null) => (v && v > 0 ? Math.floor(v) : undefined);
  return (
    <Collapse
      size="small"
      data-testid="limits-section"
      items={[
        {
          key: 'limits',
          label: (
            <span>
              {t('section')}{' '}
              <Typography.Text type="secondary" data-testid="limits-summary">
                {summary(value, t)}
              </Typography.Text>
            </span>
          ),
          children: (
            <>
              <Typography.Paragraph type="secondary">{t('hint')}</Typography.Paragraph>
              <Form.Item label={t('rpm')}>
                <InputNumber<number>
                  style={{ width: '100%' }}
                  min={0}
                  precision={0}
                  value={value.rpm ?? null}
                  onChange={(v) => set({ rpm: whole(v) })}
                  data-testid="limits-rpm"
                />
              </Form.Item>
              <Form.Item label={t('tpm')}>
                <InputNumber<number>
                  style={{ width: '100%' }}
                  min={0}
                  precision={0}
                  value={value.tpm ?? null}
                  onChange={(v) => set({ tpm: whole(v) })}
                  data-testid="limits-tpm"
                />
              </Form.Item>
              <Form.Item label={t('budget')}>
                <QuotaInput
                  value={value.budget ?? null}
                  onChange={(q) => set({ budget: whole(q) })}
                  data-testid="limits-budget"
                />
              </Form.Item>
              <Form.Item label={t('period')}>
                <Select
                  value={value.period ?? 'monthly'}
                  onChange={(p: Period) => set({ period: p })}
                  options={PERIODS.map((p) => ({ value: p, label: t(`period.${p}`) }))}
                  data-testid="limits-period"
                />
              </Form.Item>
              <Form.Item label={t('reset')} extra={t(`reset.${value.reset ?? 'calendar'}Hint`)}>
                <Select
                  value={value.reset ?? 'calendar'}
                  onChange={(r: Reset) => set({ reset: r })}
                  options={RESETS.map((r) => ({ value: r, label: t(`reset.${r}`) }))}
                  data-testid="limits-reset"
                />
              </Form.Item>
            </>
          ),
        },
      ]}
    />
  );
}
