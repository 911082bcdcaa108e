// Channels page (spec §2 Channels page, §4 channel states, §5 inline edit and batch, §7 channel calls, §8 copy).
// /channel/add and /channel/edit/:id render the same list with the editor drawer open. The server state is read and
// changed through TanStack Query (queries.ts, useChannelActions.tsx); this file composes the toolbar, the table and
// the dialogs and holds the view's state.
import { useState } from 'react';
import { useLocation, useNavigate, useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { App as AntApp, Card } from 'antd';
import { getPageSize } from '../../lib/storage.js';
import { ColumnSettings, useColumnVisibility } from '../../components/ColumnSettings.js';
import './i18n.js';
import { useChannelTypes } from './catalogue.js';
import type { Channel } from './logic.js';
import ChannelDrawer from './ChannelDrawer.js';
import TagEditModal from './TagEditModal.js';
import MultiKeyManager from './MultiKeyManager.js';
import BatchTagModal from './BatchTagModal.js';
import ChannelTable from './ChannelTable.js';
import ChannelToolbar from './ChannelToolbar.js';
import { channelColumns } from './columns.js';
import { useChannelList, useGroups, type ChannelSearch } from './queries.js';
import { useChannelActions } from './useChannelActions.js';

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

export default function ChannelPage() {
  const { t } = useTranslation(NS);
  const channelTypes = useChannelTypes().data;
  const { message } = AntApp.useApp();
  const navigate = useNavigate();
  const location = useLocation();
  const params = useParams();
  const editorOpen = location.pathname.startsWith('/channel/add') || location.pathname.startsWith('/channel/edit/');
  const editId = params.id ? Number(params.id) : undefined;

  const [page, setPage] = useState(0);
  const [pageSize, setPageSize] = useState(() => getPageSize());
  const [idSort, setIdSort] = useState(() => localStorage.getItem('id-sort') === 'true');
  const [tagMode, setTagMode] = useState(() => localStorage.getItem('channel-tag-mode') === 'true');
  // the search as submitted; null lists the pages
  const [search, setSearch] = useState<ChannelSearch | null>(null);
  const [selected, setSelected] = useState<number[]>([]);
  const [tagEdit, setTagEdit] = useState<string | null>(null);
  const [batchTagOpen, setBatchTagOpen] = useState(false);
  const [batchTag, setBatchTag] = useState('');
  const [keyManager, setKeyManager] = useState<Channel | null>(null);
  const { visible, update, isVisible } = useColumnVisibility(COLUMN_KEY, COLUMN_IDS);

  const list = useChannelList({ page, pageSize, idSort, tagMode, search }, (text) => message.error(text));
  const channels = list.data ?? [];
  const groups = useGroups().data ?? [];
  const actions = useChannelActions(
    () => setSelected([]),
    () => setBatchTagOpen(false),
  );
  const { reload } = actions;

  const allColumns = channelColumns({
    t,
    channelTypes,
    ...actions,
    editTag: setTagEdit,
    edit: (id) => navigate(`/channel/edit/${id}`),
    manageKeys: setKeyManager,
  });

  const startSearch = (next: ChannelSearch | null) => {
    // a new search (or another page) is a new query; the same one again still means "look again"
    if (JSON.stringify(next) === JSON.stringify(search) && (next || page === 0)) return void reload();
    setPage(0);
    setSearch(next);
  };

  const openBatchTag = () => {
    if (selected.length === 0) return void message.error(t('err.batchTagEmpty'));
    setBatchTag('');
    setBatchTagOpen(true);
  };

  return (
    <Card title={t('title')} data-testid="channel-page">
      <ChannelToolbar
        groups={groups}
        onSearch={startSearch}
        onAdd={() => navigate('/channel/add')}
        onRefresh={() => void reload()}
        selectedCount={selected.length}
        deleteDisabled={actions.deleteDisabled}
        batchDelete={() => actions.batchDelete(selected)}
        openBatchTag={openBatchTag}
        testAll={actions.testAll}
        updateAllBalances={actions.updateAllBalances}
        updatingBalances={actions.updatingBalances}
        fixAbilities={actions.fixAbilities}
        idSort={idSort}
        setIdSort={(v) => {
          setIdSort(v);
          localStorage.setItem('id-sort', String(v));
        }}
        tagMode={tagMode}
        setTagMode={(v) => {
          setTagMode(v);
          localStorage.setItem('channel-tag-mode', String(v));
        }}
        columnSettings={
          <ColumnSettings
            options={allColumns.map((c) => ({ key: c.key, title: c.key === 'id' ? 'ID' : String(c.title) }))}
            visible={visible}
            onChange={update}
            label={t('columns')}
            resetLabel={t('columnsReset')}
          />
        }
      />
      <ChannelTable
        channels={channels}
        columns={allColumns.filter((c) => isVisible(c.key))}
        loading={list.isFetching}
        tagMode={tagMode}
        selected={selected}
        onSelect={setSelected}
        pager={search ? null : { page, pageSize, onPage: setPage, onPageSize: setPageSize }}
      />
      <ChannelDrawer
        open={editorOpen}
        editId={editId}
        groups={groups}
        onClose={() => navigate('/channel')}
        onSaved={() => navigate('/channel')}
      />
      <MultiKeyManager channel={keyManager} onClose={() => setKeyManager(null)} onChanged={() => void reload()} />
      <TagEditModal tag={tagEdit} groups={groups} onClose={() => setTagEdit(null)} onSaved={() => setTagEdit(null)} />
      <BatchTagModal
        open={batchTagOpen}
        count={selected.length}
        value={batchTag}
        onChange={setBatchTag}
        onCancel={() => setBatchTagOpen(false)}
        onSubmit={() => actions.batchTag(selected, batchTag)}
      />
    </Card>
  );
}
