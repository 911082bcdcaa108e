// One settings card: a form over a list of option fields with its own save button (saves only the changed keys).
// Props:
//   id: string                        – section id (data-testid `section-<id>`)
//   title: ReactNode                  – card title
//   fields: FieldDef[]                – the options edited here (a module constant: its identity resets the form)
//   options: Options                  – stored option values
//   description?: ReactNode           – note shown above the fields
//   children?: ReactNode | (form) => ReactNode – extra content inside the form (after the fields)
//   beforeSave?(values): string|null  – extra check; a returned message is shown and nothing is saved
//   extraChanges?(values): OptionChange[] – changes not expressed as fields (e.g. the domain list)
//   extra?: ReactNode                 – card header actions
import { useEffect, type ReactNode } from 'react';
import {
  App,
  Button,
  Card,
  Col,
  Form,
  Input,
  InputNumber,
  Row,
  Select,
  Switch,
  Typography,
  type FormInstance,
} from 'antd';
import { useTranslation } from 'react-i18next';
import {
  collectChanges,
  initialFormValues,
  isHttpUrl,
  isValidJson,
  orderChanges,
  type FieldDef,
  type OptionChange,
  type Options,
} from './logic.js';
import { useSaveOptions } from './useOptions.js';
import { NS } from './i18n.js';
import { helpKey } from './help.js';

export interface OptionSectionProps {
  id: string;
  title: ReactNode;
  fields: FieldDef[];
  options: Options;
  description?: ReactNode;
  children?: ReactNode | ((form: FormInstance) => ReactNode);
  beforeSave?(values: Record<string, unknown>): string | null;
  extraChanges?(values: Record<string, unknown>): OptionChange[];
  extra?: ReactNode;
}

export const HTTP_URL_FIELDS = new Set(['oidc.well_known']);

export function FieldItem({ field }: { field: FieldDef }) {
  const { t } = useTranslation(NS);
  const label = t(field.label);
  // every field says what it does in one line: its own note, else its `help.<key>` text (help.ts)
  const extra = (
    <>
      <div>{t(field.extra ?? helpKey(field.key))}</div>
      {field.warning ? <Typography.Text type="warning">{t(field.warning)}</Typography.Text> : null}
    </>
  );
  const common = { name: field.key, label, extra, 'data-testid': `field-${field.key}` } as const;
  const placeholder = field.placeholder ? t(field.placeholder) : undefined;
  switch (field.kind) {
    case 'switch':
      return (
        <Form.Item {...common} valuePropName="checked">
          <Switch aria-label={label} />
        </Form.Item>
      );
    case 'number':
      return (
        <Form.Item {...common} rules={[{ required: true, message: t('required') }]}>
          <InputNumber
            min={field.min}
            max={field.max}
            step={field.step}
            style={{ width: '100%' }}
            placeholder={placeholder}
          />
        </Form.Item>
      );
    case 'json':
      return (
        <Form.Item
          {...common}
          rules={[
            {
              validator: (_, v: string) =>
                isValidJson(v ?? '') ? Promise.resolve() : Promise.reject(new Error(t('invalidJson'))),
            },
          ]}
        >
          <Input.TextArea rows={field.rows ?? 6} placeholder={placeholder} style={{ fontFamily: 'monospace' }} />
        </Form.Item>
      );
    case 'textarea':
      return (
        <Form.Item {...common}>
          <Input.TextArea rows={field.rows ?? 4} placeholder={placeholder} />
        </Form.Item>
      );
    case 'secret':
      return (
        <Form.Item {...common}>
          <Input.Password placeholder={placeholder ?? t('secretPh')} autoComplete="new-password" />
        </Form.Item>
      );
    case 'select':
      return (
        <Form.Item {...common}>
          <Select options={(field.choices ?? []).map((c) => ({ value: c.value, label: t(c.label) }))} />
        </Form.Item>
      );
    default:
      return (
        <Form.Item
          {...common}
          rules={
            HTTP_URL_FIELDS.has(field.key)
              ? [
                  {
                    validator: (_, v: string) =>
                      !v || isHttpUrl(v) ? Promise.resolve() : Promise.reject(new Error(t('httpUrl'))),
                  },
                ]
              : undefined
          }
        >
          <Input placeholder={placeholder} />
        </Form.Item>
      );
  }
}

export function FieldGrid({ fields }: { fields: FieldDef[] }) {
  return (
    <Row gutter={16}>
      {fields.map((f) => {
        const span = f.span ?? (f.kind === 'json' || f.kind === 'textarea' ? 24 : 8);
        const item = <FieldItem field={f} />;
        return (
          <Col key={f.key} xs={24} md={span === 24 ? 24 : 12} lg={span}>
            {f.visibleWhen ? (
              <Form.Item noStyle dependencies={[f.visibleWhen]}>
                {({ getFieldValue }) => (getFieldValue(f.visibleWhen!) ? item : null)}
              </Form.Item>
            ) : (
              item
            )}
          </Col>
        );
      })}
    </Row>
  );
}

export default function OptionSection({
  id,
  title,
  fields,
  options,
  description,
  children,
  beforeSave,
  extraChanges,
  extra,
}: OptionSectionProps) {
  const { t } = useTranslation(NS);
  const { message } = App.useApp();
  const [form] = Form.useForm();
  const { save, saving } = useSaveOptions();

  useEffect(() => {
    form.setFieldsValue(initialFormValues(fields, options));
  }, [form, fields, options]);

  const onSave = async () => {
    try {
      await form.validateFields();
    } catch {
      void message.error(t('checkInput'));
      return;
    }
    const values = form.getFieldsValue(true) as Record<string, unknown>;
    const problem = beforeSave?.(values);
    if (problem) {
      void message.error(problem);
      return;
    }
    const changes = orderChanges([...collectChanges(fields, options, values), ...(extraChanges?.(values) ?? [])]);
    await save(changes);
  };

  return (
    <Card title={title} extra={extra} data-testid={`section-${id}`} style={{ marginBottom: 16 }}>
      {description ? <Typography.Paragraph type="secondary">{description}</Typography.Paragraph> : null}
      <Form form={form} layout="vertical" initialValues={initialFormValues(fields, options)}>
        <FieldGrid fields={fields} />
        {typeof children === 'function' ? children(form) : children}
        <Button type="primary" onClick={() => void onSave()} loading={saving} data-testid={`save-${id}`}>
          {t('save', { name: typeof title === 'string' ? title : '' })}
        </Button>
      </Form>
    </Card>
  );
}
