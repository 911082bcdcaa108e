// Create / edit drawer of a subscription plan: new-api's fields (title, price, duration, total and its reset, purchase
// limit, upgrade group, payment ids, order, enabled) and our windows and scope. Checked here as the server checks
// (checkPlanForm); a refusal the server still makes is shown as its message.
// Props: open; view (the plan edited; absent = a new plan); onClose (also after a save).
import { useEffect, useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { App as AntApp, Divider, Form, Input, InputNumber, Select, Switch, Typography } from 'antd';
import { FormDrawer } from '../../components/FormDrawer.js';
import QuotaInput from '../../components/quota-input/QuotaInput.js';
import { api } from '../../lib/api.js';
import { useEnabledModels, useGroups } from '../channel/queries.js';
import { NS } from './i18n.js';
import { formatSeconds } from './format.js';
import {
  checkPlanForm,
  defaultPlanForm,
  DURATION_UNITS,
  planToForm,
  RESET_PERIODS,
  type PlanFormValues,
  type PlanPayload,
  type PlanView,
} from './logic.js';
import { SUBSCRIPTION_KEY } from './queries.js';

export default function PlanDrawer({ open, view, onClose }: { open: boolean; view?: PlanView; onClose(): void }) {
  const { t } = useTranslation(NS);
  const { message } = AntApp.useApp();
  const qc = useQueryClient();
  const [values, setValues] = useState<PlanFormValues>(defaultPlanForm);
  const editId = view?.plan.id;
  const groups = useGroups();
  const models = useEnabledModels(open);

  useEffect(() => {
    if (open) setValues(view ? planToForm(view) : defaultPlanForm());
  }, [open, view]);
  const set = <K extends keyof PlanFormValues>(k: K, v: PlanFormValues[K]) => setValues((s) => ({ ...s, [k]: v }));

  const save = useMutation({
    mutationFn: (payload: PlanPayload) =>
      editId === undefined
        ? api.post('/api/subscription/admin/plans', payload)
        : api.put(`/api/subscription/admin/plans/${editId}`, payload),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      message.success(t(editId === undefined ? 'msg.created' : 'msg.updated'));
      void qc.invalidateQueries({ queryKey: SUBSCRIPTION_KEY });
      onClose();
    },
  });

  const submit = async () => {
    const check = checkPlanForm(values);
    if (!check.ok) return void message.error(t(check.error));
    // a thrown call was toasted by the api client
    await save.mutateAsync(check.payload).catch(() => undefined);
  };

  const count = (k: keyof PlanFormValues, min = 0) => (
    <InputNumber<number>
      min={min}
      precision={0}
      style={{ width: '100%' }}
      value={values[k] as number | null}
      onChange={(v) => set(k, v as never)}
      name={k}
    />
  );
  const quota = (k: keyof PlanFormValues) => (
    <QuotaInput value={values[k] as number | null} onChange={(q) => set(k, q as never)} data-testid={`plan-${k}`} />
  );
  const lengthHint = (seconds: number | null) =>
    seconds && seconds > 0 ? t('form.length', { length: formatSeconds(seconds) }) : undefined;
  const groupOptions = (groups.data ?? []).map((g) => ({ value: g, label: g }));

  return (
    <FormDrawer
      open={open}
      onClose={onClose}
      width={560}
      title={editId === undefined ? t('drawer.add') : t('drawer.edit')}
      saving={save.isPending}
      onSubmit={submit}
      cancelText={t('action.cancel')}
      submitText={t('action.submit')}
      testId="plan"
    >
      <Form layout="vertical" data-testid="plan-form">
        <Typography.Title level={5}>{t('section.basic')}</Typography.Title>
        <Form.Item label={t('form.title')} required>
          <Input value={values.title} onChange={(e) => set('title', e.target.value)} name="title" maxLength={128} />
        </Form.Item>
        <Form.Item label={t('form.subtitle')}>
          <Input
            value={values.subtitle}
            onChange={(e) => set('subtitle', e.target.value)}
            name="subtitle"
            maxLength={255}
          />
        </Form.Item>
        <Form.Item label={t('form.price')}>
          <InputNumber<number>
            min={0}
            max={9999}
            step={0.01}
            style={{ width: '100%' }}
            prefix={values.currency}
            value={values.price_amount}
            onChange={(v) => set('price_amount', v)}
            name="price_amount"
          />
        </Form.Item>
        <Form.Item label={t('form.currency')} extra={t('form.currencyHint')}>
          {/* new-api sells in USD whatever is sent; shown so the admin knows what the price means */}
          <Input value={values.currency} disabled name="currency" />
        </Form.Item>
        <Form.Item label={t('form.durationUnit')}>
          <Select
            value={values.duration_unit}
            onChange={(v) => set('duration_unit', v)}
            options={DURATION_UNITS.map((u) => ({ value: u, label: t(`unit.${u}`) }))}
            data-testid="plan-duration-unit"
          />
        </Form.Item>
        {values.duration_unit === 'custom' ? (
          <Form.Item label={t('form.customSeconds')} extra={lengthHint(values.custom_seconds)}>
            {count('custom_seconds', 1)}
          </Form.Item>
        ) : (
          <Form.Item label={t('form.durationValue')}>{count('duration_value', 1)}</Form.Item>
        )}
        <Form.Item label={t('form.sortOrder')}>{count('sort_order', -1e9)}</Form.Item>
        <Form.Item label={t('form.enabled')}>
          <Switch checked={values.enabled} onChange={(v) => set('enabled', v)} data-testid="plan-form-enabled" />
        </Form.Item>
        <Divider />
        <Typography.Title level={5}>{t('section.quota')}</Typography.Title>
        <Form.Item label={t('form.totalAmount')} extra={t('form.totalHint')}>
          {quota('total_amount')}
        </Form.Item>
        <Form.Item label={t('form.resetPeriod')}>
          <Select
            value={values.quota_reset_period}
            onChange={(v) => set('quota_reset_period', v)}
            options={RESET_PERIODS.map((p) => ({ value: p, label: t(`reset.${p}`) }))}
          />
        </Form.Item>
        {values.quota_reset_period === 'custom' && (
          <Form.Item label={t('form.resetSeconds')} extra={lengthHint(values.quota_reset_custom_seconds)}>
            {count('quota_reset_custom_seconds', 1)}
          </Form.Item>
        )}
        <Form.Item label={t('form.maxPurchase')} extra={t('form.maxPurchaseHint')}>
          {count('max_purchase_per_user')}
        </Form.Item>
        <Form.Item label={t('form.upgradeGroup')} extra={t('form.upgradeGroupHint')}>
          <Select
            allowClear
            value={values.upgrade_group || undefined}
            onChange={(v?: string) => set('upgrade_group', v ?? '')}
            options={groupOptions}
          />
        </Form.Item>
        <Divider />
        <Typography.Title level={5}>{t('section.windows')}</Typography.Title>
        <Typography.Paragraph type="secondary">{t('form.windowsHint')}</Typography.Paragraph>
        <Form.Item label={t('form.rollingSeconds')} extra={lengthHint(values.rolling_seconds)}>
          {count('rolling_seconds')}
        </Form.Item>
        <Form.Item label={t('form.rollingAmount')}>{quota('rolling_amount')}</Form.Item>
        <Form.Item label={t('form.dailyAmount')}>{quota('daily_amount')}</Form.Item>
        <Form.Item label={t('form.weeklyAmount')}>{quota('weekly_amount')}</Form.Item>
        <Form.Item label={t('form.monthlyAmount')}>{quota('monthly_amount')}</Form.Item>
        <Divider />
        <Typography.Title level={5}>{t('section.scope')}</Typography.Title>
        <Form.Item label={t('form.models')} extra={t('form.modelsHint')}>
          <Select
            mode="tags"
            value={values.models}
            onChange={(v: string[]) => set('models', v)}
            options={(models.data ?? []).map((m) => ({ value: m, label: m }))}
            data-testid="plan-models"
          />
        </Form.Item>
        <Form.Item label={t('form.groups')} extra={t('form.groupsHint')}>
          <Select
            mode="multiple"
            value={values.groups}
            onChange={(v: string[]) => set('groups', v)}
            options={groupOptions}
            data-testid="plan-groups"
          />
        </Form.Item>
        <Divider />
        <Typography.Title level={5}>{t('section.payment')}</Typography.Title>
        <Form.Item label={t('form.stripePriceId')}>
          <Input
            value={values.stripe_price_id}
            onChange={(e) => set('stripe_price_id', e.target.value)}
            name="stripe_price_id"
          />
        </Form.Item>
        <Form.Item label={t('form.creemProductId')}>
          <Input
            value={values.creem_product_id}
            onChange={(e) => set('creem_product_id', e.target.value)}
            name="creem_product_id"
          />
        </Form.Item>
      </Form>
    </FormDrawer>
  );
}
