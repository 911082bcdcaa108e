// The drawing log (/midjourney, kind 'mj') and the task log (/task, kind 'task'): spec §2. A user reads their own
// rows (/api/mj/self, /api/task/self); an admin reads every row with channel and user columns (/api/mj/, /api/task/).
// The image URL is the row's: the server has already made it the forwarded /mj/image/{id} when MjForwardUrlEnabled.
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import dayjs, { type Dayjs } from 'dayjs';
import { Alert, Button, Card, DatePicker, Grid, Input, Modal, Select, Space, Table, Typography } from 'antd';
import { api } from '../../lib/api.js';
import { useStatus } from '../../context/status.js';
import { isAdmin, useUser } from '../../context/user.js';
import { getPageSize, PAGE_SIZE_OPTIONS, setPageSize as storePageSize } from '../../lib/storage.js';
import { TASKLOG_NS } from './i18n.js';
import { mjColumns, taskColumns } from './columns.js';
import {
  buildQuery,
  MJ_ACTIONS,
  MJ_STATUSES,
  TASK_ACTIONS,
  TASK_STATUSES,
  type Filters,
  type MjRow,
  type Page,
  type TaskRow,
} from './logic.js';

type Kind = 'mj' | 'task';

/** Spec §2: the drawing log opens on the last 30 days, the task log on today from 00:00. */
function initialFilters(kind: Kind): Filters {
  const start = kind === 'mj' ? dayjs().subtract(30, 'day').startOf('day') : dayjs().startOf('day');
  return {
    channel_id: '',
    id: '',
    status: '',
    action: '',
    platform: '',
    start: start.unix(),
    end: dayjs().add(1, 'hour').unix(),
  };
}

export default function TaskLogPage({ kind }: { kind: Kind }) {
  const { t } = useTranslation(TASKLOG_NS);
  const { user } = useUser();
  const { status } = useStatus();
  const admin = isAdmin(user);
  const phone = !Grid.useBreakpoint().md;
  const [filters, setFilters] = useState<Filters>(() => initialFilters(kind));
  const [applied, setApplied] = useState<Filters>(filters);
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(() => getPageSize());
  const [text, setText] = useState<{ title: string; body: string } | null>(null);

  const url = `/api/${kind}/${admin ? '' : 'self'}`;
  const params = buildQuery(kind, applied, admin, page, pageSize);
  const list = useQuery({
    queryKey: ['tasklog', kind, url, params],
    queryFn: async (): Promise<Page<MjRow | TaskRow>> => {
      const res = await api.get<Page<MjRow | TaskRow>>(url, params);
      if (!res.success) throw new Error(res.message);
      return res.data ?? { items: [], total: 0, page, page_size: pageSize };
    },
    placeholderData: keepPreviousData,
  });

  const show = (title: string, body: string) => setText({ title, body });
  const columns = useMemo(
    () => (kind === 'mj' ? mjColumns(t, admin, show) : taskColumns(t, admin, show)),
    [kind, t, admin],
  );
  const set = <K extends keyof Filters>(k: K, v: Filters[K]) => setFilters((f) => ({ ...f, [k]: v }));
  const query = () => {
    // the same filters again must still read the rows anew: a task's state moves while the page is open, and the
    // query key (hence the cache) would not change
    if (page === 1 && JSON.stringify(filters) === JSON.stringify(applied)) void list.refetch();
    setPage(1);
    setApplied({ ...filters });
  };
  const statuses = kind === 'mj' ? MJ_STATUSES : TASK_STATUSES;
  const actions = kind === 'mj' ? MJ_ACTIONS : TASK_ACTIONS;
  const data = list.data;
  const range: [Dayjs | null, Dayjs | null] = [
    filters.start ? dayjs.unix(filters.start) : null,
    filters.end ? dayjs.unix(filters.end) : null,
  ];

  return (
    <Card title={t(kind === 'mj' ? 'title.mj' : 'title.task')}>
      {kind === 'mj' && status.mj_notify_enabled === false && admin && (
        <Alert
          type="info"
          showIcon
          style={{ marginBottom: 12 }}
          message={t('callbackOff')}
          data-testid="mj-callback-off"
        />
      )}
      <Space
        wrap
        direction={phone ? 'vertical' : 'horizontal'}
        style={{ marginBottom: 12, width: phone ? '100%' : undefined }}
      >
        <DatePicker.RangePicker
          showTime
          value={range}
          aria-label={t('filter.range')}
          placeholder={[t('filter.start'), t('filter.end')]}
          onChange={(v) => {
            set('start', v?.[0] ? v[0].unix() : 0);
            set('end', v?.[1] ? v[1].unix() : 0);
          }}
        />
        <Input
          allowClear
          name="task-id"
          placeholder={t(kind === 'mj' ? 'filter.mjId' : 'filter.taskId')}
          value={filters.id}
          onChange={(e) => set('id', e.target.value)}
        />
        {kind === 'task' && (
          <Input
            allowClear
            name="platform"
            placeholder={t('filter.platform')}
            value={filters.platform}
            onChange={(e) => set('platform', e.target.value)}
          />
        )}
        {admin && (
          <Input
            allowClear
            name="channel-id"
            placeholder={t('filter.channel')}
            value={filters.channel_id}
            onChange={(e) => set('channel_id', e.target.value)}
          />
        )}
        <Select
          style={{ minWidth: 140 }}
          aria-label={t('filter.status')}
          data-testid="filter-status"
          value={filters.status}
          onChange={(v: string) => set('status', v)}
          options={[
            { value: '', label: `${t('filter.status')}: ${t('filter.all')}` },
            ...statuses.map((s) => ({ value: s, label: t(`status.${s}`) })),
          ]}
        />
        <Select
          style={{ minWidth: 140 }}
          aria-label={t('filter.action')}
          value={filters.action}
          onChange={(v: string) => set('action', v)}
          options={[
            { value: '', label: `${t('filter.action')}: ${t('filter.all')}` },
            ...actions.map((a) => ({ value: a, label: t(`action.${a}`) })),
          ]}
        />
        <Space>
          <Button type="primary" onClick={query} data-testid="tasklog-query">
            {t('filter.query')}
          </Button>
          <Button
            onClick={() => {
              const f = initialFilters(kind);
              setFilters(f);
              setApplied(f);
              setPage(1);
            }}
          >
            {t('filter.reset')}
          </Button>
        </Space>
      </Space>
      {list.isError && (
        <Alert
          type="error"
          showIcon
          style={{ marginBottom: 12 }}
          message={(list.error as Error).message || t('loadFailed')}
        />
      )}
      <Table<MjRow | TaskRow>
        rowKey="id"
        size={phone ? 'small' : 'middle'}
        loading={list.isFetching}
        columns={columns as never}
        dataSource={data?.items ?? []}
        scroll={{ x: 'max-content' }}
        pagination={{
          current: page,
          pageSize,
          total: data?.total ?? 0,
          pageSizeOptions: PAGE_SIZE_OPTIONS.map(String),
          showSizeChanger: true,
          simple: phone,
          showTotal: (total, [start, end]) => t('range', { start, end, total }),
          onChange: (p, size) => {
            if (size !== pageSize) {
              storePageSize(size);
              setPageSize(size);
              setPage(1);
            } else setPage(p);
          },
        }}
      />
      <Modal
        open={!!text}
        title={text?.title}
        footer={null}
        onCancel={() => setText(null)}
        width={phone ? '100%' : 720}
      >
        <Typography.Paragraph copyable={{ text: text?.body ?? '' }}>
          <pre
            style={{ whiteSpace: 'pre-wrap', wordBreak: 'break-all', maxHeight: '60vh', overflow: 'auto' }}
            data-testid="tasklog-text"
          >
            {text?.body}
          </pre>
        </Typography.Paragraph>
      </Modal>
    </Card>
  );
}
