// Table editor of model prices and ratios (visual editor and "models with no ratio set"): search, page size 10,
// inline numeric inputs (ratio inputs disabled while a fixed price is set), add/edit dialog, batch set, delete.
// Props:
//   id: string                          – data-testid `ratio-table-<id>`
//   initialRows: ModelRow[]             – rows from the stored options (a new identity resets the editor)
//   allowAdd?: boolean                  – show "add model" and row delete (the full editor)
//   onSave(rows): Promise<void>         – writes the maps (after the rows passed the numeric / zero-price checks)
//   saving?: boolean
import { useEffect, useMemo, useState } from 'react';
import { App, Button, Flex, Input, Popconfirm, Table, Tag, Tooltip } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { DeleteOutlined, EditOutlined, PlusOutlined, SearchOutlined } from '@ant-design/icons';
import { useTranslation } from 'react-i18next';
import { editRow, modeOf, rowProblems, type ModelRow, type RowField } from '../ratioLogic.js';
import { NS } from '../i18n.js';
import ModelDialog from './ModelDialog.js';
import BatchDialog from './BatchDialog.js';

export interface RatioTableProps {
  id: string;
  initialRows: ModelRow[];
  allowAdd?: boolean;
  onSave(rows: ModelRow[]): Promise<void>;
  saving?: boolean;
}

export const RATIO_PAGE_SIZE = 10;

export default function RatioTable({ id, initialRows, allowAdd, onSave, saving }: RatioTableProps) {
  const { t } = useTranslation(NS);
  const { message } = App.useApp();
  const [rows, setRows] = useState<ModelRow[]>(initialRows);
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(1);
  const [selected, setSelected] = useState<string[]>([]);
  const [dialog, setDialog] = useState<{ open: boolean; row: ModelRow | null }>({ open: false, row: null });
  const [batchOpen, setBatchOpen] = useState(false);

  useEffect(() => {
    setRows(initialRows);
    setSelected([]);
  }, [initialRows]);

  const shown = useMemo(() => {
    const q = search.trim().toLowerCase();
    return q ? rows.filter((r) => r.name.toLowerCase().includes(q)) : rows;
  }, [rows, search]);

  const update = (name: string, field: RowField, text: string) => {
    const idx = rows.findIndex((r) => r.name === name);
    if (idx < 0) return;
    const res = editRow(rows[idx]!, field, text);
    if (res.error) {
      void message.error(t('ratio.err.notNumber'));
      return;
    }
    const next = [...rows];
    next[idx] = res.row;
    setRows(next);
  };

  const save = async () => {
    const problem = rowProblems(rows, initialRows)[0];
    if (problem) {
      void message.error(`${problem.name}: ${t(`ratio.err.${problem.error}`)}`);
      return;
    }
    await onSave(rows);
  };

  const openBatch = () => {
    if (selected.length === 0) {
      void message.warning(t('batch.err.noSelection'));
      return;
    }
    setBatchOpen(true);
  };

  const cell = (field: RowField) => (v: string, r: ModelRow) => (
    <Input
      size="small"
      value={v}
      disabled={field !== 'price' && modeOf(r) === 'per-request'}
      placeholder={field === 'price' ? t('ratio.pricePh') : t('ratio.ratioPh')}
      onChange={(e) => update(r.name, field, e.target.value)}
      aria-label={`${r.name} ${field}`}
      data-testid={`cell-${field}-${r.name}`}
    />
  );

  const columns: ColumnsType<ModelRow> = [
    { title: t('ratio.name'), dataIndex: 'name', ellipsis: true },
    {
      title: t('ratio.mode'),
      key: 'mode',
      width: 110,
      render: (_, r) =>
        modeOf(r) === 'per-request' ? (
          <Tag color="purple">{t('ratio.perRequest')}</Tag>
        ) : (
          <Tag color="blue">{t('ratio.perToken')}</Tag>
        ),
    },
    { title: t('ratio.price'), dataIndex: 'price', width: 150, render: cell('price') },
    { title: t('ratio.ratio'), dataIndex: 'ratio', width: 150, render: cell('ratio') },
    { title: t('ratio.completionRatio'), dataIndex: 'completionRatio', width: 150, render: cell('completionRatio') },
    {
      title: t('ratio.actions'),
      key: 'actions',
      width: 100,
      render: (_, r) => (
        <Flex gap={4}>
          <Tooltip title={t('ratio.edit')}>
            <Button
              size="small"
              icon={<EditOutlined />}
              aria-label={t('ratio.edit')}
              onClick={() => setDialog({ open: true, row: r })}
            />
          </Tooltip>
          {allowAdd ? (
            <Popconfirm
              title={t('ratio.deleteConfirm')}
              onConfirm={() => setRows(rows.filter((x) => x.name !== r.name))}
            >
              <Button size="small" danger icon={<DeleteOutlined />} aria-label={t('ratio.delete')} />
            </Popconfirm>
          ) : null}
        </Flex>
      ),
    },
  ];

  return (
    <div data-testid={`ratio-table-${id}`}>
      <Flex gap={8} wrap style={{ marginBottom: 12 }}>
        <Input
          allowClear
          prefix={<SearchOutlined />}
          placeholder={t('ratio.searchPh')}
          value={search}
          onChange={(e) => {
            setSearch(e.target.value);
            setPage(1);
          }}
          style={{ width: 260 }}
          data-testid="ratio-search"
        />
        {allowAdd ? (
          <Button icon={<PlusOutlined />} onClick={() => setDialog({ open: true, row: null })} data-testid="ratio-add">
            {t('ratio.add')}
          </Button>
        ) : null}
        <Button onClick={openBatch} data-testid="ratio-batch">
          {t('ratio.batch')}
          {selected.length ? ` (${selected.length})` : ''}
        </Button>
        <Button type="primary" loading={saving} onClick={() => void save()} data-testid="ratio-save">
          {t('ratio.save')}
        </Button>
      </Flex>
      <Table<ModelRow>
        rowKey="name"
        size="small"
        columns={columns}
        dataSource={shown}
        rowSelection={{
          selectedRowKeys: selected,
          onChange: (keys) => setSelected(keys.map(String)),
          preserveSelectedRowKeys: true,
        }}
        pagination={{
          current: page,
          pageSize: RATIO_PAGE_SIZE,
          onChange: setPage,
          showSizeChanger: false,
          showTotal: (n) => t('ratio.total', { count: n }),
        }}
        scroll={{ x: 760 }}
      />
      <ModelDialog
        open={dialog.open}
        row={dialog.row}
        rows={rows}
        onClose={() => setDialog({ open: false, row: null })}
        onApply={(next) => {
          setRows(next);
          setDialog({ open: false, row: null });
        }}
      />
      <BatchDialog
        open={batchOpen}
        rows={rows}
        selected={selected}
        onClose={() => setBatchOpen(false)}
        onApply={(next) => {
          setRows(next);
          setBatchOpen(false);
        }}
      />
    </div>
  );
}
