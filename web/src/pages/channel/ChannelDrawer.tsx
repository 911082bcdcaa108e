// Channel create/edit drawer (spec §3 channel fields and type-specific inputs, §5 channel form rules, §8
// duplicate-submit errors): the form's values and the fields up to the key and groups; the models are
// ChannelModelsField.tsx, the fields after them ChannelAdvancedFields.tsx, the save useChannelSubmit.ts.
import { useEffect, useMemo, useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Alert, App as AntApp, Button, Drawer, Form, Input, Select, Space, Spin } from 'antd';
import { LoadingOutlined } from '@ant-design/icons';
import { quiet } from '../../components/quiet.js';
import { api } from '../../lib/api.js';
import { fieldTexts, typeFormSpec, type Text } from './types.js';
import { entryOf, typeSelectOptions, useChannelTypes } from './catalogue.js';
import MultiKeyFields, { type MultiKeyChoice } from './MultiKeyFields.js';
import ChannelAdvancedFields from './ChannelAdvancedFields.js';
import ChannelModelsField from './ChannelModelsField.js';
import { addKeyHint, type ChannelInfo, type MultiKeyMode } from './multi-key.js';
import { channelToForm, defaultChannelForm, normalizeBaseUrl, type Channel, type ChannelFormValues } from './logic.js';
import { CHANNEL_KEY, useEnabledModels } from './queries.js';
import { useChannelSubmit, type RefusedField } from './useChannelSubmit.js';

const NS = 'channel';

export default function ChannelDrawer(props: {
  open: boolean;
  editId?: number;
  groups: string[];
  onClose(): void;
  onSaved(): void;
}) {
  const { open, editId, groups, onClose, onSaved } = props;
  const { t } = useTranslation(NS);
  const { message } = AntApp.useApp();
  const [values, setValues] = useState<ChannelFormValues>(defaultChannelForm);
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
  // the channel read whose values the form holds: until the effect below has put them in, the form stays behind the
  // spinner (a change typed into the frame between the answer's render and that effect would be overwritten by it)
  const [applied, setApplied] = useState<Channel>();

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
    setLoadedType(undefined);
    setLoadedInfo(null);
    setApplied(undefined);
    setMulti({ addMode: 'batch', mkMode: 'random', keyMode: 'append' });
    if (editId === undefined) setValues(defaultChannelForm());
  }, [open, editId]);

  // the form starts from the channel once it is read (declared after the reset above, which runs first)
  useEffect(() => {
    const ch = loaded.data;
    if (!open || !ch) return;
    setValues(channelToForm(ch));
    setApplied(ch);
    setLoadedType(ch.type);
    const info = ch.channel_info ?? null;
    setLoadedInfo(info);
    if (info?.is_multi_key)
      setMulti((m) => ({ ...m, mkMode: (info.multi_key_mode === 'polling' ? 'polling' : 'random') as MultiKeyMode }));
  }, [open, loaded.data]);

  const defaultsForType = (type: number): string[] => entryOf(catalogue, type)?.models ?? [];
  const typeModels = useMemo(() => entryOf(catalogue, values.type)?.models ?? [], [catalogue, values.type]);

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

  const { submit, saving } = useChannelSubmit({
    values,
    editId,
    loadedInfo,
    multi,
    onRefusedField: setFieldProblem,
    onSaved,
  });

  const groupOptions = useMemo(
    () => Array.from(new Set([...groups, ...values.groups])).map((g) => ({ value: g, label: g })),
    [groups, values.groups],
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
      <Spin spinning={loaded.isFetching || (editId !== undefined && applied !== loaded.data)}>
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
          <ChannelModelsField
            key={editId ?? 'new'}
            values={values}
            set={set}
            editId={editId}
            typeModels={typeModels}
            enabledModels={enabledModels}
          />
          <ChannelAdvancedFields values={values} set={set} />
        </Form>
      </Spin>
    </Drawer>
  );
}
