// Usage logs page (spec §2 Usage logs, §5 Log queries, §9 log colours; new-api-compat.md §3.5 logs are 1-based
// {items,total}).
import { useEffect, useMemo, useState } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import dayjs, { type Dayjs } from 'dayjs';
import {
  App as AntApp,
  Button,
  Card,
  DatePicker,
  Descriptions,
  Input,
  Modal,
  Popconfirm,
  Select,
  Space,
  Spin,
  Table,
  Tag,
  Tooltip,
  Typography,
} from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { api } from '../../lib/api.js';
import { renderGroupColor, renderNumber, renderQuota, renderQuotaSum, renderTime } from '../../lib/render.js';
import { getPageSize, PAGE_SIZE_OPTIONS, setPageSize as storePageSize } from '../../lib/storage.js';
import { isAdmin, useUser } from '../../context/user.js';
import { ColumnSettings, useColumnVisibility } from '../../components/ColumnSettings.js';
import { translateServerMessage } from '../../i18n/server-message.js';
import './i18n.js';
import {
  buildLogQuery,
  firstTokenColor,
  firstTokenSeconds,
  LOG_TYPE_COLORS,
  parseOther,
  retryPath,
  elapsedColor,
  type LogFilters,
  type LogRow,
} from './logic.js';

const FMT = 'YYYY-MM-DD HH:mm:ss';
const COLUMN_KEY = 'logs-table-columns';
const COLUMN_IDS = [
  'time',
  'channel',
  'username',
  'token',
  'group',
  'type',
  'model',
  'use_time',
  'prompt',
  'completion',
  'quota',
  'retry',
  'details',
];
const ADMIN_ONLY = new Set(['channel', 'username', 'retry']);
/** Every log query (list, stat) starts with this key: a cleanup invalidates them all. */
const LOGS_KEY = ['logs'] as const;

interface LogPage {
  items: LogRow[];
  total: number;
  page: number;
  page_size: number;
}

interface UserInfo {
  id: number;
  username: string;
  display_name?: string;
  group?: string;
  quota: number;
  used_quota: number;
  request_count: number;
  aff_count?: number;
  aff_history_quota?: number;
  email?: string;
}

function initialFilters(): LogFilters {
  return {
    type: 0,
    username: '',
    token_name: '',
    model_name: '',
    start: dayjs().startOf('day').format(FMT),
    end: dayjs().add(1, 'hour').format(FMT),
    channel: '',
    group: '',
  };
}

/** A tag that gives up its tail (ellipsis, full text on hover) so one long name does not widen the whole table. */
function NarrowTag({ text, color }: { text: string; color?: string }) {
  return (
    <Tag color={color} style={{ maxWidth: 100, marginInlineEnd: 0 }}>
      <Typography.Text ellipsis={{ tooltip: text }} style={{ maxWidth: 84, fontSize: 'inherit', color: 'inherit' }}>
        {text}
      </Typography.Text>
    </Tag>
  );
}

export default function LogPage() {
  const { t } = useTranslation('log');
  const { message } = AntApp.useApp();
  const { user } = useUser();
  const admin = isAdmin(user);
  const [filters, setFilters] = useState<LogFilters>(initialFilters);
  const [applied, setApplied] = useState<LogFilters>(filters);
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(() => getPageSize());
  const [shownUser, setShownUser] = useState<number | null>(null);
  const [cleanBefore, setCleanBefore] = useState<Dayjs>(() => dayjs().subtract(1, 'month'));
  const { visible, update, isVisible } = useColumnVisibility(COLUMN_KEY, COLUMN_IDS);
  const qc = useQueryClient();

  const base = admin ? '/api/log' : '/api/log/self';
  const q = buildLogQuery(applied, admin);
  const list = useQuery({
    queryKey: [...LOGS_KEY, base, q, page, pageSize],
    placeholderData: keepPreviousData,
    queryFn: async (): Promise<LogPage> => {
      const res = await api.get<LogPage>(`${base}/`, { ...q, p: page, page_size: pageSize });
      if (!res.success) throw new Error(res.message);
      return { ...res.data, items: res.data?.items ?? [] };
    },
  });
  const stat = useQuery({
    queryKey: [...LOGS_KEY, 'stat', base, q],
    placeholderData: keepPreviousData,
    queryFn: async () => {
      const res = await api.get<{ quota: number; rpm: number; tpm: number }>(`${base}/stat`, q);
      return res.success && res.data ? res.data : null;
    },
  });
  const userInfo = useQuery({
    queryKey: ['user', shownUser],
    enabled: shownUser !== null,
    queryFn: async () => {
      const res = await api.get<UserInfo>(`/api/user/${shownUser}`);
      if (!res.success) throw new Error(res.message);
      return res.data;
    },
  });
  // a failed load says why once, as the page did before; the table keeps what it showed
  useEffect(() => {
    if (list.error) message.error(list.error.message);
  }, [list.error, message]);
  useEffect(() => {
    if (userInfo.error) {
      message.error(userInfo.error.message);
      setShownUser(null);
    }
  }, [userInfo.error, message]);

  const clean = useMutation({
    mutationFn: (before: number) => api.del<number>(`/api/log/?target_timestamp=${before}`),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      message.success(t('msg.cleaned', { count: res.data ?? 0 }));
      return qc.invalidateQueries({ queryKey: LOGS_KEY });
    },
  });

  const set = <K extends keyof LogFilters>(k: K, v: LogFilters[K]) => setFilters((s) => ({ ...s, [k]: v }));

  const query = () => {
    // new filters (or another page) are a new query; the same ones again still mean "look again"
    if (page === 1 && JSON.stringify(filters) === JSON.stringify(applied)) {
      void qc.invalidateQueries({ queryKey: LOGS_KEY });
      return;
    }
    setPage(1);
    setApplied({ ...filters });
  };

  const reset = () => {
    const f = initialFilters();
    setFilters(f);
    setPage(1);
    setApplied(f);
  };

  const typeLabel = (type: number) => t(`type.${type}`, { defaultValue: t('type.unknown') });

  const allColumns: (ColumnsType<LogRow>[number] & { key: string })[] = [
    { key: 'time', title: t('col.time'), render: (_, r) => renderTime(r.created_at) },
    {
      key: 'channel',
      title: t('col.channel'),
      render: (_, r) =>
        r.type === 0 || r.type === 2 ? (
          <Tooltip title={r.channel_name || undefined}>
            <Tag color="blue">{r.channel}</Tag>
          </Tooltip>
        ) : null,
    },
    {
      key: 'username',
      title: t('col.user'),
      render: (_, r) => (
        <Typography.Link
          onClick={() => setShownUser(r.user_id)}
          data-testid={`log-user-${r.id}`}
          style={{ whiteSpace: 'nowrap' }}
        >
          {r.username}
        </Typography.Link>
      ),
    },
    {
      key: 'token',
      title: t('col.token'),
      render: (_, r) => (r.token_name ? <NarrowTag text={translateServerMessage(r.token_name)} /> : null),
    },
    {
      key: 'group',
      title: t('col.group'),
      render: (_, r) => (r.group ? <Tag color={renderGroupColor(r.group)}>{r.group}</Tag> : null),
    },
    {
      key: 'type',
      title: t('col.type'),
      render: (_, r) => <Tag color={LOG_TYPE_COLORS[r.type] ?? 'default'}>{typeLabel(r.type)}</Tag>,
    },
    {
      key: 'model',
      title: t('col.model'),
      render: (_, r) => {
        if (!r.model_name) return null;
        const other = parseOther(r.other);
        const tag = <NarrowTag color="geekblue" text={r.model_name} />;
        return other.is_model_mapped && other.upstream_model_name ? (
          <Tooltip title={t('col.mappedTo', { model: other.upstream_model_name })}>{tag}</Tooltip>
        ) : (
          tag
        );
      },
    },
    {
      key: 'use_time',
      title: t('col.useTime'),
      render: (_, r) => {
        if (r.type !== 2 && r.type !== 0) return null;
        const frt = firstTokenSeconds(parseOther(r.other));
        return (
          <Space size={2} wrap>
            <Tag color={elapsedColor(r.use_time)}>{t('unit.seconds', { s: r.use_time })}</Tag>
            {r.is_stream && frt !== null ? (
              <Tooltip title={t('col.frt')}>
                <Tag color={firstTokenColor(frt)}>{t('unit.seconds', { s: frt.toFixed(1) })}</Tag>
              </Tooltip>
            ) : null}
            <Tag color={r.is_stream ? 'blue' : 'purple'}>{r.is_stream ? t('col.stream') : t('col.nonStream')}</Tag>
          </Space>
        );
      },
    },
    { key: 'prompt', title: t('col.prompt'), render: (_, r) => (r.type === 2 ? r.prompt_tokens : null) },
    { key: 'completion', title: t('col.completion'), render: (_, r) => (r.type === 2 ? r.completion_tokens : null) },
    {
      key: 'quota',
      title: t('col.quota'),
      render: (_, r) =>
        r.type === 2 ? (
          <Tooltip title={String(r.quota)}>
            <span data-testid={`log-quota-${r.id}`} data-quota={r.quota}>
              {renderQuota(r.quota, 6)}
            </span>
          </Tooltip>
        ) : null,
    },
    {
      key: 'retry',
      title: t('col.retry'),
      render: (_, r) => {
        const path = retryPath(parseOther(r.other));
        return path ? t('col.retryPath', { path }) : null;
      },
    },
    {
      key: 'details',
      title: t('col.details'),
      // Not pinned (issue 46): a pinned column covered Completion and Cost at 1440 px. The table is as wide as its
      // content allows and no wider than the card (scroll x: true below), so at 1280 px and wider the columns wrap
      // their text and everything, this readable column included, is in view; narrower, the table scrolls.
      render: (_, r) => (
        <Typography.Paragraph
          ellipsis={{ rows: 3, expandable: true }}
          // narrow enough that, with long token and model names, every column fits a 1280 px screen (wide-tables.e2e.ts)
          style={{ minWidth: 140, marginBottom: 0, whiteSpace: 'pre-wrap', wordBreak: 'break-word' }}
          data-testid={`log-details-${r.id}`}
        >
          {translateServerMessage(r.content)}
        </Typography.Paragraph>
      ),
    },
  ];
  const columnOptions = allColumns.filter((c) => admin || !ADMIN_ONLY.has(c.key));
  const columns = columnOptions.filter((c) => isVisible(c.key));

  const datePicker = (key: 'start' | 'end', placeholder: string) => (
    <DatePicker
      showTime
      format={FMT}
      placeholder={placeholder}
      value={filters[key] ? dayjs(filters[key], FMT) : null}
      onChange={(d) => set(key, d ? d.format(FMT) : '')}
    />
  );

  const statData = stat.data;
  const statLine = useMemo(
    () =>
      statData ? (
        <Space size="middle" wrap data-testid="log-stat">
          <Tag color="blue">{t('stat.quota', { quota: renderQuotaSum(statData.quota) })}</Tag>
          <Tag color="pink">RPM: {renderNumber(statData.rpm)}</Tag>
          <Tag color="gray">TPM: {renderNumber(statData.tpm)}</Tag>
        </Space>
      ) : null,
    [statData, t],
  );

  return (
    <Card title={t('title')} extra={statLine} data-testid="log-page">
      <Space wrap style={{ marginBottom: 12 }}>
        <Select
          value={filters.type}
          onChange={(v: number) => set('type', v)}
          style={{ width: 120 }}
          options={[0, 1, 2, 3, 4].map((v) => ({ value: v, label: t(`type.${v}`) }))}
        />
        {admin && (
          <Input
            placeholder={t('filter.username')}
            value={filters.username}
            onChange={(e) => set('username', e.target.value)}
            allowClear
            style={{ width: 140 }}
          />
        )}
        <Input
          placeholder={t('filter.token')}
          value={filters.token_name}
          onChange={(e) => set('token_name', e.target.value)}
          allowClear
          style={{ width: 140 }}
        />
        <Input
          placeholder={t('filter.model')}
          value={filters.model_name}
          onChange={(e) => set('model_name', e.target.value)}
          allowClear
          style={{ width: 160 }}
        />
        {datePicker('start', t('filter.start'))}
        {datePicker('end', t('filter.end'))}
        {admin && (
          <Input
            placeholder={t('filter.channel')}
            value={filters.channel}
            onChange={(e) => set('channel', e.target.value)}
            allowClear
            style={{ width: 110 }}
          />
        )}
        <Input
          placeholder={t('filter.group')}
          value={filters.group}
          onChange={(e) => set('group', e.target.value)}
          allowClear
          style={{ width: 120 }}
        />
        <Button type="primary" onClick={query} loading={list.isFetching}>
          {t('filter.query')}
        </Button>
        <Button onClick={reset}>{t('filter.reset')}</Button>
        <ColumnSettings
          options={columnOptions.map((c) => ({ key: c.key, title: String(c.title) }))}
          visible={visible}
          onChange={update}
          label={t('columns')}
          resetLabel={t('columnsReset')}
        />
      </Space>
      {admin && (
        <Space wrap style={{ marginBottom: 12 }}>
          <span>{t('clean.label')}</span>
          <DatePicker
            showTime
            format={FMT}
            value={cleanBefore}
            onChange={(d) => d && setCleanBefore(d)}
            allowClear={false}
          />
          <Popconfirm
            title={t('clean.confirm', { time: cleanBefore.format(FMT) })}
            okButtonProps={{ danger: true, 'data-testid': 'log-clean-confirm' }}
            onConfirm={() => clean.mutateAsync(cleanBefore.unix()).catch(() => undefined)}
          >
            <Button danger data-testid="log-clean">
              {t('clean.button')}
            </Button>
          </Popconfirm>
        </Space>
      )}
      <Table<LogRow>
        rowKey="id"
        size="small"
        loading={list.isFetching}
        columns={columns}
        dataSource={list.data?.items ?? []}
        scroll={{ x: true }}
        pagination={{
          current: page,
          pageSize,
          total: list.data?.total ?? 0,
          showSizeChanger: true,
          pageSizeOptions: PAGE_SIZE_OPTIONS,
          showTotal: (total) => t('total', { count: total }),
          onChange: (p, size) => {
            if (size !== pageSize) {
              setPageSize(size);
              storePageSize(size);
              setPage(1);
            } else setPage(p);
          },
        }}
      />
      <Modal open={shownUser !== null} title={t('user.title')} footer={null} onCancel={() => setShownUser(null)}>
        <Spin spinning={userInfo.isFetching}>
          {userInfo.data && (
            <Descriptions column={1} size="small" bordered>
              <Descriptions.Item label={t('user.username')}>{userInfo.data.username}</Descriptions.Item>
              {userInfo.data.display_name ? (
                <Descriptions.Item label={t('user.displayName')}>{userInfo.data.display_name}</Descriptions.Item>
              ) : null}
              <Descriptions.Item label={t('user.group')}>{userInfo.data.group}</Descriptions.Item>
              <Descriptions.Item label={t('user.quota')}>{renderQuota(userInfo.data.quota)}</Descriptions.Item>
              <Descriptions.Item label={t('user.used')}>{renderQuota(userInfo.data.used_quota)}</Descriptions.Item>
              <Descriptions.Item label={t('user.requests')}>
                {renderNumber(userInfo.data.request_count)}
              </Descriptions.Item>
              {userInfo.data.email ? (
                <Descriptions.Item label={t('user.email')}>{userInfo.data.email}</Descriptions.Item>
              ) : null}
            </Descriptions>
          )}
        </Spin>
      </Modal>
    </Card>
  );
}
