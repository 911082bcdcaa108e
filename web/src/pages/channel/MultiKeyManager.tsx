// The key manager of a multi-key channel (new-api's POST /api/channel/multi_key/manage): each key's status with the
// reason and time it was disabled, paged and filtered by the server; enable, disable, test (GET
// /api/channel/test/:id?key_index=) or delete one key; enable or disable them all; delete the automatically disabled
// ones. Keys are shown as the server's preview, never whole.
import { useEffect, useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { App as AntApp, Button, Modal, Popconfirm, Select, Space, Table, Tag, Typography } from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { quiet } from '../../components/quiet.js';
import { api } from '../../lib/api.js';
import { renderTime } from '../../lib/render.js';
import { KEY_STATUS, keyStatusTag, type KeyStatusPage, type KeyStatusRow } from './multi-key.js';
import type { Channel } from './logic.js';
import { CHANNEL_KEYS_KEY } from './queries.js';
import './i18n.js';

const NS = 'channel';
const PAGE_SIZE = 10;
const MANAGE = '/api/channel/multi_key/manage';

export default function MultiKeyManager(props: { channel: Channel | null; onClose(): void; onChanged(): void }) {
  const { channel, onClose, onChanged } = props;
  const { t } = useTranslation(NS);
  const { message } = AntApp.useApp();
  const qc = useQueryClient();
  const [page, setPage] = useState(1);
  const [status, setStatus] = useState<number | undefined>();
  const id = channel?.id;

  // a closed manager starts from the first page, unfiltered, when it opens again
  useEffect(() => {
    if (id !== undefined) return;
    setPage(1);
    setStatus(undefined);
  }, [id]);

  const keys = useQuery({
    queryKey: [...CHANNEL_KEYS_KEY, id, page, status],
    enabled: id !== undefined,
    queryFn: async () => {
      const res = await api.post<KeyStatusPage>(MANAGE, {
        channel_id: id,
        action: 'get_key_status',
        page,
        page_size: PAGE_SIZE,
        ...(status === undefined ? {} : { status }),
      });
      if (!res.success || !res.data) {
        message.error(res.message);
        throw new Error(res.message);
      }
      return res.data;
    },
  });
  const data = id === undefined ? null : (keys.data ?? null);

  /** One manage action; its answer is the toast, then the list and the channel page are read again. */
  const manage = useMutation({
    mutationFn: (v: { action: string; keyIndex?: number }) =>
      api.post(MANAGE, {
        channel_id: id,
        action: v.action,
        ...(v.keyIndex === undefined ? {} : { key_index: v.keyIndex }),
      }),
    onSuccess: async (res) => {
      if (res.success) message.success(res.message || t('msg.done'));
      else message.error(res.message);
      await qc.invalidateQueries({ queryKey: CHANNEL_KEYS_KEY });
      onChanged();
    },
  });
  const act = (action: string, keyIndex?: number) => manage.mutateAsync({ action, keyIndex });

  const test = useMutation({
    mutationFn: (index: number) =>
      api.get(`/api/channel/test/${id}`, { key_index: index }) as Promise<{
        success: boolean;
        message: string;
        time?: number;
      }>,
    onSuccess: (res, index) => {
      if (res.success) message.success(t('mk.testOk', { index, time: (res.time ?? 0).toFixed(2) }));
      else message.error(res.message);
    },
  });
  const testing = test.isPending ? test.variables : null;
  const testKey = (index: number) => test.mutateAsync(index);

  const columns: ColumnsType<KeyStatusRow> = [
    { key: 'index', title: t('mk.col.index'), dataIndex: 'index', width: 70 },
    {
      key: 'key',
      title: t('mk.col.key'),
      render: (_, k) => <Typography.Text code>{k.key_preview}</Typography.Text>,
    },
    {
      key: 'status',
      title: t('mk.col.status'),
      render: (_, k) => {
        const tag = keyStatusTag(k.status);
        return (
          <Tag color={tag.color} data-testid={`key-status-${k.index}`}>
            {t(tag.label)}
          </Tag>
        );
      },
    },
    {
      key: 'reason',
      title: t('mk.col.reason'),
      render: (_, k) => (k.reason ? <Typography.Text type="secondary">{k.reason}</Typography.Text> : null),
    },
    {
      key: 'time',
      title: t('mk.col.time'),
      render: (_, k) => (k.disabled_time ? renderTime(k.disabled_time) : null),
    },
    {
      key: 'actions',
      title: t('col.actions'),
      render: (_, k) => (
        <Space size={4} style={{ whiteSpace: 'nowrap' }}>
          <Button
            size="small"
            loading={testing === k.index}
            onClick={() => quiet(testKey(k.index))}
            data-testid={`key-test-${k.index}`}
          >
            {t('action.test')}
          </Button>
          {k.status === KEY_STATUS.enabled ? (
            <Button
              size="small"
              danger
              onClick={() => quiet(act('disable_key', k.index))}
              data-testid={`key-disable-${k.index}`}
            >
              {t('action.disable')}
            </Button>
          ) : (
            <Button
              size="small"
              onClick={() => quiet(act('enable_key', k.index))}
              data-testid={`key-enable-${k.index}`}
            >
              {t('action.enable')}
            </Button>
          )}
          <Popconfirm
            title={t('mk.confirmDelete', { index: k.index })}
            okButtonProps={{ danger: true, 'data-testid': `key-delete-confirm-${k.index}` }}
            onConfirm={() => quiet(act('delete_key', k.index))}
          >
            <Button size="small" danger type="text" data-testid={`key-delete-${k.index}`}>
              {t('action.delete')}
            </Button>
          </Popconfirm>
        </Space>
      ),
    },
  ];

  return (
    <Modal
      open={!!channel}
      onCancel={onClose}
      footer={null}
      width={900}
      title={channel ? t('mk.title', { name: channel.name }) : undefined}
      destroyOnHidden
    >
      <Space wrap style={{ marginBottom: 12 }}>
        <Typography.Text data-testid="key-counts">
          {data
            ? t('mk.counts', {
                enabled: data.enabled_count,
                manual: data.manual_disabled_count,
                auto: data.auto_disabled_count,
              })
            : null}
        </Typography.Text>
        <Select
          allowClear
          placeholder={t('mk.filter')}
          value={status}
          onChange={(v: number | undefined) => {
            setStatus(v);
            setPage(1);
          }}
          style={{ width: 180 }}
          data-testid="key-filter"
          options={[KEY_STATUS.enabled, KEY_STATUS.manual, KEY_STATUS.auto].map((s) => ({
            value: s,
            label: t(keyStatusTag(s).label),
          }))}
        />
        <Button onClick={() => quiet(act('enable_all_keys'))} data-testid="key-enable-all">
          {t('mk.enableAll')}
        </Button>
        <Popconfirm title={t('mk.confirmDisableAll')} onConfirm={() => quiet(act('disable_all_keys'))}>
          <Button danger data-testid="key-disable-all">
            {t('mk.disableAll')}
          </Button>
        </Popconfirm>
        <Popconfirm title={t('mk.confirmDeleteAuto')} onConfirm={() => quiet(act('delete_disabled_keys'))}>
          <Button danger data-testid="key-delete-auto">
            {t('mk.deleteAuto')}
          </Button>
        </Popconfirm>
      </Space>
      <Table<KeyStatusRow>
        size="small"
        rowKey="index"
        loading={keys.isFetching}
        columns={columns}
        dataSource={data?.keys ?? []}
        scroll={{ x: 'max-content' }}
        pagination={{
          current: data?.page ?? page,
          pageSize: PAGE_SIZE,
          total: data?.total ?? 0,
          showSizeChanger: false,
          onChange: setPage,
        }}
      />
    </Modal>
  );
}
