// Top of the dashboard: balance, the API base URL for clients, a copyable example call and the announcement panel.
// Shown whether or not the data export (the charts below) is enabled. No props.
import { Button, Card, Col, Row, Statistic, Typography } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { api } from '../../lib/api.js';
import { renderNumber, renderQuota } from '../../lib/render.js';
import { selfModelsQuery, selfQuery } from '../../lib/self.js';
import { useStatus } from '../../context/status.js';
import RichContent from '../../components/RichContent.js';
import { fetchNotice, NOTICE_QUERY_KEY } from '../../components/notice/logic.js';
import { apiBaseUrl, EXAMPLE_KEY, exampleCall, exampleModel, type PricedModel } from './overview.js';
import ServerAddressPrompt from './ServerAddressPrompt.js';
import { useUser } from '../../context/user.js';
import './i18n.js';

export default function Overview() {
  const { t } = useTranslation('detail');
  const { status } = useStatus();
  const navigate = useNavigate();
  // the wallet's and personal page's queries: one key for the same data
  const self = useQuery(selfQuery);
  const models = useQuery(selfModelsQuery);
  const pricing = useQuery({
    queryKey: ['pricing'],
    queryFn: async () => {
      const res = await api.get<PricedModel[]>('/api/pricing');
      return res.success && Array.isArray(res.data) ? res.data : [];
    },
    staleTime: 60_000,
  });
  const notice = useQuery({ queryKey: NOTICE_QUERY_KEY, queryFn: fetchNotice, staleTime: 5 * 60_000 });
  const { user } = useUser();

  const baseUrl = apiBaseUrl(status.server_address);
  // a model this user can really call: priced, in their group, a chat model
  const model = exampleModel(
    models.data ?? [],
    pricing.data ?? [],
    user?.group || 'default',
    !!status.self_use_mode_enabled,
  );
  const example = exampleCall(baseUrl, model);
  const me = self.data;

  return (
    <>
      <ServerAddressPrompt />
      <Row gutter={[16, 16]}>
        <Col xs={24} md={8}>
          <Card data-testid="overview-balance">
            <Statistic
              title={t('overview.balance')}
              value={me ? renderQuota(me.quota) : '-'}
              loading={self.isLoading}
            />
          </Card>
        </Col>
        <Col xs={24} md={8}>
          <Card>
            <Statistic
              title={t('overview.used')}
              value={me ? renderQuota(me.used_quota) : '-'}
              loading={self.isLoading}
            />
          </Card>
        </Col>
        <Col xs={24} md={8}>
          <Card>
            <Statistic
              title={t('overview.requests')}
              value={me ? renderNumber(me.request_count) : '-'}
              loading={self.isLoading}
            />
          </Card>
        </Col>
        <Col xs={24} xl={notice.data?.trim() ? 14 : 24}>
          <Card title={t('overview.connect')} data-testid="overview-connect" style={{ height: '100%' }}>
            <Typography.Paragraph>
              {t('overview.baseUrl')}:{' '}
              <Typography.Text code copyable data-testid="overview-base-url">
                {baseUrl}
              </Typography.Text>
            </Typography.Paragraph>
            <Typography.Paragraph type="secondary">
              {t('overview.exampleHint', { key: EXAMPLE_KEY })}{' '}
              <Button type="link" size="small" style={{ padding: 0 }} onClick={() => navigate('/token')}>
                {t('overview.toTokens')}
              </Button>
            </Typography.Paragraph>
            <Typography.Paragraph copyable={{ text: example }} style={{ marginBottom: 0 }}>
              <pre data-testid="overview-example" style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all', margin: 0 }}>
                {example}
              </pre>
            </Typography.Paragraph>
          </Card>
        </Col>
        {notice.data?.trim() ? (
          <Col xs={24} xl={10}>
            <Card title={t('overview.notice')} data-testid="overview-notice" style={{ height: '100%' }}>
              <div style={{ maxHeight: 320, overflow: 'auto' }}>
                <RichContent content={notice.data} title={t('overview.notice')} />
              </div>
            </Card>
          </Col>
        ) : null}
      </Row>
    </>
  );
}
