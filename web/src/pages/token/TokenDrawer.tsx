// Token create/edit drawer (spec §5 Token form, §9 presets, expiry shortcuts and batch counts).
import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { translateServerMessage } from '../../i18n/server-message.js';
import { App as AntApp, Button, Form, Input, Select, Space, Switch, Typography } from 'antd';
import { FormDrawer } from '../../components/FormDrawer.js';
import { api } from '../../lib/api.js';
import { selfGroupsQuery, selfModelsQuery } from '../../lib/self.js';
import ExpiryPicker from './ExpiryPicker.js';
import QuotaInput from '../../components/quota-input/QuotaInput.js';
import LimitsSection from '../../components/usage-limits/LimitsSection.js';
import {
  hasLimits,
  limitsBody,
  limitsPath,
  loadLimits,
  saveLimits,
  type LimitSettings,
} from '../../components/usage-limits/api.js';
import {
  BATCH_COUNTS,
  batchNames,
  checkTokenForm,
  defaultTokenForm,
  expiryShortcut,
  QUOTA_PRESETS,
  TOKENS_KEY,
  tokenToForm,
  type ExpiryShortcut,
  type Token,
  type TokenFormValues,
} from './logic.js';

export default function TokenDrawer(props: {
  open: boolean;
  editId?: number;
  onClose(): void;
  /** after the token queries were invalidated; `createdKeys`: the keys of the tokens this save created (none for an edit) */
  onSaved(createdKeys?: string[]): void;
}) {
  const { open, editId, onClose, onSaved } = props;
  const { t } = useTranslation('token');
  const { message } = AntApp.useApp();
  const [values, setValues] = useState<TokenFormValues>(defaultTokenForm);
  const [customCount, setCustomCount] = useState(false);
  const [limits, setLimits] = useState<LimitSettings>({});
  const qc = useQueryClient();
  const isEdit = editId !== undefined;

  const set = <K extends keyof TokenFormValues>(k: K, v: TokenFormValues[K]) => setValues((s) => ({ ...s, [k]: v }));

  const models = useQuery({ ...selfModelsQuery, enabled: open }).data ?? [];
  const groups = useQuery({ ...selfGroupsQuery, enabled: open }).data ?? {};
  // the token being edited and its limits, read afresh each time the drawer opens (the form is their copy)
  const fresh = { enabled: open && isEdit, gcTime: 0, refetchOnWindowFocus: false } as const;
  const token = useQuery({
    ...fresh,
    queryKey: [...TOKENS_KEY, 'item', editId],
    queryFn: async () => {
      const r = await api.get<Token>(`/api/token/${editId}`);
      if (r.success && r.data) return r.data;
      message.error(r.message);
      return null;
    },
  });
  const tokenLimits = useQuery({
    ...fresh,
    queryKey: [...TOKENS_KEY, 'item-limits', editId],
    queryFn: () => loadLimits(limitsPath('token', editId!)),
  });
  const loadedLimits = tokenLimits.data;

  useEffect(() => {
    if (!open) return;
    setCustomCount(false);
    if (!isEdit) setValues(defaultTokenForm());
  }, [open, isEdit]);
  useEffect(() => {
    if (open && isEdit && token.data) setValues(tokenToForm(token.data));
  }, [open, isEdit, token.data]);
  useEffect(() => {
    if (open) setLimits(loadedLimits ?? {});
  }, [open, loadedLimits]);

  const shortcut = (kind: ExpiryShortcut) => set('expired', expiryShortcut(kind, Math.floor(Date.now() / 1000)));

  /** Updates the token then its limits; answers whether both were taken (a refusal is toasted). */
  const update = useMutation({
    mutationFn: async (payload: Record<string, unknown>) => {
      const res = await api.put('/api/token/', payload);
      if (!res.success) return res.message;
      return saveLimits(limitsPath('token', editId!), limits, loadedLimits ?? {});
    },
    onSuccess: (refused) => {
      if (refused) return void message.error(refused);
      message.success(t('msg.updated'));
      void qc.invalidateQueries({ queryKey: TOKENS_KEY });
      onSaved();
    },
  });
  /** Creates the batch one token at a time, stopping at the first refusal (toasted); the keys of those created. */
  const create = useMutation({
    mutationFn: async ({ payload, count }: { payload: Record<string, unknown>; count: number }) => {
      // each token is created with its limits in the same request, so none exists unlimited even for a moment
      const withLimits = hasLimits(limits) ? { usage_limits: limitsBody(limits) } : {};
      let created = 0;
      const keys: string[] = [];
      for (const name of batchNames(String(payload.name), count)) {
        const res = await api.post<Token | null>('/api/token/', { ...payload, ...withLimits, name });
        if (!res.success) {
          message.error(res.message);
          break;
        }
        created++;
        if (res.data?.key) keys.push(res.data.key);
      }
      return { created, keys };
    },
    // a batch cut short by a thrown call still created tokens: the list is read again either way
    onSettled: () => qc.invalidateQueries({ queryKey: TOKENS_KEY }),
    onSuccess: ({ created, keys }) => {
      if (created === 0) return;
      message.success(t('msg.created', { count: created }));
      onSaved(keys);
    },
  });
  const saving = update.isPending || create.isPending;
  const loading = token.isFetching || tokenLimits.isFetching;

  const submit = async () => {
    const check = checkTokenForm(values, editId);
    if (!check.ok) {
      message.error(t(check.error));
      return;
    }
    // a thrown call was toasted by the api client
    const done = isEdit ? update.mutateAsync(check.payload) : create.mutateAsync(check);
    await done.catch(() => undefined);
  };

  return (
    <FormDrawer
      open={open}
      onClose={onClose}
      width={560}
      title={isEdit ? t('drawer.edit') : t('drawer.add')}
      loading={loading}
      saving={saving}
      onSubmit={submit}
      cancelText={t('action.cancel')}
      submitText={t('action.submit')}
      testId="token"
    >
      <Form layout="vertical" data-testid="token-form">
        <Form.Item label={t('form.name')} required={!isEdit}>
          <Input
            value={values.name}
            onChange={(e) => set('name', e.target.value)}
            placeholder={t('form.namePh')}
            name="name"
          />
        </Form.Item>
        <Form.Item label={t('form.expiry')} extra={t('form.expiryHint')}>
          <ExpiryPicker value={values.expired} onChange={(v) => set('expired', v)} neverText={t('col.never')} />
          <Space wrap style={{ marginTop: 8 }}>
            <Button size="small" onClick={() => shortcut('never')}>
              {t('expiry.never')}
            </Button>
            <Button size="small" onClick={() => shortcut('hour')}>
              {t('expiry.hour')}
            </Button>
            <Button size="small" onClick={() => shortcut('day')}>
              {t('expiry.day')}
            </Button>
            <Button size="small" onClick={() => shortcut('month')}>
              {t('expiry.month')}
            </Button>
          </Space>
        </Form.Item>
        <Typography.Paragraph type="secondary">{t('form.quotaNote')}</Typography.Paragraph>
        <Form.Item label={t('form.unlimited')}>
          <Switch checked={values.unlimited_quota} onChange={(v) => set('unlimited_quota', v)} />
        </Form.Item>
        {!values.unlimited_quota && (
          <Form.Item label={t('form.quota')}>
            <QuotaInput
              value={values.remain_quota}
              onChange={(q) => set('remain_quota', q)}
              presets={QUOTA_PRESETS}
              placeholder={t('form.quotaPh')}
              data-testid="token-quota"
            />
          </Form.Item>
        )}
        {!isEdit && (
          <Form.Item label={t('form.count')} extra={t('form.countHint')}>
            <Space>
              <Select
                style={{ width: 140 }}
                value={customCount ? 'custom' : String(values.count)}
                onChange={(v: string) => {
                  if (v === 'custom') setCustomCount(true);
                  else {
                    setCustomCount(false);
                    set('count', Number(v));
                  }
                }}
                options={[
                  { value: '1', label: '1' },
                  ...BATCH_COUNTS.map((c) => ({ value: String(c), label: String(c) })),
                  { value: 'custom', label: t('form.countCustom') },
                ]}
              />
              {customCount && (
                <Input
                  style={{ width: 120 }}
                  value={values.count === null ? '' : String(values.count)}
                  onChange={(e) => set('count', e.target.value)}
                  placeholder={t('form.countPh')}
                />
              )}
            </Space>
          </Form.Item>
        )}
        <Form.Item label={t('form.modelLimits')}>
          <Switch checked={values.model_limits_enabled} onChange={(v) => set('model_limits_enabled', v)} />
        </Form.Item>
        {values.model_limits_enabled && (
          <Form.Item>
            <Select
              mode="multiple"
              value={values.model_limits}
              onChange={(v: string[]) => set('model_limits', v)}
              options={models.map((m) => ({ value: m, label: m }))}
              placeholder={t('form.modelLimitsPh')}
              showSearch
            />
          </Form.Item>
        )}
        <Form.Item label={t('form.allowIps')}>
          <Input.TextArea
            autoSize={{ minRows: 2, maxRows: 6 }}
            value={values.allow_ips}
            onChange={(e) => set('allow_ips', e.target.value)}
            placeholder={t('form.allowIpsPh')}
          />
        </Form.Item>
        <Form.Item label={t('form.group')}>
          <Select
            value={values.group}
            onChange={(v: string) => set('group', v)}
            options={[
              { value: '', label: t('form.groupUser') },
              ...Object.entries(groups).map(([g, info]) => ({
                value: g,
                label: `${g}${info?.desc ? ` - ${translateServerMessage(info.desc)}` : ''}${info?.ratio !== undefined ? ` (${info.ratio}x)` : ''}`,
              })),
            ]}
          />
        </Form.Item>
        <LimitsSection value={limits} onChange={setLimits} />
      </Form>
    </FormDrawer>
  );
}
