import { Card, Spin, Typography } from 'antd';
import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { api } from '../../lib/api.js';
import RichContent from '../../components/RichContent.js';
import PageHeader from '../../components/PageHeader.js';
import { NS } from './i18n.js';

export default function About() {
  const { t } = useTranslation(NS);
  const { data, isLoading } = useQuery({
    queryKey: ['about'],
    queryFn: async () => {
      const res = await api.get<string>('/api/about');
      const content = res.success ? (res.data ?? '') : '';
      localStorage.setItem('about', content);
      return content;
    },
  });
  if (isLoading) return <Spin />;
  if (data && data.trim()) return <RichContent content={data} title="about" />;
  return (
    <Card>
      <PageHeader title={t('title')} />
      <Typography.Paragraph>{t('empty')}</Typography.Paragraph>
      <Typography.Paragraph type="secondary">{t('emptyHint')}</Typography.Paragraph>
    </Card>
  );
}
