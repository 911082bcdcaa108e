// Notification and price tabs of the personal page (PUT /api/user/setting).
import { useEffect } from 'react';
import { useMutation } from '@tanstack/react-query';
import { AutoComplete, Button, Form, Input, Radio, Switch, Tabs, Typography } from 'antd';
import { message } from '../../lib/feedback.js';
import { useTranslation } from 'react-i18next';
import { api } from '../../lib/api.js';
import { renderQuota } from '../../lib/render.js';
import { DEFAULT_THRESHOLD, THRESHOLD_PRESETS, type UserSetting } from './types.js';
import { NS } from './i18n.js';

interface FormValues {
  notify_type: 'email' | 'webhook';
  quota_warning_threshold: string;
  webhook_url?: string;
  webhook_secret?: string;
  notification_email?: string;
  accept_unset_model_ratio_model: boolean;
}

export default function NotifySettings({ setting, onSaved }: { setting: UserSetting; onSaved(): void }) {
  const { t } = useTranslation(NS);
  const [form] = Form.useForm<FormValues>();
  const saveSetting = useMutation({ mutationFn: (body: unknown) => api.put('/api/user/setting', body) });
  const saving = saveSetting.isPending;
  const notifyType = Form.useWatch('notify_type', form);

  useEffect(() => {
    form.setFieldsValue({
      notify_type: setting.notify_type ?? 'email',
      quota_warning_threshold: String(setting.quota_warning_threshold ?? DEFAULT_THRESHOLD),
      webhook_url: setting.webhook_url ?? '',
      webhook_secret: setting.webhook_secret ?? '',
      notification_email: setting.notification_email ?? '',
      accept_unset_model_ratio_model: !!setting.accept_unset_model_ratio_model,
    });
  }, [setting, form]);

  const save = async () => {
    let v: FormValues;
    try {
      v = await form.validateFields();
    } catch {
      return;
    }
    v = { ...form.getFieldsValue(true), ...v } as FormValues;
    try {
      const res = await saveSetting.mutateAsync({
        notify_type: v.notify_type,
        quota_warning_threshold: Number(v.quota_warning_threshold),
        webhook_url: v.webhook_url ?? '',
        webhook_secret: v.webhook_secret ?? '',
        notification_email: v.notification_email ?? '',
        accept_unset_model_ratio_model: !!v.accept_unset_model_ratio_model,
      });
      if (res.success) {
        void message.success(t('settingsSaved'));
        onSaved();
      } else void message.error(res.message || t('settingsFailed'));
    } catch {
      void message.error(t('settingsFailed'));
    }
  };

  const notifyTab = (
    <>
      <Form.Item name="notify_type" label={t('notifyType')}>
        <Radio.Group>
          <Radio value="email">{t('notifyEmail')}</Radio>
          <Radio value="webhook">{t('notifyWebhook')}</Radio>
        </Radio.Group>
      </Form.Item>
      <Form.Item
        name="quota_warning_threshold"
        label={t('threshold')}
        extra={t('thresholdHint')}
        rules={[
          {
            validator: (_, v) =>
              Number(v) > 0 ? Promise.resolve() : Promise.reject(new Error(t('thresholdPositive'))),
          },
        ]}
      >
        <AutoComplete
          options={THRESHOLD_PRESETS.map((q) => ({ value: String(q), label: `${q} (${renderQuota(q)})` }))}
          style={{ maxWidth: 320 }}
        />
      </Form.Item>
      {notifyType === 'webhook' ? (
        <>
          <Form.Item
            name="webhook_url"
            label={t('webhookUrl')}
            rules={[
              { required: true, message: t('webhookHttps') },
              { pattern: /^https:\/\//i, message: t('webhookHttps') },
            ]}
          >
            <Input placeholder={t('webhookUrlPh')} />
          </Form.Item>
          <Form.Item name="webhook_secret" label={t('webhookSecret')}>
            <Input.Password placeholder={t('webhookSecretPh')} />
          </Form.Item>
        </>
      ) : (
        <Form.Item name="notification_email" label={t('notificationEmail')}>
          <Input placeholder={t('notificationEmailPh')} type="email" />
        </Form.Item>
      )}
    </>
  );

  const priceTab = (
    <>
      <Form.Item name="accept_unset_model_ratio_model" label={t('acceptUnset')} valuePropName="checked">
        <Switch />
      </Form.Item>
      <Typography.Paragraph type="secondary">{t('acceptUnsetHint')}</Typography.Paragraph>
    </>
  );

  return (
    <Form form={form} layout="vertical" preserve>
      <Tabs
        items={[
          { key: 'notify', label: t('notifyTab'), children: notifyTab, forceRender: true },
          { key: 'price', label: t('priceTab'), children: priceTab, forceRender: true },
        ]}
      />
      <Button type="primary" onClick={save} loading={saving}>
        {t('saveSettings')}
      </Button>
    </Form>
  );
}
