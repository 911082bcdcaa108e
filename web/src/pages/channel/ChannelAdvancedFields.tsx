// The editor's fields after the models (spec §3 channel fields): mappings and overrides as JSON, the input limit, the
// test model, auto-ban, priority, weight and tag. The drawer (ChannelDrawer.tsx) owns the values.
import { useTranslation } from 'react-i18next';
import { Form, Input, InputNumber, Space, Switch } from 'antd';
import type { ChannelFormValues } from './logic.js';

export default function ChannelAdvancedFields(props: {
  values: ChannelFormValues;
  set<K extends keyof ChannelFormValues>(key: K, v: ChannelFormValues[K]): void;
}) {
  const { values, set } = props;
  const { t } = useTranslation('channel');
  return (
    <>
      <Form.Item label={t('form.mapping')} extra={t('form.mappingHint')}>
        <Input.TextArea
          autoSize={{ minRows: 2, maxRows: 8 }}
          value={values.model_mapping}
          onChange={(e) => set('model_mapping', e.target.value)}
          placeholder={'{\n  "gpt-3.5-turbo": "gpt-3.5-turbo-0125"\n}'}
        />
      </Form.Item>
      <Form.Item label={t('form.statusMapping')} extra={t('form.statusMappingHint')}>
        <Input.TextArea
          autoSize={{ minRows: 1, maxRows: 6 }}
          value={values.status_code_mapping}
          onChange={(e) => set('status_code_mapping', e.target.value)}
          placeholder={'{\n  "400": "500"\n}'}
        />
      </Form.Item>
      <Form.Item label={t('form.paramOverride')} extra={t('form.paramOverrideHint')}>
        <Input.TextArea
          autoSize={{ minRows: 1, maxRows: 6 }}
          value={values.param_override}
          onChange={(e) => set('param_override', e.target.value)}
          placeholder={'{\n  "temperature": 0\n}'}
        />
      </Form.Item>
      <Form.Item label={t('form.setting')} extra={t('form.settingHint')}>
        <Input.TextArea
          autoSize={{ minRows: 1, maxRows: 6 }}
          value={values.setting}
          onChange={(e) => set('setting', e.target.value)}
          placeholder={'{\n  "thinking_to_content": true\n}'}
          name="setting"
        />
      </Form.Item>
      <Form.Item label={t('form.maxInputTokens')} extra={t('form.maxInputTokensHint')}>
        <InputNumber
          value={values.max_input_tokens as number}
          min={0}
          precision={0}
          style={{ width: 200 }}
          onChange={(v) => set('max_input_tokens', v ?? 0)}
          name="max_input_tokens"
        />
      </Form.Item>
      <Form.Item label={t('form.testModel')}>
        <Input
          value={values.test_model}
          onChange={(e) => set('test_model', e.target.value)}
          placeholder={t('form.testModelPh')}
        />
      </Form.Item>
      <Space size="large" wrap>
        <Form.Item label={t('form.autoBan')}>
          <Switch checked={values.auto_ban} onChange={(v) => set('auto_ban', v)} />
        </Form.Item>
        <Form.Item label={t('col.priority')}>
          <InputNumber
            value={values.priority as number}
            min={-999}
            precision={0}
            onChange={(v) => set('priority', v ?? 0)}
          />
        </Form.Item>
        <Form.Item label={t('col.weight')}>
          <InputNumber value={values.weight as number} min={0} precision={0} onChange={(v) => set('weight', v ?? 0)} />
        </Form.Item>
      </Space>
      <Form.Item label={t('col.tag')}>
        <Input value={values.tag} onChange={(e) => set('tag', e.target.value)} placeholder={t('form.tagPh')} />
      </Form.Item>
    </>
  );
}
