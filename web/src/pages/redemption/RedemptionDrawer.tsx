// Redemption code create/edit drawer (spec §5 Redemption, §9 presets and defaults).
// Props:
//   open, editId?           – shown state; editId set = edit that code, else create
//   onClose()               – cancel
//   onSaved(keys?)          – saved (the code queries are invalidated); on create, the new keys (shown by the page)
import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
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
  REDEMPTIONS_KEY,
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
  const qc = useQueryClient();
  const isEdit = editId !== undefined;

  const set = <K extends keyof RedemptionFormValues>(k: K, v: RedemptionFormValues[K]) =>
    setValues((s) => ({ ...s, [k]: v }));

  // the code being edited, read afresh each time the drawer opens (not kept: the form is its copy)
  const item = useQuery({
    queryKey: [...REDEMPTIONS_KEY, 'item', editId],
    enabled: open && isEdit,
    gcTime: 0,
    refetchOnWindowFocus: false,
    queryFn: async () => {
      const r = await api.get<Redemption>(`/api/redemption/${editId}`);
      if (r.success && r.data) return r.data;
      message.error(r.message);
      return null;
    },
  });
  useEffect(() => {
    if (!open) return;
    if (!isEdit) setValues(defaultRedemptionForm());
    else if (item.data) setValues(redemptionToForm(item.data));
  }, [open, isEdit, item.data]);

  const save = useMutation({
    mutationFn: (payload: Record<string, unknown>) =>
      isEdit ? api.put<unknown>('/api/redemption/', payload) : api.post<string[]>('/api/redemption/', payload),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      if (isEdit) message.success(t('msg.updated'));
      void qc.invalidateQueries({ queryKey: REDEMPTIONS_KEY });
      onSaved(isEdit ? undefined : ((res.data as string[] | null) ?? []));
    },
  });

  const submit = async () => {
    const check = checkRedemptionForm(values, (q) => renderQuota(q), editId);
    if (!check.ok) {
      message.error(t(check.error));
      return;
    }
    // a thrown call was toasted by the api client
    await save.mutateAsync(check.payload).catch(() => undefined);
  };

  return (
    <FormDrawer
      open={open}
      onClose={onClose}
      width={480}
      title={isEdit ? t('drawer.edit') : t('drawer.add')}
      loading={item.isFetching}
      saving={save.isPending}
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
