// Dashboard (/detail): quota_data over a time range (spec §2 sidebar: only with enable_data_export; new-api-compat.md
// §5.8). recharts is imported only here so it stays in this lazily-loaded route's chunk.
import { useEffect, useMemo, useState } from 'react';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import dayjs, { type Dayjs } from 'dayjs';
import {
  Alert,
  App as AntApp,
  Button,
  Card,
  Col,
  DatePicker,
  Empty,
  Input,
  Row,
  Segmented,
  Space,
  Statistic,
} from 'antd';
import {
  Bar,
  BarChart,
  CartesianGrid,
  Cell,
  Legend,
  Line,
  LineChart,
  Pie,
  PieChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import Overview from './Overview.js';
import { api } from '../../lib/api.js';
import { dollarDigits, quotaToDollars, renderNumber, renderQuota, renderQuotaSum } from '../../lib/render.js';
import { useStatus } from '../../context/status.js';
import { isAdmin, useUser } from '../../context/user.js';
import './i18n.js';
import {
  modelShare,
  normalizeGranularity,
  seriesByModel,
  seriesPeak,
  totals,
  type Granularity,
  type QuotaDataRow,
} from './logic.js';

const COLORS = [
  '#1677ff',
  '#52c41a',
  '#faad14',
  '#f5222d',
  '#722ed1',
  '#13c2c2',
  '#eb2f96',
  '#fa8c16',
  '#a0d911',
  '#2f54eb',
];
const FMT = 'YYYY-MM-DD HH:mm:ss';
/** The dashboard's usage buckets, per caller, period and user filter. */
const USAGE_DATA_KEY = ['usage-data'] as const;

export default function DetailPage() {
  const { t } = useTranslation('detail');
  const { message } = AntApp.useApp();
  const { status } = useStatus();
  const { user } = useUser();
  const admin = isAdmin(user);
  const [start, setStart] = useState<Dayjs>(() => dayjs().subtract(1, 'day').startOf('hour'));
  const [end, setEnd] = useState<Dayjs>(() => dayjs().add(1, 'hour').startOf('hour'));
  const [username, setUsername] = useState('');
  const [granularity, setGranularity] = useState<Granularity>(() =>
    normalizeGranularity(status.data_export_default_time),
  );
  // the username is applied with the query button only; the dates apply as they change
  const [appliedUsername, setAppliedUsername] = useState('');
  const [chartKind, setChartKind] = useState<'bar' | 'line'>('bar');

  useEffect(() => {
    setGranularity(normalizeGranularity(status.data_export_default_time));
  }, [status.data_export_default_time]);

  const qc = useQueryClient();
  const data = useQuery({
    queryKey: [...USAGE_DATA_KEY, admin, start.unix(), end.unix(), appliedUsername],
    placeholderData: keepPreviousData,
    queryFn: async () => {
      const params = {
        start_timestamp: start.unix(),
        end_timestamp: end.unix(),
        username: admin ? appliedUsername || undefined : undefined,
      };
      const res = await api.get<QuotaDataRow[]>(admin ? '/api/data/' : '/api/data/self', params);
      if (!res.success) throw new Error(res.message);
      return res.data ?? [];
    },
  });
  const rows = useMemo(() => data.data ?? [], [data.data]);
  const loading = data.isFetching;
  useEffect(() => {
    if (data.error) message.error(data.error.message);
  }, [data.error, message]);
  const query = () => {
    const next = username.trim();
    // a new filter is a new query; the same one again still means "look again"
    if (next !== appliedUsername) setAppliedUsername(next);
    else void qc.invalidateQueries({ queryKey: USAGE_DATA_KEY });
  };

  const sum = useMemo(() => totals(rows), [rows]);
  const quotaSeries = useMemo(() => seriesByModel(rows, granularity, 'quota'), [rows, granularity]);
  const countSeries = useMemo(() => seriesByModel(rows, granularity, 'count'), [rows, granularity]);
  const share = useMemo(() => modelShare(rows, 'count'), [rows]);
  // small sums keep two significant digits ($0.00036, not $0.00)
  const quotaFmt = (v: unknown) => renderQuota(Number(v), Math.max(4, dollarDigits(quotaToDollars(Number(v)))));
  const axisDigits = dollarDigits(quotaToDollars(seriesPeak(quotaSeries)));

  if (status.enable_data_export === false) {
    return (
      <Space orientation="vertical" style={{ width: '100%' }} size="middle" data-testid="detail-page">
        <Overview />
        <Alert type="info" showIcon title={t('disabled')} />
      </Space>
    );
  }

  const quotaChart =
    chartKind === 'bar' ? (
      <BarChart data={quotaSeries.points}>
        <CartesianGrid strokeDasharray="3 3" />
        <XAxis dataKey="label" />
        <YAxis tickFormatter={(v: number) => renderQuota(v, axisDigits)} width={80} />
        <Tooltip formatter={quotaFmt} />
        <Legend />
        {quotaSeries.models.map((m, i) => (
          <Bar key={m} dataKey={m} stackId="q" fill={COLORS[i % COLORS.length]} isAnimationActive={false} />
        ))}
      </BarChart>
    ) : (
      <LineChart data={quotaSeries.points}>
        <CartesianGrid strokeDasharray="3 3" />
        <XAxis dataKey="label" />
        <YAxis tickFormatter={(v: number) => renderQuota(v, axisDigits)} width={80} />
        <Tooltip formatter={quotaFmt} />
        <Legend />
        {quotaSeries.models.map((m, i) => (
          <Line key={m} dataKey={m} stroke={COLORS[i % COLORS.length]} dot={false} isAnimationActive={false} />
        ))}
      </LineChart>
    );

  return (
    <Space orientation="vertical" style={{ width: '100%' }} size="middle" data-testid="detail-page">
      <Overview />
      <Card title={t('title')}>
        <Space wrap>
          <DatePicker showTime format={FMT} value={start} onChange={(d) => d && setStart(d)} allowClear={false} />
          <span>~</span>
          <DatePicker showTime format={FMT} value={end} onChange={(d) => d && setEnd(d)} allowClear={false} />
          <Segmented<Granularity>
            value={granularity}
            onChange={setGranularity}
            options={[
              { value: 'hour', label: t('g.hour') },
              { value: 'day', label: t('g.day') },
              { value: 'week', label: t('g.week') },
            ]}
          />
          {admin && (
            <Input
              placeholder={t('username')}
              value={username}
              onChange={(e) => setUsername(e.target.value)}
              allowClear
              style={{ width: 160 }}
            />
          )}
          <Button type="primary" loading={loading} onClick={query}>
            {t('query')}
          </Button>
        </Space>
      </Card>
      <Row gutter={[16, 16]}>
        <Col xs={24} md={8}>
          <Card data-testid="detail-total-quota" data-value={sum.quota}>
            <Statistic title={t('total.quota')} value={renderQuotaSum(sum.quota)} />
          </Card>
        </Col>
        <Col xs={24} md={8}>
          <Card data-testid="detail-total-tokens" data-value={sum.tokens}>
            <Statistic title={t('total.tokens')} value={renderNumber(sum.tokens)} />
          </Card>
        </Col>
        <Col xs={24} md={8}>
          <Card data-testid="detail-total-count" data-value={sum.count}>
            <Statistic title={t('total.count')} value={renderNumber(sum.count)} />
          </Card>
        </Col>
      </Row>
      {rows.length === 0 ? (
        <Card>
          <Empty description={t('empty')} />
        </Card>
      ) : (
        <Row gutter={[16, 16]}>
          <Col xs={24} xl={16}>
            <Card
              title={t('chart.quota')}
              extra={
                <Segmented<'bar' | 'line'>
                  value={chartKind}
                  onChange={setChartKind}
                  options={[
                    { value: 'bar', label: t('chart.bar') },
                    { value: 'line', label: t('chart.line') },
                  ]}
                />
              }
            >
              <div style={{ width: '100%', height: 320 }}>
                <ResponsiveContainer>{quotaChart}</ResponsiveContainer>
              </div>
            </Card>
          </Col>
          <Col xs={24} xl={8}>
            <Card title={t('chart.share')}>
              <div style={{ width: '100%', height: 320 }}>
                <ResponsiveContainer>
                  <PieChart>
                    {/* one model fills the circle: no white seam where the slice starts and ends */}
                    <Pie
                      data={share}
                      dataKey="value"
                      nameKey="name"
                      outerRadius={100}
                      label
                      isAnimationActive={false}
                      stroke={share.length > 1 ? '#fff' : 'none'}
                    >
                      {share.map((s, i) => (
                        <Cell key={s.name} fill={COLORS[i % COLORS.length]} />
                      ))}
                    </Pie>
                    <Tooltip />
                    <Legend />
                  </PieChart>
                </ResponsiveContainer>
              </div>
            </Card>
          </Col>
          <Col xs={24}>
            <Card title={t('chart.count')}>
              <div style={{ width: '100%', height: 280 }}>
                <ResponsiveContainer>
                  <LineChart data={countSeries.points}>
                    <CartesianGrid strokeDasharray="3 3" />
                    <XAxis dataKey="label" />
                    <YAxis allowDecimals={false} />
                    <Tooltip />
                    <Legend />
                    {countSeries.models.map((m, i) => (
                      <Line key={m} dataKey={m} stroke={COLORS[i % COLORS.length]} isAnimationActive={false} />
                    ))}
                  </LineChart>
                </ResponsiveContainer>
              </div>
            </Card>
          </Col>
        </Row>
      )}
    </Space>
  );
}
