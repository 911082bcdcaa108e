// Channels page (spec §2 Channels page, §4 channel states, §5 inline edit and batch, §7 channel calls, §8 copy).
// /channel/add and /channel/edit/:id render the same list with the editor drawer open. Copy is done by the server
// (POST /api/channel/copy/:id, key included) after a confirmation, then the list is reloaded.
import { useCallback, useEffect, useMemo, useState } from 'react';
import { useLocation, useNavigate, useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import {
  App as AntApp,
  Button,
  Card,
  Input,
  InputNumber,
  Modal,
  Popconfirm,
  Select,
  Space,
  Switch,
  Table,
  Tag,
  Tooltip,
  Typography,
} from 'antd';
import type { ColumnsType } from 'antd/es/table';
import { quiet } from '../../components/quiet.js';
import { ZeroBasedPager } from '../../components/ZeroBasedPager.js';
import { api } from '../../lib/api.js';
import { renderGroupColor, timestamp2string } from '../../lib/render.js';
import { getPageSize } from '../../lib/storage.js';
import { ColumnSettings, useColumnVisibility } from '../../components/ColumnSettings.js';
import './i18n.js';
import { entryOf, useChannelTypes } from './catalogue.js';
import {
  groupByTag,
  parseInlinePriority,
  parseInlineWeight,
  parseStatusInfo,
  responseTimeColor,
  splitList,
  type Channel,
  type ChannelRow,
  type TagRow,
} from './logic.js';
import ChannelDrawer from './ChannelDrawer.js';
import TagEditModal from './TagEditModal.js';

const NS = 'channel';
const COLUMN_KEY = 'channels-table-columns';
const COLUMN_IDS = [
  'id',
  'name',
  'group',
  'type',
  'status',
  'response_time',
  'balance',
  'priority',
  'weight',
  'tag',
  'actions',
];

/** Name suffix of a copied channel (new-api's default) and the server's answer when the source is gone. */
const COPY_SUFFIX = '_复制';
const COPY_MISSING = '渠道不存在';

type Row = ChannelRow | TagRow;
const isTagRow = (r: Row): r is TagRow => (r as TagRow).isTag === true;

export default function ChannelPage() {
  const { t } = useTranslation(NS);
  const channelTypes = useChannelTypes().data;
  const { message } = AntApp.useApp();
  const navigate = useNavigate();
  const location = useLocation();
  const params = useParams();
  const editorOpen = location.pathname.startsWith('/channel/add') || location.pathname.startsWith('/channel/edit/');
  const editId = params.id ? Number(params.id) : undefined;

  const [channels, setChannels] = useState<Channel[]>([]);
  const [loading, setLoading] = useState(false);
  const [page, setPage] = useState(0);
  const [pageSize, setPageSize] = useState(() => getPageSize());
  const [idSort, setIdSort] = useState(() => localStorage.getItem('id-sort') === 'true');
  const [tagMode, setTagMode] = useState(() => localStorage.getItem('channel-tag-mode') === 'true');
  const [keyword, setKeyword] = useState('');
  const [searchGroup, setSearchGroup] = useState<string | undefined>();
  const [searchModel, setSearchModel] = useState('');
  const [searching, setSearching] = useState(false);
  const [groups, setGroups] = useState<string[]>([]);
  const [selected, setSelected] = useState<number[]>([]);
  const [tagEdit, setTagEdit] = useState<string | null>(null);
  const [batchTagOpen, setBatchTagOpen] = useState(false);
  const [batchTag, setBatchTag] = useState('');
  const [testing, setTesting] = useState<Record<number, boolean>>({});
  const [updatingBalances, setUpdatingBalances] = useState(false);
  const { visible, update, isVisible } = useColumnVisibility(COLUMN_KEY, COLUMN_IDS);

  const load = useCallback(async () => {
    setLoading(true);
    try {
      const res = searching
        ? await api.get<Channel[]>('/api/channel/search', {
            keyword,
            group: searchGroup,
            model: searchModel,
            id_sort: idSort,
            tag_mode: tagMode,
          })
        : await api.get<Channel[]>('/api/channel/', {
            p: page,
            page_size: pageSize,
            id_sort: idSort,
            tag_mode: tagMode,
          });
      if (res.success) setChannels(res.data ?? []);
      else message.error(res.message);
    } catch {
      /* toasted by api */
    } finally {
      setLoading(false);
    }
  }, [searching, keyword, searchGroup, searchModel, idSort, tagMode, page, pageSize, message]);

  useEffect(() => {
    quiet(load());
  }, [load]);

  useEffect(() => {
    void api
      .get<string[]>('/api/group/')
      .then((r) => r.success && setGroups(r.data ?? []))
      .catch(() => undefined);
  }, []);

  const rows: Row[] = useMemo(
    () => (tagMode ? groupByTag(channels) : channels.map((c) => ({ ...c, rowKey: `c${c.id}` }))),
    [channels, tagMode],
  );

  const putChannel = async (body: Record<string, unknown>, okText?: string) => {
    const res = await api.put<Channel>('/api/channel/', body);
    if (!res.success) {
      message.error(res.message);
      return false;
    }
    if (okText) message.success(okText);
    await load();
    return true;
  };

  const setStatus = (id: number, status: number) => putChannel({ id, status }, t('msg.done'));

  const deleteChannel = async (id: number) => {
    const res = await api.del(`/api/channel/${id}`);
    if (res.success) {
      message.success(t('msg.deleted'));
      await load();
    } else message.error(res.message);
  };

  const testChannel = async (ch: Channel) => {
    setTesting((s) => ({ ...s, [ch.id]: true }));
    try {
      const res = (await api.get(
        `/api/channel/test/${ch.id}`,
        ch.test_model ? { model: ch.test_model } : undefined,
      )) as {
        success: boolean;
        message: string;
        time?: number;
      };
      if (res.success) {
        message.success(t('msg.testOk', { name: ch.name, time: (res.time ?? 0).toFixed(2) }));
        await load();
      } else message.error(res.message);
    } finally {
      setTesting((s) => ({ ...s, [ch.id]: false }));
    }
  };

  const updateBalance = async (ch: Channel) => {
    const res = (await api.get<number>(`/api/channel/update_balance/${ch.id}`)) as {
      success: boolean;
      message: string;
      data?: number;
      balance?: number;
    };
    if (res.success) {
      const balance = res.balance ?? res.data ?? 0;
      message.success(t('msg.balanceOk', { name: ch.name, balance: Number(balance).toFixed(2) }));
      await load();
    } else message.error(res.message);
  };

  /**
   * Copy (spec §8, new-api's behaviour): the server duplicates the channel with every field including the key,
   * names it name + suffix and resets balance/used quota; the page then reloads the list.
   */
  const copyChannel = async (ch: Channel) => {
    try {
      const res = await api.post<{ id: number }>(
        `/api/channel/copy/${ch.id}?suffix=${encodeURIComponent(COPY_SUFFIX)}&reset_balance=true`,
      );
      if (res.success) {
        message.success(t('msg.copied'));
        await load();
      } else if (res.message === COPY_MISSING) message.error(t('err.copyMissing'));
      else message.error(t('err.copyFailedWith', { message: res.message }));
    } catch {
      message.error(t('err.copyFailed'));
    }
  };

  // Toolbar tools (spec §7): test all runs in the background on the server; balances and abilities finish first.
  const testAll = async () => {
    const res = await api.get('/api/channel/test');
    if (res.success) message.info(t('msg.testAllStarted'));
    else message.error(res.message);
  };

  const updateAllBalances = async () => {
    setUpdatingBalances(true);
    try {
      const res = await api.get('/api/channel/update_balance');
      if (!res.success) {
        message.error(res.message);
        return;
      }
      message.info(t('msg.allBalancesUpdated'));
      await load();
    } finally {
      setUpdatingBalances(false);
    }
  };

  const fixAbilities = async () => {
    const res = await api.post<number>('/api/channel/fix');
    if (!res.success) {
      message.error(res.message);
      return;
    }
    message.success(t('msg.abilitiesFixed', { count: res.data ?? 0 }));
    await load();
  };

  const saveInline = async (ch: Channel, field: 'priority' | 'weight', raw: unknown) => {
    const value = field === 'priority' ? parseInlinePriority(raw) : parseInlineWeight(raw);
    if (value === null) {
      message.error(t(field === 'priority' ? 'err.priority' : 'err.weight'));
      return;
    }
    if (value === (ch[field] ?? 0)) return;
    await putChannel({ id: ch.id, [field]: value }, t('msg.done'));
  };

  const tagAction = async (tag: string, action: 'enabled' | 'disabled') => {
    const res = await api.post(`/api/channel/tag/${action}`, { tag });
    if (res.success) {
      message.success(t('msg.done'));
      await load();
    } else message.error(res.message);
  };

  const batchDelete = async () => {
    if (selected.length === 0) {
      message.error(t('err.batchDeleteEmpty'));
      return;
    }
    const res = await api.post<number>('/api/channel/batch', { ids: selected });
    if (res.success) {
      message.success(t('msg.batchDeleted', { count: res.data ?? selected.length }));
      setSelected([]);
      await load();
    } else message.error(res.message);
  };

  const openBatchTag = () => {
    if (selected.length === 0) {
      message.error(t('err.batchTagEmpty'));
      return;
    }
    setBatchTag('');
    setBatchTagOpen(true);
  };

  const submitBatchTag = async () => {
    if (batchTag.trim() === '') {
      message.error(t('err.tagEmpty'));
      return;
    }
    const res = await api.post('/api/channel/batch/tag', { ids: selected, tag: batchTag.trim() });
    if (res.success) {
      message.success(t('msg.done'));
      setBatchTagOpen(false);
      setSelected([]);
      await load();
    } else message.error(res.message);
  };

  const deleteDisabled = async () => {
    const res = await api.del<number>('/api/channel/disabled');
    if (res.success) {
      message.success(t('msg.disabledDeleted', { count: res.data ?? 0 }));
      await load();
    } else message.error(res.message);
  };

  const renderStatus = (ch: Channel) => {
    switch (ch.status) {
      case 1:
        return <Tag color="green">{t('status.enabled')}</Tag>;
      case 2:
        return <Tag color="red">{t('status.disabled')}</Tag>;
      case 3: {
        const info = parseStatusInfo(ch.other_info);
        const tip = (
          <div>
            <div>{t('status.reason', { reason: info.reason ?? '-' })}</div>
            <div>{t('status.time', { time: info.time ? timestamp2string(info.time) : '-' })}</div>
          </div>
        );
        return (
          <Tooltip title={tip}>
            <Tag color="gold">{t('status.autoDisabled')}</Tag>
          </Tooltip>
        );
      }
      default:
        return <Tag>{t('status.unknown')}</Tag>;
    }
  };

  const renderGroups = (group: string) => (
    <Space size={2} wrap>
      {splitList(group).map((g) => (
        <Tag key={g} color={renderGroupColor(g)}>
          {g}
        </Tag>
      ))}
    </Space>
  );

  const renderResponseTime = (ms: number) => {
    const { color, label } = responseTimeColor(ms);
    return (
      <Tag color={color}>
        {label === 'untested' ? t('rt.untested') : t('rt.seconds', { s: (ms / 1000).toFixed(2) })}
      </Tag>
    );
  };

  // Priority and weight are edited in place the same way: saved on blur or Enter, validated by saveInline.
  const inlineNumberColumn = (field: 'priority' | 'weight'): ColumnsType<Row>[number] & { key: string } => ({
    key: field,
    title: t(`col.${field}`),
    width: 110,
    render: (_, r) =>
      isTagRow(r) ? null : (
        <InputNumber
          size="small"
          style={{ width: 80 }}
          key={`${field[0]}${r.id}-${r[field] ?? 0}`}
          defaultValue={r[field] ?? 0}
          aria-label={`${field}-${r.id}`}
          onBlur={(e) => quiet(saveInline(r, field, e.target.value))}
          onPressEnter={(e) => quiet(saveInline(r, field, (e.target as HTMLInputElement).value))}
        />
      ),
  });

  const allColumns: (ColumnsType<Row>[number] & { key: string })[] = [
    {
      key: 'id',
      title: 'ID',
      width: 70,
      render: (_, r) => (isTagRow(r) ? null : r.id),
    },
    {
      key: 'name',
      title: t('col.name'),
      render: (_, r) =>
        isTagRow(r) ? (
          <Typography.Text strong>{r.tag}</Typography.Text>
        ) : (
          <span data-testid={`channel-name-${r.id}`}>{r.name}</span>
        ),
    },
    {
      key: 'group',
      title: t('col.group'),
      render: (_, r) =>
        isTagRow(r)
          ? renderGroups(Array.from(new Set(r.children.flatMap((c) => splitList(c.group)))).join(','))
          : renderGroups(r.group),
    },
    {
      key: 'type',
      title: t('col.type'),
      render: (_, r) => {
        if (isTagRow(r)) {
          return <Tag color="blue">{t('tag.rowLabel', { count: r.children.length })}</Tag>;
        }
        const info = entryOf(channelTypes, r.type);
        return <Tag color={info?.color ?? 'default'}>{info?.label ?? t('type.unknown', { type: r.type })}</Tag>;
      },
    },
    {
      key: 'status',
      title: t('col.status'),
      render: (_, r) => {
        if (!isTagRow(r)) return renderStatus(r);
        const enabled = r.children.filter((c) => c.status === 1).length;
        return (
          <Tag color={enabled === r.children.length ? 'green' : enabled === 0 ? 'red' : 'gold'}>
            {t('tag.enabledCount', { enabled, total: r.children.length })}
          </Tag>
        );
      },
    },
    {
      key: 'response_time',
      title: t('col.responseTime'),
      render: (_, r) => (isTagRow(r) ? null : renderResponseTime(r.response_time)),
    },
    {
      key: 'balance',
      title: t('col.balance'),
      render: (_, r) =>
        isTagRow(r) ? null : (
          <Tooltip title={t('col.balanceTip')}>
            <Tag color="blue" style={{ cursor: 'pointer' }} onClick={() => quiet(updateBalance(r))}>
              ${Number(r.balance ?? 0).toFixed(2)}
            </Tag>
          </Tooltip>
        ),
    },
    inlineNumberColumn('priority'),
    inlineNumberColumn('weight'),
    {
      key: 'tag',
      title: t('col.tag'),
      render: (_, r) => (isTagRow(r) ? null : r.tag ? <Tag>{r.tag}</Tag> : null),
    },
    {
      key: 'actions',
      title: t('col.actions'),
      fixed: 'right',
      render: (_, r) => {
        if (isTagRow(r)) {
          return (
            <Space size={4} wrap>
              <Button size="small" onClick={() => quiet(tagAction(r.tag, 'enabled'))}>
                {t('tag.enableAll')}
              </Button>
              <Button size="small" danger onClick={() => quiet(tagAction(r.tag, 'disabled'))}>
                {t('tag.disableAll')}
              </Button>
              <Button size="small" type="primary" onClick={() => setTagEdit(r.tag)}>
                {t('tag.edit')}
              </Button>
            </Space>
          );
        }
        return (
          <Space size={4} wrap>
            <Button size="small" loading={!!testing[r.id]} onClick={() => quiet(testChannel(r))}>
              {t('action.test')}
            </Button>
            {r.status === 1 ? (
              <Button size="small" danger onClick={() => quiet(setStatus(r.id, 2))}>
                {t('action.disable')}
              </Button>
            ) : (
              <Button size="small" onClick={() => quiet(setStatus(r.id, 1))}>
                {t('action.enable')}
              </Button>
            )}
            <Button size="small" type="primary" onClick={() => navigate(`/channel/edit/${r.id}`)}>
              {t('action.edit')}
            </Button>
            <Popconfirm title={t('confirm.copy', { name: r.name })} onConfirm={() => quiet(copyChannel(r))}>
              <Button size="small" data-testid={`channel-copy-${r.id}`}>
                {t('action.copy')}
              </Button>
            </Popconfirm>
            <Popconfirm title={t('confirm.delete', { name: r.name })} onConfirm={() => quiet(deleteChannel(r.id))}>
              <Button size="small" danger type="text">
                {t('action.delete')}
              </Button>
            </Popconfirm>
          </Space>
        );
      },
    },
  ];
  const columns = allColumns.filter((c) => isVisible(c.key));

  // Channel lists carry no total (new-api-compat.md §3.5): a full page means there may be another one.
  const hasMore = !searching && channels.length >= pageSize;

  const startSearch = () => {
    const any = keyword.trim() !== '' || !!searchGroup || searchModel.trim() !== '';
    setSearching(any);
    setPage(0);
    if (searching === any) quiet(load());
  };

  return (
    <Card title={t('title')} data-testid="channel-page">
      <Space wrap style={{ marginBottom: 12 }}>
        <Input
          placeholder={t('search.keyword')}
          value={keyword}
          onChange={(e) => setKeyword(e.target.value)}
          onPressEnter={startSearch}
          style={{ width: 220 }}
          allowClear
        />
        <Select
          placeholder={t('search.group')}
          value={searchGroup}
          onChange={setSearchGroup}
          allowClear
          style={{ width: 140 }}
          options={groups.map((g) => ({ value: g, label: g }))}
        />
        <Input
          placeholder={t('search.model')}
          value={searchModel}
          onChange={(e) => setSearchModel(e.target.value)}
          onPressEnter={startSearch}
          style={{ width: 180 }}
          allowClear
        />
        <Button type="primary" onClick={startSearch}>
          {t('search.submit')}
        </Button>
      </Space>
      <Space wrap style={{ marginBottom: 12 }}>
        <Button type="primary" onClick={() => navigate('/channel/add')} data-testid="channel-add">
          {t('action.add')}
        </Button>
        <Button onClick={() => quiet(load())}>{t('action.refresh')}</Button>
        <Popconfirm title={t('confirm.deleteDisabled')} onConfirm={() => quiet(deleteDisabled())}>
          <Button danger>{t('action.deleteDisabled')}</Button>
        </Popconfirm>
        {/* Enabled without a selection: the click then explains instead of asking (spec §5). */}
        <Popconfirm
          title={t('confirm.batchDelete', { count: selected.length })}
          disabled={selected.length === 0}
          onConfirm={() => quiet(batchDelete())}
        >
          <Button
            danger
            onClick={() => {
              if (selected.length === 0) quiet(batchDelete());
            }}
            data-testid="channel-batch-delete"
          >
            {t('action.batchDelete')}
          </Button>
        </Popconfirm>
        <Button onClick={openBatchTag}>{t('action.batchTag')}</Button>
        <Popconfirm title={t('confirm.testAll')} onConfirm={() => quiet(testAll())}>
          <Button data-testid="channel-test-all">{t('action.testAll')}</Button>
        </Popconfirm>
        <Popconfirm title={t('confirm.updateAllBalances')} onConfirm={() => quiet(updateAllBalances())}>
          <Button loading={updatingBalances} data-testid="channel-update-balances">
            {t('action.updateAllBalances')}
          </Button>
        </Popconfirm>
        <Popconfirm
          title={t('confirm.fixAbilities')}
          description={t('confirm.fixAbilitiesHint')}
          onConfirm={() => quiet(fixAbilities())}
        >
          <Button danger data-testid="channel-fix-abilities">
            {t('action.fixAbilities')}
          </Button>
        </Popconfirm>
        <Space>
          <span>{t('toggle.idSort')}</span>
          <Switch
            checked={idSort}
            onChange={(v) => {
              setIdSort(v);
              localStorage.setItem('id-sort', String(v));
            }}
          />
          <span>{t('toggle.tagMode')}</span>
          <Switch
            checked={tagMode}
            onChange={(v) => {
              setTagMode(v);
              localStorage.setItem('channel-tag-mode', String(v));
            }}
          />
        </Space>
        <ColumnSettings
          options={allColumns.map((c) => ({ key: c.key, title: c.key === 'id' ? 'ID' : String(c.title) }))}
          visible={visible}
          onChange={update}
          label={t('columns')}
          resetLabel={t('columnsReset')}
        />
      </Space>
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
          onChange: (_keys, selRows) =>
            setSelected(selRows.filter((r) => !isTagRow(r)).map((r) => (r as ChannelRow).id)),
        }}
      />
      {!searching && (
        <ZeroBasedPager
          page={page}
          pageSize={pageSize}
          shown={channels.length}
          hasMore={hasMore}
          onPage={setPage}
          onPageSize={setPageSize}
        />
      )}
      <ChannelDrawer
        open={editorOpen}
        editId={editId}
        groups={groups}
        onClose={() => navigate('/channel')}
        onSaved={() => {
          navigate('/channel');
          quiet(load());
        }}
      />
      <TagEditModal
        tag={tagEdit}
        groups={groups}
        onClose={() => setTagEdit(null)}
        onSaved={() => {
          setTagEdit(null);
          quiet(load());
        }}
      />
      <Modal
        open={batchTagOpen}
        title={t('batchTag.title')}
        onCancel={() => setBatchTagOpen(false)}
        onOk={() => quiet(submitBatchTag())}
        okText={t('action.confirm')}
        cancelText={t('action.cancel')}
      >
        <Typography.Paragraph>{t('batchTag.hint', { count: selected.length })}</Typography.Paragraph>
        <Input value={batchTag} onChange={(e) => setBatchTag(e.target.value)} placeholder={t('batchTag.placeholder')} />
      </Modal>
    </Card>
  );
}
