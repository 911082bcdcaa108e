// A quota field that speaks the site's unit (issue 34): dollars when the site displays currency (the quota units are
// shown beside), raw quota units otherwise. The form value stays in quota units either way, so callers' validation
// and request bodies do not change.
import { Button, InputNumber, Space, Typography } from 'antd';
import { useTranslation } from 'react-i18next';
import { displayInCurrency, quotaPerUnit, renderQuota } from '../../lib/render.js';
import { asQuota, dollarsToQuota, quotaToDollarValue } from './logic.js';
import { NS } from './i18n.js';
import { localeTag } from '../../i18n/index.js';

interface Props {
  /** in quota units */
  value?: number | string | null;
  onChange?(quota: number | null): void;
  /** quick choices, in quota units, shown as small buttons under the field */
  presets?: number[];
  placeholder?: string;
  disabled?: boolean;
  'data-testid'?: string;
}

export default function QuotaInput({ value, onChange, presets, placeholder, disabled, ...rest }: Props) {
  const { t } = useTranslation(NS);
  const perUnit = quotaPerUnit();
  const inCurrency = displayInCurrency();
  const quota = asQuota(value);
  const testId = rest['data-testid'];

  const field = inCurrency ? (
    <InputNumber<number>
      style={{ width: '100%' }}
      prefix="$"
      min={0}
      step={1}
      value={quota === null ? null : quotaToDollarValue(quota, perUnit)}
      onChange={(d) => onChange?.(d === null ? null : dollarsToQuota(d, perUnit))}
      placeholder={placeholder}
      disabled={disabled}
      data-testid={testId}
    />
  ) : (
    <InputNumber<number>
      style={{ width: '100%' }}
      precision={0}
      step={perUnit}
      suffix={t('quotaUnit')}
      value={quota}
      onChange={(q) => onChange?.(q === null ? null : Math.trunc(q))}
      placeholder={placeholder}
      disabled={disabled}
      data-testid={testId}
    />
  );
  return (
    <Space orientation="vertical" size={4} style={{ width: '100%' }}>
      {field}
      {inCurrency && quota !== null ? (
        <Typography.Text type="secondary" data-testid={testId ? `${testId}-units` : undefined}>
          {t('units', { quota: quota.toLocaleString(localeTag()) })}
        </Typography.Text>
      ) : null}
      {presets && !disabled ? (
        <Space wrap size={4}>
          {presets.map((q) => (
            <Button key={q} size="small" onClick={() => onChange?.(q)}>
              {renderQuota(q, 0)}
            </Button>
          ))}
        </Space>
      ) : null}
    </Space>
  );
}
