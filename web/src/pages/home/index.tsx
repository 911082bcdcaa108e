import { Button, Card, Flex, Spin, Typography } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { api } from '../../lib/api.js';
import { useStatus } from '../../context/status.js';
import RichContent from '../../components/RichContent.js';
import { NS } from './i18n.js';

export default function Home() {
  const { t } = useTranslation(NS);
  const { status } = useStatus();
  const navigate = useNavigate();
  const { data, isLoading } = useQuery({
    queryKey: ['home_page_content'],
    queryFn: async () => {
      const res = await api.get<string>('/api/home_page_content');
      const content = res.success ? (res.data ?? '') : '';
      localStorage.setItem('home_page_content', content);
      return content;
    },
    placeholderData: () => localStorage.getItem('home_page_content') ?? undefined,
  });

  if (isLoading && data === undefined) return <Spin />;
  if (data && data.trim()) return <RichContent content={data} title="home" />;

  const name = status.system_name || 'New API';
  return (
    <Flex justify="center" style={{ paddingTop: 48 }}>
      <Card style={{ maxWidth: 720, width: '100%', textAlign: 'center' }}>
        <img src={status.logo || '/logo.svg'} alt="" width={64} height={64} />
        <Typography.Title level={2}>{t('welcome', { name })}</Typography.Title>
        <Typography.Paragraph type="secondary">{t('subtitle')}</Typography.Paragraph>
        <Typography.Paragraph>
          {t('baseUrl')}:{' '}
          <Typography.Text code copyable>
            {status.server_address || window.location.origin}
          </Typography.Text>
        </Typography.Paragraph>
        <Flex justify="center" gap={12}>
          <Button type="primary" onClick={() => navigate('/token')}>
            {t('start')}
          </Button>
          <Button onClick={() => navigate('/pricing')}>{t('pricing')}</Button>
        </Flex>
      </Card>
    </Flex>
  );
}
