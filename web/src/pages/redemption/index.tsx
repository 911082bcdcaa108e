// Redemption codes page (admin; spec §2 Redemption codes page, §4 Redemption status, §5 Redemption, §9).
// The list is paged by the server ({items,total,page,page_size}; p is 1-based, new-api-compat.md §3.5).
import { useEffect, useState } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { App as AntApp, Button, Card, Input, Modal, Popconfirm, Space, Table, Tag, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { quiet } from '../../components/quiet.js';
import { api } from '../../lib/api.js';
import { renderQuota, renderTime } from '../../lib/render.js';
import { copyText, getPageSize, PAGE_SIZE_OPTIONS, setPageSize as storePageSize } from '../../lib/storage.js';
import './i18n.js';
import {
  canEdit,
  keysText,
  selectedText,
  STATUS_DISABLED,
  STATUS_UNUSED,
  STATUS_USED,
  toggleTarget,
  type Redemption,
  type RedemptionPage,
  REDEMPTIONS_KEY,
} from './logic.js';
import RedemptionDrawer from './RedemptionDrawer.js';

export default function RedemptionPageView() {
  const { t } = useTranslation('redemption');
  const { message, modal } = AntApp.useApp();
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(() => getPageSize());
  const [keyword, setKeyword] = useState('');
  const [query, setQuery] = useState('');
  const [selected, setSelected] = useState<Redemption[]>([]);
  const [drawer, setDrawer] = useState<{ open: boolean; id?: number }>({ open: false });
  const [createdKeys, setCreatedKeys] = useState<string[] | null>(null);
  const qc = useQueryClient();

  const list = useQuery({
    queryKey: [...REDEMPTIONS_KEY, query, page, pageSize],
    placeholderData: keepPreviousData,
    queryFn: async () => {
      const res = query
        ? await api.get<RedemptionPage>('/api/redemption/search', { keyword: query, p: page, page_size: pageSize })
        : await api.get<RedemptionPage>('/api/redemption/', { p: page, page_size: pageSize });
      if (!res.success || !res.data) throw new Error(res.message);
      return { rows: res.data.items ?? [], total: res.data.total ?? 0 };
    },
  });
  const rows = list.data?.rows ?? [];
  const total = list.data?.total ?? 0;
  useEffect(() => {
    if (list.error) message.error(list.error.message);
  }, [list.error, message]);
  const reload = () => qc.invalidateQueries({ queryKey: REDEMPTIONS_KEY });

  const copy = async (text: string) => {
    if (await copyText(text)) message.success(t('msg.copied'));
    else
      modal.info({
        title: t('msg.copyManual'),
        content: <Typography.Paragraph copyable>{text}</Typography.Paragraph>,
      });
  };

  const copySelected = () => {
    if (selected.length === 0) {
      message.error(t('err.selectOne'));
      return;
    }
    quiet(copy(selectedText(selected)));
  };

  /** A code's change: a refusal is toasted; a success reloads the list (or steps back from an emptied page). */
  const change = useMutation({
    mutationFn: (c: { r: Redemption; status: number } | { r: Redemption; status?: undefined }) =>
      c.status !== undefined
        ? api.put('/api/redemption/?status_only=true', { id: c.r.id, status: c.status })
        : api.del(`/api/redemption/${c.r.id}/`),
    onSuccess: (res, c) => {
      if (!res.success) return void message.error(res.message);
      if (c.status !== undefined) {
        message.success(t('msg.done'));
        return reload();
      }
      message.success(t('msg.deleted'));
      setSelected((s) => s.filter((x) => x.id !== c.r.id));
      // Deleting the last row of the last page moves back one page.
      if (rows.length === 1 && page > 1) setPage(page - 1);
      else return reload();
    },
  });
  const setStatus = (r: Redemption, status: number) => change.mutateAsync({ r, status }).catch(() => undefined);
  const remove = (r: Redemption) => change.mutateAsync({ r }).catch(() => undefined);

  const statusTag = (s: number) => {
    switch (s) {
      case STATUS_UNUSED:
        return <Tag color="green">{t('status.unused')}</Tag>;
      case STATUS_DISABLED:
        return <Tag color="red">{t('status.disabled')}</Tag>;
      case STATUS_USED:
        return <Tag color="default">{t('status.used')}</Tag>;
      default:
        return <Tag>{t('status.unknown')}</Tag>;
    }
  };

  const columns: ColumnsType<Redemption> = [
    { key: 'id', title: t('col.id'), dataIndex: 'id' },
    { key: 'name', title: t('col.name'), dataIndex: 'name' },
    {
      key: 'status',
      title: t('col.status'),
      render: (_, r) => <span data-testid={`redemption-status-${r.id}`}>{statusTag(r.status)}</span>,
    },
    { key: 'quota', title: t('col.quota'), render: (_, r) => renderQuota(r.quota) },
    { key: 'created', title: t('col.created'), render: (_, r) => renderTime(r.created_time) },
    { key: 'usedBy', title: t('col.usedBy'), render: (_, r) => (r.used_user_id ? r.used_user_id : t('col.none')) },
    {
      key: 'redeemed',
      title: t('col.redeemed'),
      render: (_, r) => (r.redeemed_time ? renderTime(r.redeemed_time) : '-'),
    },
    {
      key: 'actions',
      title: t('col.actions'),
      fixed: 'right',
      render: (_, r) => {
        const target = toggleTarget(r);
        return (
          <Space size={4}>
            <Button size="small" onClick={() => quiet(copy(r.key))} data-testid={`redemption-copy-${r.id}`}>
              {t('action.copy')}
            </Button>
            <Popconfirm
              title={t('confirm.delete', { name: r.name })}
              okButtonProps={{ danger: true, 'data-testid': `redemption-delete-confirm-${r.id}` }}
              onConfirm={() => quiet(remove(r))}
            >
              <Button size="small" danger data-testid={`redemption-delete-${r.id}`}>
                {t('action.delete')}
              </Button>
            </Popconfirm>
            <Button
              size="small"
              disabled={target === null}
              onClick={() => target !== null && quiet(setStatus(r, target))}
              data-testid={`redemption-toggle-${r.id}`}
            >
              {r.status === STATUS_DISABLED ? t('action.enable') : t('action.disable')}
            </Button>
            <Button size="small" disabled={!canEdit(r)} onClick={() => setDrawer({ open: true, id: r.id })}>
              {t('action.edit')}
            </Button>
          </Space>
        );
      },
    },
  ];

  const search = () => {
    const next = keyword.trim();
    // a new search (or another page) is a new query; the same one again still means "look again"
    if (next === query && page === 1) return void reload();
    setPage(1);
    setQuery(next);
  };

  return (
    <Card title={t('title')} data-testid="redemption-page">
      <Space wrap style={{ marginBottom: 12 }}>
        <Input
          placeholder={t('search.keyword')}
          value={keyword}
          onChange={(e) => setKeyword(e.target.value)}
          onPressEnter={search}
          allowClear
          style={{ width: 240 }}
        />
        <Button type="primary" onClick={search}>
          {t('search.submit')}
        </Button>
        <Button type="primary" onClick={() => setDrawer({ open: true })} data-testid="redemption-add">
          {t('action.add')}
        </Button>
        <Button onClick={copySelected}>{t('action.copySelected')}</Button>
      </Space>
      <Table<Redemption>
        rowKey="id"
        loading={list.isFetching}
        columns={columns}
        dataSource={rows}
        scroll={{ x: 'max-content' }}
        rowSelection={{ selectedRowKeys: selected.map((s) => s.id), onChange: (_k, sel) => setSelected(sel) }}
        pagination={{
          current: page,
          pageSize,
          total,
          showSizeChanger: true,
          pageSizeOptions: PAGE_SIZE_OPTIONS,
          onChange: (p, size) => {
            if (size !== pageSize) {
              setPageSize(size);
              storePageSize(size);
              setPage(1);
            } else setPage(p);
          },
        }}
      />
      <RedemptionDrawer
        open={drawer.open}
        editId={drawer.id}
        onClose={() => setDrawer({ open: false })}
        onSaved={(keys) => {
          setDrawer({ open: false });
          if (keys && keys.length) setCreatedKeys(keys);
        }}
      />
      <Modal
        open={createdKeys !== null}
        title={t('created.title')}
        onCancel={() => setCreatedKeys(null)}
        footer={[
          <Button
            key="copy"
            type="primary"
            onClick={() => quiet(copy(keysText(createdKeys ?? [])))}
            data-testid="redemption-copy-all"
          >
            {t('action.copyAll')}
          </Button>,
          <Button key="close" onClick={() => setCreatedKeys(null)}>
            {t('action.close')}
          </Button>,
        ]}
      >
        <Typography.Paragraph>{t('created.hint', { count: createdKeys?.length ?? 0 })}</Typography.Paragraph>
        <Input.TextArea
          readOnly
          value={keysText(createdKeys ?? [])}
          autoSize={{ minRows: 2, maxRows: 12 }}
          data-testid="redemption-created-keys"
        />
      </Modal>
    </Card>
  );
}
