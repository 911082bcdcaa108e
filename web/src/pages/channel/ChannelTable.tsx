// The channels table (spec §2 Channels page, §4 channel states): channel rows, or tag rows over their channels in tag
// mode, with the selection the batch actions use, and the pager of the unsearched list.
import { useMemo } from 'react';
import { Table } from 'antd';
import { ZeroBasedPager } from '../../components/ZeroBasedPager.js';
import { groupByTag, type Channel, type ChannelRow } from './logic.js';
import { isTagRow, type ChannelColumn, type Row } from './columns.js';

export default function ChannelTable(props: {
  channels: Channel[];
  columns: ChannelColumn[];
  loading: boolean;
  tagMode: boolean;
  selected: number[];
  onSelect(ids: number[]): void;
  /** the pager, absent while a search is shown (a search is not paged) */
  pager: { page: number; pageSize: number; onPage(page: number): void; onPageSize(size: number): void } | null;
}) {
  const { channels, columns, loading, tagMode, selected, onSelect, pager } = props;
  const rows: Row[] = useMemo(
    () => (tagMode ? groupByTag(channels) : channels.map((c) => ({ ...c, rowKey: `c${c.id}` }))),
    [channels, tagMode],
  );
  return (
    <>
      <Table<Row>
        rowKey="rowKey"
        size="middle"
        loading={loading}
        columns={columns}
        dataSource={rows}
        pagination={false}
        scroll={{ x: 'max-content' }}
        expandable={{ childrenColumnName: 'children' }}
        rowSelection={{
          selectedRowKeys: selected.map((id) => `c${id}`),
          checkStrictly: false,
          onChange: (_keys, selRows) => onSelect(selRows.filter((r) => !isTagRow(r)).map((r) => (r as ChannelRow).id)),
        }}
      />
      {pager && (
        <ZeroBasedPager
          page={pager.page}
          pageSize={pager.pageSize}
          shown={channels.length}
          // Channel lists carry no total (new-api-compat.md §3.5): a full page means there may be another one.
          hasMore={channels.length >= pager.pageSize}
          onPage={pager.onPage}
          onPageSize={pager.onPageSize}
        />
      )}
    </>
  );
}
