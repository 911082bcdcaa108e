// The editor's models (spec §3 channel fields): the chosen models, filled from the type's defaults, every enabled
// channel's models or the upstream's list (a saved channel's by its id, else the typed key's and base URL's), and
// custom names typed in. The drawer (ChannelDrawer.tsx) owns the values.
import { useMemo, useState } from 'react';
import { useMutation } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { App as AntApp, Button, Form, Input, Select, Space } from 'antd';
import { quiet } from '../../components/quiet.js';
import { api } from '../../lib/api.js';
import { addCustomModels, mergeModels, normalizeBaseUrl, type ChannelFormValues } from './logic.js';

export default function ChannelModelsField(props: {
  values: ChannelFormValues;
  set<K extends keyof ChannelFormValues>(key: K, v: ChannelFormValues[K]): void;
  /** the channel edited; undefined on create */
  editId: number | undefined;
  /** the built-in models of the chosen type */
  typeModels: string[];
  /** the models some enabled channel serves */
  enabledModels: string[];
}) {
  const { values, set, editId, typeModels, enabledModels } = props;
  const isEdit = editId !== undefined;
  const { t } = useTranslation('channel');
  const { message } = AntApp.useApp();
  const [customModel, setCustomModel] = useState('');

  const modelOptions = useMemo(
    () => Array.from(new Set([...values.models, ...typeModels, ...enabledModels])).map((m) => ({ value: m, label: m })),
    [values.models, typeModels, enabledModels],
  );

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

  return (
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
        <Button size="small" onClick={() => set('models', mergeModels(values.models, typeModels))}>
          {t('models.fillType')}
        </Button>
        <Button size="small" onClick={() => set('models', mergeModels(values.models, enabledModels))}>
          {t('models.fillAll')}
        </Button>
        <Button size="small" loading={upstream.isPending} onClick={() => quiet(fetchUpstream())}>
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
  );
}
