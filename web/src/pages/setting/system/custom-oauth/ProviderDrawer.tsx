// Add / edit drawer of a custom OAuth provider: name, slug, icon, client credentials (the secret write-only), the
// endpoints (typed, or filled from the discovery document the server fetches), scopes, the user-info field paths
// and how the client authenticates at the token endpoint.
// Props: open, provider (null: a new one), onClose(), onSaved() (after the list was invalidated)
import { useEffect } from 'react';
import { App, Button, Col, Drawer, Form, Input, Row, Select, Space, Switch } from 'antd';
import { CloudDownloadOutlined } from '@ant-design/icons';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import {
  discoverMutation,
  EMPTY_FORM,
  endpointsOf,
  PROVIDERS_KEY,
  saveProviderMutation,
  type CustomProvider,
  type ProviderForm,
} from './api.js';
import { NS } from './i18n.js';

const isHttpUrl = (v: string) => /^https?:\/\/[^\s/]+/i.test(v.trim());
const FIELD_PATHS = ['user_id_field', 'username_field', 'display_name_field', 'email_field'] as const;
const ENDPOINTS = ['authorization_endpoint', 'token_endpoint', 'user_info_endpoint'] as const;

export default function ProviderDrawer(props: {
  open: boolean;
  provider: CustomProvider | null;
  onClose(): void;
  onSaved(): void;
}) {
  const { open, provider, onClose, onSaved } = props;
  const { t } = useTranslation(NS);
  const { message } = App.useApp();
  const [form] = Form.useForm<ProviderForm>();
  const qc = useQueryClient();
  const discovery = useMutation({
    ...discoverMutation,
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      form.setFieldsValue({ well_known: res.data.well_known_url, ...endpointsOf(res.data.discovery) });
      void message.success(t('discovered'));
    },
  });
  const save = useMutation({
    ...saveProviderMutation,
    onSuccess: async (res) => {
      if (!res.success) return void message.error(res.message);
      void message.success(t('saved'));
      await qc.invalidateQueries({ queryKey: PROVIDERS_KEY });
      onSaved();
    },
  });
  const saving = save.isPending;
  const discovering = discovery.isPending;

  useEffect(() => {
    if (!open) return;
    form.resetFields();
    form.setFieldsValue(provider ? { ...EMPTY_FORM, ...provider, client_secret: '' } : EMPTY_FORM);
  }, [open, provider, form]);

  const fetchDiscovery = async () => {
    const url = String(form.getFieldValue('well_known') ?? '').trim();
    if (!isHttpUrl(url)) return void message.error(t('httpUrl'));
    // a thrown call was toasted by the api client
    await discovery.mutateAsync(url).catch(() => undefined);
  };

  const submit = async (values: ProviderForm) => {
    // an empty secret is not sent on an update: the stored one stays
    const { client_secret: secret, ...rest } = values;
    const body = provider && !secret ? rest : values;
    await save.mutateAsync({ id: provider?.id ?? null, form: body }).catch(() => undefined);
  };

  const required = { required: true, message: t('required') };
  const url = {
    validator: (_: unknown, v?: string) =>
      !v || isHttpUrl(v) ? Promise.resolve() : Promise.reject(new Error(t('httpUrl'))),
  };

  return (
    <Drawer
      open={open}
      onClose={onClose}
      title={provider ? t('drawerEdit') : t('drawerAdd')}
      size="large"
      destroyOnHidden
      data-testid="custom-oauth-drawer"
      extra={
        <Space>
          <Button onClick={onClose}>{t('cancel')}</Button>
          <Button type="primary" loading={saving} onClick={() => form.submit()} data-testid="custom-oauth-save">
            {t('save')}
          </Button>
        </Space>
      }
    >
      <Form form={form} layout="vertical" onFinish={(v) => void submit(v)}>
        <Row gutter={12}>
          <Col span={12}>
            <Form.Item name="name" label={t('field.name')} rules={[required]}>
              <Input maxLength={64} data-testid="field-name" />
            </Form.Item>
          </Col>
          <Col span={12}>
            <Form.Item
              name="slug"
              label={t('field.slug')}
              rules={[required, { pattern: /^[a-z0-9-]+$/, message: t('slugRule') }]}
            >
              <Input maxLength={64} data-testid="field-slug" />
            </Form.Item>
          </Col>
          <Col span={16}>
            <Form.Item name="icon" label={t('field.icon')}>
              <Input maxLength={128} />
            </Form.Item>
          </Col>
          <Col span={8}>
            <Form.Item name="enabled" label={t('field.enabled')} valuePropName="checked">
              <Switch />
            </Form.Item>
          </Col>
          <Col span={12}>
            <Form.Item name="client_id" label={t('field.client_id')} rules={[required]}>
              <Input data-testid="field-client_id" />
            </Form.Item>
          </Col>
          <Col span={12}>
            <Form.Item
              name="client_secret"
              label={t('field.client_secret')}
              extra={provider ? t('field.secretKeep') : undefined}
            >
              <Input.Password autoComplete="new-password" data-testid="field-client_secret" />
            </Form.Item>
          </Col>
        </Row>
        <Form.Item label={t('field.well_known')}>
          <Space.Compact style={{ width: '100%' }}>
            <Form.Item name="well_known" noStyle rules={[url]}>
              <Input
                placeholder="https://idp.example.com/.well-known/openid-configuration"
                data-testid="field-well_known"
              />
            </Form.Item>
            <Button
              icon={<CloudDownloadOutlined />}
              loading={discovering}
              onClick={() => void fetchDiscovery()}
              data-testid="custom-oauth-discover"
            >
              {t('discover')}
            </Button>
          </Space.Compact>
        </Form.Item>
        {ENDPOINTS.map((name) => (
          <Form.Item key={name} name={name} label={t(`field.${name}`)} rules={[required, url]}>
            <Input data-testid={`field-${name}`} />
          </Form.Item>
        ))}
        <Row gutter={12}>
          <Col span={12}>
            <Form.Item name="scopes" label={t('field.scopes')}>
              <Input />
            </Form.Item>
          </Col>
          <Col span={12}>
            <Form.Item name="auth_style" label={t('field.auth_style')}>
              <Select
                options={[
                  { value: 0, label: t('field.authPost') },
                  { value: 2, label: t('field.authBasic') },
                ]}
              />
            </Form.Item>
          </Col>
          {FIELD_PATHS.map((name) => (
            <Col span={12} key={name}>
              <Form.Item
                name={name}
                label={t(`field.${name}`)}
                tooltip={t('field.fieldHint')}
                rules={name === 'user_id_field' ? [required] : []}
              >
                <Input />
              </Form.Item>
            </Col>
          ))}
        </Row>
      </Form>
    </Drawer>
  );
}
