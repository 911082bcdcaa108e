// Tag edit dialog (spec §5 Tag edit): every field optional; a blank new tag dissolves the tag.
import { useEffect, useState } from 'react';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Alert, App as AntApp, Form, Input, InputNumber, Modal, Select } from 'antd';
import { quiet } from '../../components/quiet.js';
import { api, failureText } from '../../lib/api.js';
import { buildTagEditPayload, type TagEditValues } from './logic.js';
import { CHANNELS_KEY, useEnabledModels } from './queries.js';

const empty = (tag: string): TagEditValues => ({
  new_tag: tag,
  priority: null,
  weight: null,
  model_mapping: '',
  models: [],
  groups: [],
});

export default function TagEditModal(props: {
  tag: string | null;
  groups: string[];
  onClose(): void;
  onSaved(): void;
}) {
  const { tag, groups, onClose, onSaved } = props;
  const { t } = useTranslation('channel');
  const { message } = AntApp.useApp();
  const qc = useQueryClient();
  const [values, setValues] = useState<TagEditValues>(empty(''));
  const models = useEnabledModels(tag !== null).data ?? [];

  useEffect(() => {
    if (tag !== null) setValues(empty(tag));
  }, [tag]);

  /** A refusal is toasted and keeps the dialog; a success closes it and reloads the channels. */
  const save = useMutation({
    mutationFn: (payload: unknown) => api.put('/api/channel/tag', payload),
    onSuccess: async (res) => {
      if (!res.success) return void message.error(failureText(res, 'error.updateFailed'));
      message.success(t('msg.updated'));
      onSaved();
      await qc.invalidateQueries({ queryKey: CHANNELS_KEY });
    },
  });

  const set = <K extends keyof TagEditValues>(k: K, v: TagEditValues[K]) => setValues((s) => ({ ...s, [k]: v }));

  const submit = async () => {
    if (tag === null) return;
    const check = buildTagEditPayload(tag, values);
    if (!check.ok) {
      message.warning(t(check.error));
      return;
    }
    // a failed request was toasted by the api client
    await save.mutateAsync(check.payload).catch(() => undefined);
  };

  return (
    <Modal
      open={tag !== null}
      title={t('tagEdit.title', { tag: tag ?? '' })}
      onCancel={onClose}
      onOk={() => quiet(submit())}
      confirmLoading={save.isPending}
      okText={t('action.submit')}
      cancelText={t('action.cancel')}
      destroyOnHidden
    >
      <Alert type="info" showIcon title={t('tagEdit.hint')} style={{ marginBottom: 12 }} />
      <Form layout="vertical">
        <Form.Item label={t('tagEdit.newTag')} extra={t('tagEdit.newTagHint')}>
          <Input value={values.new_tag} onChange={(e) => set('new_tag', e.target.value)} />
        </Form.Item>
        <Form.Item label={t('col.priority')}>
          <InputNumber
            value={values.priority as number | null}
            precision={0}
            min={-999}
            onChange={(v) => set('priority', v)}
            style={{ width: '100%' }}
          />
        </Form.Item>
        <Form.Item label={t('col.weight')}>
          <InputNumber
            value={values.weight as number | null}
            precision={0}
            min={0}
            onChange={(v) => set('weight', v)}
            style={{ width: '100%' }}
          />
        </Form.Item>
        <Form.Item label={t('form.mapping')}>
          <Input.TextArea
            autoSize={{ minRows: 2 }}
            value={values.model_mapping}
            onChange={(e) => set('model_mapping', e.target.value)}
          />
        </Form.Item>
        <Form.Item label={t('form.models')}>
          <Select
            mode="tags"
            value={values.models}
            onChange={(v: string[]) => set('models', v)}
            options={models.map((m) => ({ value: m, label: m }))}
          />
        </Form.Item>
        <Form.Item label={t('form.groups')}>
          <Select
            mode="tags"
            value={values.groups}
            onChange={(v: string[]) => set('groups', v)}
            options={groups.map((g) => ({ value: g, label: g }))}
          />
        </Form.Item>
      </Form>
    </Modal>
  );
}
