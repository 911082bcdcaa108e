// Personal settings (/personal): balance, invitations, bindings, security actions, notification/price settings,
// available models (spec §2 Personal settings, §5 Personal).
import { useState } from 'react';
import {
  Avatar,
  Button,
  Card,
  Col,
  Descriptions,
  Flex,
  Input,
  Row,
  Space,
  Spin,
  Statistic,
  Tag,
  Typography,
} from 'antd';
import { message } from '../../lib/feedback.js';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { translateServerMessage } from '../../i18n/server-message.js';
import { useNavigate } from 'react-router';
import { api } from '../../lib/api.js';
import { renderGroupColor, renderNumber, renderQuota } from '../../lib/render.js';
import { copyText } from '../../lib/storage.js';
import { SELF_KEY, selfModelsQuery, selfQuery } from '../../lib/self.js';
import { useUser } from '../../context/user.js';
import { useStatus } from '../../context/status.js';
import PageHeader from '../../components/PageHeader.js';
import NotifySettings from './NotifySettings.js';
import TwoFactorCard from './two-factor/TwoFactorCard.js';
import { ChangePasswordDialog, DeleteAccountDialog, EmailBindDialog, TransferDialog } from './Dialogs.js';
import { parseSetting } from './types.js';
import { NS } from './i18n.js';
import { OAUTH_PROVIDERS } from '../oauth/providers.js';
import OAuthBindButton from '../oauth/OAuthBindButton.js';
import CustomOAuthBindings from '../oauth/custom/CustomOAuthBindings.js';
import { TelegramBindButton, WeChatBindButton, WithUnbind } from '../login-bindings/index.js';
import PasskeyCard from './passkeys/PasskeyCard.js';
import AccessTokenReset from './access-token/AccessTokenReset.js';

const MODELS_SHOWN = 10;

function roleLabel(t: (k: string) => string, role: number): string {
  if (role >= 100) return t('common:role.root');
  if (role >= 10) return t('common:role.admin');
  if (role >= 1) return t('common:role.user');
  return t('common:role.unknown');
}

export default function Personal() {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  const { setUser } = useUser();
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [dialog, setDialog] = useState<'' | 'email' | 'password' | 'delete' | 'transfer'>('');
  const [modelsExpanded, setModelsExpanded] = useState(() => localStorage.getItem('modelsExpanded') === 'true');

  const self = useQuery(selfQuery);
  const aff = useQuery({
    queryKey: ['user', 'aff'],
    queryFn: async () => {
      const res = await api.get<string>('/api/user/aff');
      return res.success ? res.data : '';
    },
  });
  const models = useQuery(selfModelsQuery);
  const reloadSelf = () => void qc.invalidateQueries({ queryKey: SELF_KEY });

  const copy = async (text: string, success?: string) => {
    if (await copyText(text)) void message.success(success ?? t('copied', { text }));
    else void message.warning(`${t('copyFailed')}: ${text}`);
  };

  if (self.isLoading) return <Spin />;
  if (self.error || !self.data) {
    return <Typography.Text type="danger">{translateServerMessage(self.error?.message)}</Typography.Text>;
  }
  const u = self.data;
  const setting = parseSetting(u.setting);
  const inviteLink = aff.data ? `${window.location.origin}/register?aff=${aff.data}` : '';
  const modelList = models.data ?? [];
  const shownModels = modelsExpanded ? modelList : modelList.slice(0, MODELS_SHOWN);

  const bindingRows: { label: string; value?: string; action?: React.ReactNode }[] = [
    {
      label: t('emailAddr'),
      value: u.email,
      action: (
        <WithUnbind type="email" name={t('emailAddr')} bound={!!u.email}>
          <Button size="small" onClick={() => setDialog('email')}>
            {u.email ? t('changeEmail') : t('bindEmail')}
          </Button>
        </WithUnbind>
      ),
    },
    ...OAUTH_PROVIDERS.filter((p) => p.id === 'github' || p.enabled(status) || u[p.userField]).map((p) => ({
      label: p.label,
      value: u[p.userField],
      action: (
        <WithUnbind type={p.id} name={p.label} bound={!!u[p.userField]}>
          <OAuthBindButton provider={p} bound={!!u[p.userField]} />
        </WithUnbind>
      ),
    })),
    ...(status.wechat_login || u.wechat_id
      ? [
          {
            label: 'WeChat',
            value: u.wechat_id,
            action: (
              <WithUnbind type="wechat" name="WeChat" bound={!!u.wechat_id}>
                <WeChatBindButton bound={!!u.wechat_id} />
              </WithUnbind>
            ),
          },
        ]
      : []),
    ...(status.telegram_oauth || u.telegram_id
      ? [
          {
            label: 'Telegram',
            value: u.telegram_id,
            action: (
              <WithUnbind type="telegram" name="Telegram" bound={!!u.telegram_id}>
                <TelegramBindButton bound={!!u.telegram_id} />
              </WithUnbind>
            ),
          },
        ]
      : []),
  ];

  return (
    <div data-testid="personal-page">
      <PageHeader title={t('title')} />
      <Row gutter={[16, 16]}>
        <Col xs={24} lg={12}>
          <Card>
            <Flex align="center" gap={12} style={{ marginBottom: 16 }}>
              <Avatar size={48}>{(u.display_name || u.username).slice(0, 1).toUpperCase()}</Avatar>
              <div>
                <Typography.Title level={5} style={{ margin: 0 }}>
                  {u.display_name || u.username}
                </Typography.Title>
                <Flex gap={4} style={{ marginTop: 4 }}>
                  <Tag>{roleLabel(t, u.role)}</Tag>
                  <Tag color={renderGroupColor(u.group)}>{u.group}</Tag>
                </Flex>
              </div>
            </Flex>
            <Row gutter={16}>
              <Col span={8}>
                <Statistic title={t('balance')} value={renderQuota(u.quota)} data-testid="balance" />
              </Col>
              <Col span={8}>
                <Statistic title={t('used')} value={renderQuota(u.used_quota)} />
              </Col>
              <Col span={8}>
                <Statistic title={t('requests')} value={renderNumber(u.request_count)} />
              </Col>
            </Row>
          </Card>
        </Col>
        <Col xs={24} lg={12}>
          <Card title={t('invite')}>
            <Space.Compact style={{ width: '100%', marginBottom: 16 }}>
              <Input value={inviteLink} readOnly addonBefore={t('inviteLink')} data-testid="invite-link" />
              <Button onClick={() => inviteLink && void copy(inviteLink)}>{t('common:action.copy')}</Button>
            </Space.Compact>
            <Row gutter={16}>
              <Col span={8}>
                <Statistic title={t('affQuota')} value={renderQuota(u.aff_quota)} />
              </Col>
              <Col span={8}>
                <Statistic title={t('affHistory')} value={renderQuota(u.aff_history_quota)} />
              </Col>
              <Col span={8}>
                <Statistic title={t('affCount')} value={u.aff_count} />
              </Col>
            </Row>
            <Button style={{ marginTop: 12 }} disabled={u.aff_quota <= 0} onClick={() => setDialog('transfer')}>
              {t('transfer')}
            </Button>
          </Card>
        </Col>
        <Col xs={24} lg={12}>
          <Card title={t('models')}>
            {modelList.length === 0 ? (
              <Typography.Text type="secondary">{t('modelsEmpty')}</Typography.Text>
            ) : (
              <Flex wrap gap={6} data-testid="model-list">
                {shownModels.map((m) => (
                  <Tag key={m} style={{ cursor: 'pointer' }} onClick={() => void copy(m)}>
                    {m}
                  </Tag>
                ))}
              </Flex>
            )}
            {modelList.length > MODELS_SHOWN ? (
              <Button
                type="link"
                onClick={() => {
                  localStorage.setItem('modelsExpanded', String(!modelsExpanded));
                  setModelsExpanded(!modelsExpanded);
                }}
              >
                {modelsExpanded ? t('collapse') : t('expand', { n: modelList.length - MODELS_SHOWN })}
              </Button>
            ) : null}
          </Card>
        </Col>
        <Col xs={24} lg={12}>
          <Card title={t('bindings')}>
            <Descriptions column={1} size="small">
              {bindingRows.map((r) => (
                <Descriptions.Item key={r.label} label={r.label}>
                  <Flex justify="space-between" style={{ width: '100%' }} align="center">
                    <span>{r.value || <Typography.Text type="secondary">{t('notBound')}</Typography.Text>}</span>
                    {r.action}
                  </Flex>
                </Descriptions.Item>
              ))}
            </Descriptions>
            <CustomOAuthBindings />
          </Card>
        </Col>
        <Col xs={24} lg={12}>
          <Card title={t('security')}>
            <Typography.Paragraph>
              <strong>{t('accessToken')}</strong>
              <br />
              <Typography.Text type="secondary">{t('accessTokenHint')}</Typography.Text>
            </Typography.Paragraph>
            <Flex wrap gap={8}>
              <AccessTokenReset label={t('resetToken')} onReset={reloadSelf} />
              <Button onClick={() => setDialog('password')}>{t('changePassword')}</Button>
              <Button danger onClick={() => setDialog('delete')}>
                {t('deleteAccount')}
              </Button>
            </Flex>
          </Card>
        </Col>
        <Col xs={24} lg={12}>
          <TwoFactorCard />
        </Col>
        <Col xs={24} lg={12}>
          <PasskeyCard />
        </Col>
        <Col xs={24} lg={12}>
          <Card>
            <NotifySettings setting={setting} onSaved={reloadSelf} />
          </Card>
        </Col>
      </Row>
      <EmailBindDialog open={dialog === 'email'} onClose={() => setDialog('')} />
      <ChangePasswordDialog open={dialog === 'password'} onClose={() => setDialog('')} />
      <DeleteAccountDialog
        open={dialog === 'delete'}
        username={u.username}
        onClose={() => setDialog('')}
        onDeleted={() => {
          setUser(null);
          navigate('/login');
        }}
      />
      <TransferDialog open={dialog === 'transfer'} affQuota={u.aff_quota} onClose={() => setDialog('')} />
    </div>
  );
}
