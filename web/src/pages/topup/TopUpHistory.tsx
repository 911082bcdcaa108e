// The wallet's top-up history (new-api's GET /api/user/topup/self; new-api-compat.md §9.1): the user's orders with
// their time, trade number, method, amount, money and state, searchable by trade number. An admin can switch to every
// user's orders (GET /api/user/topup) and complete a pending one by hand (POST /api/user/topup/complete) after a
// confirmation; the server logs the completion with the admin's id.
import { useState } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { App as AntApp, Button, Divider, Input, Segmented, Space, Table, Tag, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import type { TFunction } from 'i18next';
import { isAdmin, useUser } from '../../context/user.js';
import { SELF_KEY } from '../../lib/self.js';
import { api } from '../../lib/api.js';
import { quotaPerUnit, renderQuota, timestamp2string } from '../../lib/render.js';
import './i18n.js';

export interface TopUpOrder {
  id: number;
  user_id: number;
  amount: number;
  money: number;
  trade_no: string;
  payment_method: string;
  create_time: number;
  status: string;
}

interface OrderPage {
  items: TopUpOrder[];
  total: number;
  page: number;
  page_size: number;
}

type Scope = 'self' | 'all';

const STATUS_COLOURS: Record<string, string> = { success: 'green', pending: 'orange', expired: 'default' };
const KNOWN_METHODS = ['alipay', 'wxpay', 'stripe', 'creem'];

function methodLabel(t: TFunction, method: string): string {
  if (KNOWN_METHODS.includes(method)) return t(`history.method.${method}`);
  return method || '-';
}

/** The quota an order credits, shown as the balance is: a Creem order's amount is quota, any other's whole units. */
export function orderQuota(order: Pick<TopUpOrder, 'amount' | 'payment_method'>): number {
  return order.payment_method === 'creem' ? order.amount : order.amount * quotaPerUnit();
}

function statusTag(t: TFunction, status: string) {
  const known = status in STATUS_COLOURS;
  return <Tag color={STATUS_COLOURS[status] ?? 'default'}>{known ? t(`history.status.${status}`) : status || '-'}</Tag>;
}

export function TopUpHistory() {
  const { t } = useTranslation('topup');
  const { message, modal } = AntApp.useApp();
  const { user } = useUser();
  const admin = isAdmin(user);
  const qc = useQueryClient();
  const [scope, setScope] = useState<Scope>('self');
  const [keyword, setKeyword] = useState('');
  const [searched, setSearched] = useState('');
  const [page, setPage] = useState(1);
  const [pageSize, setPageSize] = useState(10);
  const all = admin && scope === 'all';
  const url = all ? '/api/user/topup' : '/api/user/topup/self';

  const list = useQuery({
    queryKey: ['topup', 'history', url, searched, page, pageSize] as const,
    queryFn: async (): Promise<OrderPage> => {
      const res = await api.get<OrderPage>(url, { p: page, page_size: pageSize, keyword: searched || undefined });
      if (!res.success) throw new Error(res.message);
      return res.data ?? { items: [], total: 0, page, page_size: pageSize };
    },
    placeholderData: keepPreviousData,
  });

  const completion = useMutation({
    mutationFn: (tradeNo: string) => api.post('/api/user/topup/complete', { trade_no: tradeNo }),
    onSuccess: async (res) => {
      if (!res.success) return void message.error(res.message);
      message.success(t('history.completed'));
      await qc.invalidateQueries({ queryKey: ['topup', 'history'] });
      await qc.invalidateQueries({ queryKey: SELF_KEY });
    },
    onError: () => void message.error(t('err.request')),
  });

  const confirmComplete = (order: TopUpOrder) =>
    modal.confirm({
      title: t('history.completeTitle'),
      content: t('history.completeContent', { tradeNo: order.trade_no, user: order.user_id }),
      okText: t('confirm.ok'),
      cancelText: t('confirm.cancel'),
      centered: true,
      onOk: () => completion.mutateAsync(order.trade_no).catch(() => undefined),
    });

  const columns: ColumnsType<TopUpOrder> = [
    { title: t('history.time'), dataIndex: 'create_time', render: (v: number) => timestamp2string(v) },
    {
      title: t('history.tradeNo'),
      dataIndex: 'trade_no',
      render: (v: string) => <Typography.Text copyable>{v}</Typography.Text>,
    },
    ...(all ? [{ title: t('history.user'), dataIndex: 'user_id' }] : []),
    { title: t('history.method'), dataIndex: 'payment_method', render: (v: string) => methodLabel(t, v) },
    {
      title: t('history.amount'),
      dataIndex: 'amount',
      render: (_: number, order: TopUpOrder) => renderQuota(orderQuota(order)),
    },
    { title: t('history.money'), dataIndex: 'money', render: (v: number) => Number(v).toFixed(2) },
    { title: t('history.state'), dataIndex: 'status', render: (v: string) => statusTag(t, v) },
    ...(all
      ? [
          {
            title: t('history.actions'),
            key: 'actions',
            render: (_: unknown, order: TopUpOrder) =>
              order.status === 'pending' ? (
                <Button size="small" onClick={() => confirmComplete(order)} data-testid={`complete-${order.trade_no}`}>
                  {t('history.complete')}
                </Button>
              ) : null,
          },
        ]
      : []),
  ];

  const search = () => {
    setPage(1);
    setSearched(keyword.trim());
  };

  return (
    <div data-testid="topup-history">
      <Divider />
      <Space wrap style={{ marginBottom: 12, justifyContent: 'space-between', width: '100%' }}>
        <Typography.Title level={5} style={{ margin: 0 }}>
          {t('history.title')}
        </Typography.Title>
        {admin && (
          <Segmented<Scope>
            value={scope}
            onChange={(v) => {
              setScope(v);
              setPage(1);
            }}
            options={[
              { label: t('history.mine'), value: 'self' },
              { label: t('history.all'), value: 'all' },
            ]}
            data-testid="history-scope"
          />
        )}
      </Space>
      <Input.Search
        value={keyword}
        onChange={(e) => setKeyword(e.target.value)}
        onSearch={search}
        placeholder={t('history.search')}
        allowClear
        style={{ marginBottom: 12, maxWidth: 360 }}
        data-testid="history-search"
      />
      <Table<TopUpOrder>
        rowKey="id"
        size="small"
        scroll={{ x: 'max-content' }}
        loading={list.isFetching}
        columns={columns}
        dataSource={list.data?.items ?? []}
        locale={{ emptyText: list.error ? list.error.message : t('history.empty') }}
        pagination={{
          current: page,
          pageSize,
          total: list.data?.total ?? 0,
          showSizeChanger: true,
          onChange: (p, size) => {
            setPage(size === pageSize ? p : 1);
            setPageSize(size);
          },
        }}
      />
    </div>
  );
}
