// First-run setup wizard (spec §2 Setup, §5 Setup).
import { useEffect, useState } from 'react';
import { Alert, Button, Card, Divider, Flex, Form, Input, Modal, Radio, Spin, Typography } from 'antd';
import { message } from '../../lib/feedback.js';
import { QuestionCircleOutlined } from '@ant-design/icons';
import { useMutation, useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { api } from '../../lib/api.js';
import { NS } from './i18n.js';

interface SetupStatus {
  status: boolean;
  root_init?: boolean;
  database_type?: string;
}

type UsageMode = 'external' | 'self' | 'demo';

interface SetupForm {
  username?: string;
  password?: string;
  confirmPassword?: string;
  usageMode: UsageMode;
}

export default function Setup() {
  const { t } = useTranslation(NS);
  const navigate = useNavigate();
  const [form] = Form.useForm<SetupForm>();
  const [help, setHelp] = useState(false);
  // set once the server is set up: the button stays disabled until the page reloads
  const [done, setDone] = useState(false);

  // asked once (no retries): a failure is said at once, as the wizard cannot go on without it
  const query = useQuery({
    queryKey: ['setup'],
    retry: false,
    refetchOnWindowFocus: false,
    queryFn: async () => {
      const res = await api.get<SetupStatus>('/api/setup');
      if (!res.success || !res.data) throw new Error(res.message);
      return res.data;
    },
  });
  const failed = query.isError;
  const alreadySetUp = !!query.data?.status;
  useEffect(() => {
    if (failed) void message.error(t('fetchFailed'));
  }, [failed, t]);
  useEffect(() => {
    if (alreadySetUp) navigate('/', { replace: true });
  }, [alreadySetUp, navigate]);

  const submit = useMutation({
    mutationFn: (v: SetupForm) =>
      api.post<unknown>('/api/setup', {
        username: v.username ?? '',
        password: v.password ?? '',
        confirmPassword: v.confirmPassword ?? '',
        SelfUseModeEnabled: v.usageMode === 'self',
        DemoSiteEnabled: v.usageMode === 'demo',
      }),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message || t('submitFailed'));
      void message.success(t('success'));
      setDone(true);
      setTimeout(() => window.location.reload(), 1500);
    },
    onError: () => void message.error(t('networkFailed')),
  });
  const submitting = submit.isPending || done;
  const onFinish = (v: SetupForm) => submit.mutateAsync(v).catch(() => undefined);

  const setup = query.data;
  if (!setup || setup.status) return <Spin style={{ display: 'block', marginTop: 80 }} />;
  const rootInit = !!setup.root_init;
  const db = setup.database_type ?? 'sqlite';

  return (
    <Flex justify="center">
      <Card style={{ maxWidth: 640, width: '100%' }} data-testid="setup-card">
        <Typography.Title level={3}>{t('title')}</Typography.Title>
        <Typography.Paragraph type="secondary">{t('intro')}</Typography.Paragraph>
        {db === 'sqlite' ? (
          <Alert
            type="warning"
            showIcon
            title={t('dbTitle')}
            description={t('dbSqlite')}
            style={{ marginBottom: 16 }}
          />
        ) : (
          <Alert type="success" showIcon title={t('dbOther', { db })} style={{ marginBottom: 16 }} />
        )}
        <Form form={form} layout="vertical" initialValues={{ usageMode: 'external' }} onFinish={onFinish}>
          <Divider titlePlacement="start">{t('adminTitle')}</Divider>
          {rootInit ? (
            <Alert type="info" showIcon title={t('rootInit')} style={{ marginBottom: 16 }} />
          ) : (
            <>
              <Form.Item
                name="username"
                label={t('username')}
                rules={[{ required: true, whitespace: true, message: t('usernameRequired') }]}
              >
                <Input placeholder={t('usernamePh')} autoComplete="username" />
              </Form.Item>
              <Form.Item
                name="password"
                label={t('password')}
                rules={[{ required: true, min: 8, message: t('passwordMin') }]}
              >
                <Input.Password placeholder={t('passwordPh')} autoComplete="new-password" />
              </Form.Item>
              <Form.Item
                name="confirmPassword"
                label={t('confirm')}
                dependencies={['password']}
                rules={[
                  { required: true, message: t('passwordMismatch') },
                  ({ getFieldValue }) => ({
                    validator: (_, value) =>
                      !value || getFieldValue('password') === value
                        ? Promise.resolve()
                        : Promise.reject(new Error(t('passwordMismatch'))),
                  }),
                ]}
              >
                <Input.Password placeholder={t('confirmPh')} autoComplete="new-password" />
              </Form.Item>
            </>
          )}
          <Divider titlePlacement="start">
            {t('modeTitle')}{' '}
            <Button
              type="link"
              size="small"
              icon={<QuestionCircleOutlined />}
              onClick={() => setHelp(true)}
              aria-label={t('modeHelp')}
            />
          </Divider>
          <Form.Item name="usageMode">
            <Radio.Group>
              <Radio value="external">{t('modeExternal')}</Radio>
              <Radio value="self">{t('modeSelf')}</Radio>
              <Radio value="demo">{t('modeDemo')}</Radio>
            </Radio.Group>
          </Form.Item>
          <Button type="primary" htmlType="submit" block loading={submitting} disabled={submitting}>
            {t('submit')}
          </Button>
        </Form>
        <Modal
          open={help}
          title={t('modeHelp')}
          onCancel={() => setHelp(false)}
          onOk={() => setHelp(false)}
          footer={null}
        >
          <Typography.Paragraph strong>{t('helpExternal')}</Typography.Paragraph>
          <Typography.Paragraph>{t('helpExternal2')}</Typography.Paragraph>
          <Typography.Paragraph strong>{t('helpSelf')}</Typography.Paragraph>
          <Typography.Paragraph>{t('helpSelf2')}</Typography.Paragraph>
          <Typography.Paragraph strong>{t('helpDemo')}</Typography.Paragraph>
          <Typography.Paragraph>{t('helpDemo2')}</Typography.Paragraph>
        </Modal>
      </Card>
    </Flex>
  );
}
