// The rows of the drawing log or the task log (columns.tsx) with the pager; a page size chosen is remembered.
import { useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { Table } from 'antd';
import { PAGE_SIZE_OPTIONS } from '../../lib/storage.js';
import { TASKLOG_NS } from './i18n.js';
import { mjColumns, taskColumns, type PlayVideo, type ShowText } from './columns.js';
import type { Page } from './logic.js';
import type { Kind, LogRow } from './queries.js';

export default function TaskLogTable(props: {
  kind: Kind;
  admin: boolean;
  phone: boolean;
  data: Page<LogRow> | undefined;
  loading: boolean;
  page: number;
  pageSize: number;
  onPage(page: number, pageSize: number): void;
  show: ShowText;
  play: PlayVideo;
}) {
  const { kind, admin, phone, data, loading, page, pageSize, onPage, show, play } = props;
  const { t } = useTranslation(TASKLOG_NS);
  const columns = useMemo(
    () => (kind === 'mj' ? mjColumns(t, admin, show) : taskColumns(t, admin, show, play)),
    [kind, t, admin, show, play],
  );
  return (
    <Table<LogRow>
      rowKey="id"
      size={phone ? 'small' : 'middle'}
      loading={loading}
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
        onChange: onPage,
      }}
    />
  );
}
