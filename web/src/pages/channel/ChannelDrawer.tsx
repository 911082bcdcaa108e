// Channel create/edit drawer (spec §3 channel fields and type-specific inputs, §5 channel form rules, §8
// duplicate-submit errors).
import { useEffect, useMemo, useRef, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Alert, App as AntApp, Button, Drawer, Form, Input, Select, Space, Spin } from 'antd';
import { LoadingOutlined } from '@ant-design/icons';
import { quiet } from '../../components/quiet.js';
import { api, failureText } from '../../lib/api.js';
import { fieldTexts, typeFormSpec, type Text } from './types.js';
import { entryOf, typeSelectOptions, useChannelTypes } from './catalogue.js';
import MultiKeyFields, { type MultiKeyChoice } from './MultiKeyFields.js';
import ChannelAdvancedFields from './ChannelAdvancedFields.js';
import { addKeyHint, createBody, multiKeyEdit, type ChannelInfo, type MultiKeyMode } from './multi-key.js';
import {
  addCustomModels,
  channelToForm,
  checkChannelForm,
  defaultChannelForm,
  mergeModels,
  normalizeBaseUrl,
  type Channel,
  type ChannelFormValues,
} from './logic.js';
import { CHANNEL_KEY, CHANNELS_KEY, useEnabledModels } from './queries.js';

const NS = 'channel';

/** The field POST /api/channel/check names when it refuses the form. */
type RefusedField = 'key' | 'base_url' | 'other';

export default function ChannelDrawer(props: {
  open: boolean;
  editId?: number;
  groups: string[];
  onClose(): void;
  onSaved(): void;
}) {
  const { open, editId, groups, onClose, onSaved } = props;
  const { t } = useTranslation(NS);
  const { message, modal } = AntApp.useApp();
  const qc = useQueryClient();
  const [values, setValues] = useState<ChannelFormValues>(defaultChannelForm);
  const [saving, setSaving] = useState(false);
  // The button stays clickable while saving so a second submit can be refused with a message (spec §8); the ref
  // is the guard because it changes synchronously, before React re-renders.
  const submittingRef = useRef(false);
  const [customModel, setCustomModel] = useState('');
  const enabledModels = useEnabledModels(open).data ?? [];
  // the field the server's channel check refused, marked until it is edited (the message is the toast, as before)
  const [fieldProblem, setFieldProblem] = useState<RefusedField>();
  const isEdit = editId !== undefined;
  const spec = typeFormSpec(values.type);
  const catalogue = useChannelTypes().data;
  const texts = fieldTexts(spec, entryOf(catalogue, values.type));
  const tx = ([key, params]: Text) => t(key, params);
  // the type the channel was loaded with: an edited channel keeps showing its type even when it is not relayable
  const [loadedType, setLoadedType] = useState<number>();
  // multi-key channels: the add mode on create, the key choice, and what an edit does with the keys typed
  const [multi, setMulti] = useState<MultiKeyChoice>({ addMode: 'batch', mkMode: 'random', keyMode: 'append' });
  const [loadedInfo, setLoadedInfo] = useState<ChannelInfo | null>(null);

  const set = <K extends keyof ChannelFormValues>(key: K, v: ChannelFormValues[K]) =>
    setValues((s) => ({ ...s, [key]: v }));

  useEffect(() => setFieldProblem(undefined), [values.type, values.key, values.base_url, values.other, open]);
  /** The Form.Item props marking a field the server refused. */
  const problemUnder = (field: RefusedField) => (fieldProblem === field ? { validateStatus: 'error' as const } : {});

  // the channel edited, read at each opening: kept in no cache (gcTime 0), so a reopening never shows an old copy
  const loaded = useQuery({
    queryKey: [...CHANNEL_KEY, editId],
    enabled: open && editId !== undefined,
    gcTime: 0,
    queryFn: async () => {
      const r = await api.get<Channel>(`/api/channel/${editId}`);
      if (!r.success || !r.data) {
        message.error(r.message);
        throw new Error(r.message);
      }
      return r.data;
    },
  });

  useEffect(() => {
    if (!open) return;
    setCustomModel('');
    setLoadedType(undefined);
    setLoadedInfo(null);
    setMulti({ addMode: 'batch', mkMode: 'random', keyMode: 'append' });
    if (editId === undefined) setValues(defaultChannelForm());
  }, [open, editId]);

  // the form starts from the channel once it is read (declared after the reset above, which runs first)
  useEffect(() => {
    const ch = loaded.data;
    if (!open || !ch) return;
    setValues(channelToForm(ch));
    setLoadedType(ch.type);
    const info = ch.channel_info ?? null;
    setLoadedInfo(info);
    if (info?.is_multi_key)
      setMulti((m) => ({ ...m, mkMode: (info.multi_key_mode === 'polling' ? 'polling' : 'random') as MultiKeyMode }));
  }, [open, loaded.data]);

  const defaultsForType = (type: number): string[] => entryOf(catalogue, type)?.models ?? [];

  const changeType = (type: number) => {
    setValues((s) => {
      const next = { ...s, type };
      // on create a fresh type starts from its built-in models
      if (!isEdit && s.models.length === 0) next.models = defaultsForType(type);
      const ts = typeFormSpec(type);
      if (ts.baseUrlChoices && !ts.baseUrlChoices.some((c) => c.value === next.base_url)) {
        next.base_url = ts.baseUrlChoices[0]!.value;
      }
      return next;
    });
  };

  const addCustom = () => {
    const r = addCustomModels(values.models, customModel);
    if (r.duplicated) message.warning(t('err.modelExists'));
    if (r.added > 0) {
      set('models', r.models);
      setCustomModel('');
    }
  };

  /** The upstream's models: a saved channel's by its id, else those the typed key and base URL list. */
  const upstream = useMutation({
    mutationFn: (typed?: { base_url: string; type: number; key: string }) =>
      typed
        ? api.post<string[]>('/api/channel/fetch_models', typed)
        : api.get<string[]>(`/api/channel/fetch_models/${editId}`),
  });
  const fetching = upstream.isPending;

  const fetchUpstream = async () => {
    if (!isEdit && values.key.trim() === '') {
      message.error(t('err.fetchKey'));
      return;
    }
    try {
      const res = await upstream.mutateAsync(
        isEdit
          ? undefined
          : {
              base_url: normalizeBaseUrl(values.base_url),
              type: values.type,
              key: values.key.split('\n')[0]?.trim() ?? '',
            },
      );
      if (res.success) {
        set('models', mergeModels(values.models, res.data ?? []));
        message.success(t('msg.fetchOk'));
      } else message.error(res.message || t('err.fetchFailed'));
    } catch {
      message.error(t('err.fetchFailed'));
    }
  };

  // the server's check of the typed fields, then the save; a save reloads the channel lists
  const checkFields = useMutation({
    mutationFn: (body: Record<string, unknown>) =>
      api.post<{ field?: RefusedField } | undefined>('/api/channel/check', body),
  });
  const save = useMutation({
    mutationFn: (v: { edit: boolean; body: unknown }) =>
      v.edit ? api.put('/api/channel/', v.body) : api.post('/api/channel/', v.body),
    onSuccess: (res) => {
      if (res.success) void qc.invalidateQueries({ queryKey: CHANNELS_KEY });
    },
  });

  const submit = async () => {
    if (submittingRef.current) {
      message.error(t('err.duplicateSubmit'));
      return;
    }
    const check = checkChannelForm(values, editId);
    if (!check.ok) {
      message.error(t(check.error, check.params));
      return;
    }
    submittingRef.current = true;
    setSaving(true);
    try {
      // the provider's rules for its fields are the server's (the same a save applies): asked before saving, so the
      // refusal shows (and the field it names is marked) before anything is written
      const { type, key, base_url, other } = check.payload;
      const verdict = await checkFields.mutateAsync({
        type,
        key,
        base_url,
        other,
        // a key list (batch, multi-key; Vertex AI's JSON array) is checked key by key
        mode: isEdit ? (loadedInfo?.is_multi_key ? 'multi_to_single' : 'single') : multi.addMode,
      });
      if (!verdict.success) {
        setFieldProblem(verdict.data?.field);
        message.error(failureText(verdict, isEdit ? 'error.updateFailed' : 'error.saveFailed'));
        return;
      }
      if (check.confirmV1) {
        const go = await modal.confirm({
          title: t('v1.title'),
          content: t('v1.content'),
          okText: t('action.confirm'),
          cancelText: t('action.cancel'),
        });
        if (!go) return;
      }
      const res = await save.mutateAsync(
        isEdit
          ? {
              edit: true,
              body: loadedInfo?.is_multi_key ? multiKeyEdit(check.payload, multi.mkMode, multi.keyMode) : check.payload,
            }
          : { edit: false, body: createBody(check.payload, multi.addMode, multi.mkMode) },
      );
      if (res.success) {
        message.success(t(isEdit ? 'msg.updated' : 'msg.created'));
        onSaved();
      } else message.error(failureText(res, isEdit ? 'error.updateFailed' : 'error.saveFailed'));
    } catch {
      /* toasted by api */
    } finally {
      submittingRef.current = false;
      setSaving(false);
    }
  };

  const groupOptions = useMemo(
    () => Array.from(new Set([...groups, ...values.groups])).map((g) => ({ value: g, label: g })),
    [groups, values.groups],
  );
  const modelOptions = useMemo(
    () =>
      Array.from(new Set([...values.models, ...defaultsForType(values.type), ...enabledModels])).map((m) => ({
        value: m,
        label: m,
      })),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [values.models, values.type, catalogue, enabledModels],
  );
  const keyHint = () => {
    if (isEdit)
      return loadedInfo?.is_multi_key ? t('mk.editHint', { count: loadedInfo.multi_key_size }) : t('form.keyEditHint');
    const [key, params] = addKeyHint(values.key, values.type, multi.addMode);
    const hint = t(key, params);
    return spec.keyIsJson && multi.addMode !== 'single' ? `${hint} · ${t('mk.jsonArrayHint')}` : hint;
  };

  return (
    <Drawer
      open={open}
      onClose={onClose}
      size={640}
      title={t(isEdit ? 'drawer.edit' : 'drawer.add')}
      destroyOnHidden
      footer={
        <Space style={{ float: 'right' }}>
          <Button onClick={onClose}>{t('action.cancel')}</Button>
          <Button
            type="primary"
            icon={saving ? <LoadingOutlined /> : undefined}
            aria-busy={saving}
            onClick={() => quiet(submit())}
            data-testid="channel-submit"
          >
            {t('action.submit')}
          </Button>
        </Space>
      }
    >
      <Spin spinning={loaded.isFetching}>
        <Form layout="vertical" data-testid="channel-form">
          <Form.Item label={t('form.type')}>
            <Select
              showSearch={{ optionFilterProp: 'label' }}
              value={values.type}
              onChange={changeType}
              options={typeSelectOptions(catalogue, isEdit ? loadedType : undefined, (type) =>
                t('type.unknown', { type }),
              )}
              data-testid="channel-type"
            />
          </Form.Item>
          {spec.notice && <Alert type="info" showIcon title={t(spec.notice)} style={{ marginBottom: 16 }} />}
          <Form.Item label={t('form.name')} required>
            <Input
              value={values.name}
              onChange={(e) => set('name', e.target.value)}
              placeholder={t('form.namePh')}
              name="name"
            />
          </Form.Item>
          {spec.baseUrlChoices ? (
            <Form.Item label={t('form.baseUrl')}>
              <Select
                value={values.base_url || spec.baseUrlChoices[0]!.value}
                onChange={(v: string) => set('base_url', v)}
                options={spec.baseUrlChoices.map((c) => ({ value: c.value, label: t(c.label) }))}
              />
            </Form.Item>
          ) : (
            <Form.Item
              label={t(spec.baseUrlLabel ?? 'form.baseUrl')}
              required={!!spec.baseUrlRequired}
              {...problemUnder('base_url')}
              extra={values.base_url.trim().replace(/\/+$/, '').endsWith('/v1') ? t('v1.inline') : undefined}
            >
              <Input
                value={values.base_url}
                onChange={(e) => set('base_url', e.target.value)}
                onBlur={() => set('base_url', normalizeBaseUrl(values.base_url))}
                placeholder={tx(texts.baseUrl)}
                name="base_url"
              />
            </Form.Item>
          )}
          {texts.other && (
            <Form.Item label={tx(texts.other.label)} required={values.type === 41} {...problemUnder('other')}>
              {texts.other.multiline ? (
                <Input.TextArea
                  autoSize={{ minRows: 2 }}
                  value={values.other}
                  onChange={(e) => set('other', e.target.value)}
                  placeholder={tx(texts.other.placeholder)}
                  name="other"
                />
              ) : (
                <Input
                  value={values.other}
                  onChange={(e) => set('other', e.target.value)}
                  placeholder={tx(texts.other.placeholder)}
                  name="other"
                />
              )}
            </Form.Item>
          )}
          <MultiKeyFields isEdit={isEdit} info={loadedInfo} value={multi} onChange={setMulti} />
          <Form.Item label={t('form.key')} required={!isEdit} extra={keyHint()} {...problemUnder('key')}>
            <Input.TextArea
              autoSize={{ minRows: 2, maxRows: 8 }}
              value={values.key}
              onChange={(e) => set('key', e.target.value)}
              placeholder={tx(texts.key)}
              name="key"
            />
          </Form.Item>
          {spec.organization && (
            <Form.Item label={t('form.organization')}>
              <Input
                value={values.openai_organization}
                onChange={(e) => set('openai_organization', e.target.value)}
                placeholder={t('form.organizationPh')}
              />
            </Form.Item>
          )}
          <Form.Item label={t('form.groups')}>
            <Select
              mode="tags"
              value={values.groups}
              onChange={(v: string[]) => set('groups', v)}
              options={groupOptions}
              placeholder={t('form.groupsPh')}
            />
          </Form.Item>
          <Form.Item label={t('form.models')} required>
            <Select
              mode="multiple"
              allowClear
              value={values.models}
              onChange={(v: string[]) => set('models', v)}
              options={modelOptions}
              placeholder={t('form.modelsPh')}
              maxTagCount={30}
              data-testid="channel-models"
            />
            <Space wrap style={{ marginTop: 8 }}>
              <Button
                size="small"
                onClick={() => set('models', mergeModels(values.models, defaultsForType(values.type)))}
              >
                {t('models.fillType')}
              </Button>
              <Button size="small" onClick={() => set('models', mergeModels(values.models, enabledModels))}>
                {t('models.fillAll')}
              </Button>
              <Button size="small" loading={fetching} onClick={() => quiet(fetchUpstream())}>
                {t('models.fetch')}
              </Button>
              <Button size="small" danger onClick={() => set('models', [])}>
                {t('models.clear')}
              </Button>
            </Space>
            <Space.Compact style={{ marginTop: 8, width: '100%' }}>
              <Input
                value={customModel}
                onChange={(e) => setCustomModel(e.target.value)}
                onPressEnter={addCustom}
                placeholder={t('models.customPh')}
                name="custom_model"
              />
              <Button onClick={addCustom} data-testid="channel-add-model">
                {t('models.add')}
              </Button>
            </Space.Compact>
          </Form.Item>
          <ChannelAdvancedFields values={values} set={set} />
        </Form>
      </Spin>
    </Drawer>
  );
}
