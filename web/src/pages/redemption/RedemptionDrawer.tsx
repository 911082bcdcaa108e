// Redemption code create/edit drawer (spec §5 Redemption, §9 presets and defaults).
// Props:
//   open, editId?           – shown state; editId set = edit that code, else create
//   onClose()               – cancel
//   onSaved(keys?)          – saved; on create, the new keys (shown by the page)
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { App as AntApp, Form, Input, InputNumber } from 'antd';
import { FormDrawer } from '../../components/FormDrawer.js';
import QuotaInput from '../../components/quota-input/QuotaInput.js';
import { api } from '../../lib/api.js';
import { renderQuota } from '../../lib/render.js';
import {
  checkRedemptionForm,
  defaultRedemptionForm,
  MAX_REDEMPTION_COUNT,
  QUOTA_PRESETS,
  redemptionToForm,
  type Redemption,
  type RedemptionFormValues,
} from './logic.js';

export default function RedemptionDrawer(props: {
  open: boolean;
  editId?: number;
  onClose(): void;
  onSaved(keys?: string[]): void;
}) {
  const { open, editId, onClose, onSaved } = props;
  const { t } = useTranslation('redemption');
  const { message } = AntApp.useApp();
  const [values, setValues] = useState<RedemptionFormValues>(defaultRedemptionForm);
  const [loading, setLoading] = useState(false);
  const [saving, setSaving] = useState(false);
  const isEdit = editId !== undefined;

  const set = <K extends keyof RedemptionFormValues>(k: K, v: RedemptionFormValues[K]) =>
    setValues((s) => ({ ...s, [k]: v }));

  useEffect(() => {
    if (!open) return;
    if (editId === undefined) {
      setValues(defaultRedemptionForm());
      return;
    }
    setLoading(true);
    api
      .get<Redemption>(`/api/redemption/${editId}`)
      .then((r) => {
        if (r.success && r.data) setValues(redemptionToForm(r.data));
        else message.error(r.message);
      })
      .catch(() => undefined)
      .finally(() => setLoading(false));
  }, [open, editId, message]);

  const submit = async () => {
    const check = checkRedemptionForm(values, (q) => renderQuota(q), editId);
    if (!check.ok) {
      message.error(t(check.error));
      return;
    }
    setSaving(true);
    try {
      if (isEdit) {
        const res = await api.put('/api/redemption/', check.payload);
        if (!res.success) {
          message.error(res.message);
          return;
        }
        message.success(t('msg.updated'));
        onSaved();
      } else {
        const res = await api.post<string[]>('/api/redemption/', check.payload);
        if (!res.success) {
          message.error(res.message);
          return;
        }
        onSaved(res.data ?? []);
      }
    } catch {
      /* toasted */
    } finally {
      setSaving(false);
    }
  };

  return (
    <FormDrawer
      open={open}
      onClose={onClose}
      width={480}
      title={isEdit ? t('drawer.edit') : t('drawer.add')}
      loading={loading}
      saving={saving}
      onSubmit={submit}
      cancelText={t('action.cancel')}
      submitText={t('action.submit')}
      testId="redemption"
    >
      <Form layout="vertical" data-testid="redemption-form">
        <Form.Item label={t('form.name')}>
          <Input
            value={values.name}
            onChange={(e) => set('name', e.target.value)}
            placeholder={t('form.namePh')}
            name="name"
            maxLength={20}
          />
        </Form.Item>
        <Form.Item label={t('form.quota')}>
          <QuotaInput
            value={values.quota}
            onChange={(q) => set('quota', q)}
            presets={QUOTA_PRESETS}
            placeholder={t('form.quotaPh')}
            data-testid="redemption-quota"
          />
        </Form.Item>
        {!isEdit && (
          <Form.Item label={t('form.count')}>
            <InputNumber
              min={1}
              max={MAX_REDEMPTION_COUNT}
              precision={0}
              value={values.count === null || values.count === '' ? null : Number(values.count)}
              onChange={(v) => set('count', v)}
              placeholder={t('form.countPh')}
              style={{ width: 160 }}
              name="count"
            />
          </Form.Item>
        )}
      </Form>
    </FormDrawer>
  );
}
