// Channels page (spec §2 Channels page, §4 channel states, §5 inline edit and batch, §7 channel calls, §8 copy).
// /channel/add and /channel/edit/:id render the same list with the editor drawer open. Copy is done by the server
// (POST /api/channel/copy/:id, key included) after a confirmation, then the list is reloaded.
import { useCallback, useEffect, useMemo, useState } from 'react';
import { useLocation, useNavigate, useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { translateServerMessage } from '../../i18n/server-message.js';
import { App as AntApp, Button, Card, Input, Modal, Popconfirm, Select, Space, Switch, Table, Typography } from 'antd';
import { quiet } from '../../components/quiet.js';
import { ZeroBasedPager } from '../../components/ZeroBasedPager.js';
import { api, failureText } from '../../lib/api.js';
import { getPageSize } from '../../lib/storage.js';
import { ColumnSettings, useColumnVisibility } from '../../components/ColumnSettings.js';
import './i18n.js';
import { useChannelTypes } from './catalogue.js';
import { groupByTag, parseInlinePriority, parseInlineWeight, type Channel, type ChannelRow } from './logic.js';
import ChannelDrawer from './ChannelDrawer.js';
import { BalanceFailures, readBalanceReport } from './BalanceReport.js';
import TagEditModal from './TagEditModal.js';
import MultiKeyManager from './MultiKeyManager.js';
import { channelColumns, isTagRow, type Row } from './columns.js';

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

export default function ChannelPage() {
  const { t } = useTranslation(NS);
  const channelTypes = useChannelTypes().data;
  const { message, modal } = AntApp.useApp();
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
  const [keyManager, setKeyManager] = useState<Channel | null>(null);
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
      else message.error(failureText(res, 'error.refreshFailed'));
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
      message.error(failureText(res, 'error.updateFailed'));
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
      } else if (res.message === translateServerMessage(COPY_MISSING)) message.error(t('err.copyMissing'));
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
      const report = readBalanceReport(res.data);
      if (report && report.failed.length > 0) {
        modal.warning({
          title: t('balances.failedTitle', { count: report.failed.length }),
          content: <BalanceFailures report={report} t={t} />,
          width: 560,
        });
      } else message.info(t('msg.allBalancesUpdated'));
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

  const allColumns = channelColumns({
    t,
    channelTypes,
    testing,
    saveInline,
    updateBalance,
    tagAction,
    editTag: setTagEdit,
    testChannel,
    setStatus,
    edit: (id) => navigate(`/channel/edit/${id}`),
    copyChannel,
    deleteChannel,
    manageKeys: setKeyManager,
  });
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
      <MultiKeyManager channel={keyManager} onClose={() => setKeyManager(null)} onChanged={() => quiet(load())} />
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
