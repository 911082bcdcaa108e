// The channels page's toolbar (spec §2 Channels page, §5 batch, §7 tools): the search row, then the actions. On a
// phone (issue 46 point 12) the secondary actions, the two toggles included, fold into one "more" menu: laid out as
// on a desktop they took about seven rows at 390 px. The menu asks the same confirmations as the buttons.
import { useState, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { App as AntApp, Button, Dropdown, Flex, Grid, Input, Popconfirm, Select, Space, Switch } from 'antd';
import type { MenuProps } from 'antd';
import { MoreOutlined } from '@ant-design/icons';
import { quiet } from '../../components/quiet.js';
import type { ChannelSearch } from './queries.js';

export interface ToolbarProps {
  groups: string[];
  /** the search as typed; null when every field is empty */
  onSearch(search: ChannelSearch | null): void;
  onAdd(): void;
  onRefresh(): void;
  selectedCount: number;
  deleteDisabled(): Promise<void>;
  batchDelete(): Promise<void>;
  openBatchTag(): void;
  testAll(): Promise<void>;
  updateAllBalances(): Promise<void>;
  updatingBalances: boolean;
  fixAbilities(): Promise<void>;
  idSort: boolean;
  setIdSort(v: boolean): void;
  tagMode: boolean;
  setTagMode(v: boolean): void;
  /** the column settings button */
  columnSettings: ReactNode;
}

export default function ChannelToolbar(props: ToolbarProps) {
  const phone = Grid.useBreakpoint().md === false;
  return (
    <>
      <SearchRow groups={props.groups} onSearch={props.onSearch} phone={phone} />
      {phone ? <PhoneActions {...props} /> : <DesktopActions {...props} />}
    </>
  );
}

function SearchRow(props: { groups: string[]; onSearch: ToolbarProps['onSearch']; phone: boolean }) {
  const { groups, onSearch, phone } = props;
  const { t } = useTranslation('channel');
  const [keyword, setKeyword] = useState('');
  const [group, setGroup] = useState<string | undefined>();
  const [model, setModel] = useState('');
  const submit = () => {
    const any = keyword.trim() !== '' || !!group || model.trim() !== '';
    onSearch(any ? { keyword, group, model } : null);
  };
  // on a phone the fields share the width, two to a row
  const width = (desktop: number) => (phone ? { flex: '1 1 140px', minWidth: 0 } : { width: desktop });
  const fields = [
    <Input
      key="keyword"
      placeholder={t('search.keyword')}
      value={keyword}
      onChange={(e) => setKeyword(e.target.value)}
      onPressEnter={submit}
      style={width(220)}
      allowClear
    />,
    <Select
      key="group"
      placeholder={t('search.group')}
      value={group}
      onChange={setGroup}
      allowClear
      style={width(140)}
      options={groups.map((g) => ({ value: g, label: g }))}
    />,
    <Input
      key="model"
      placeholder={t('search.model')}
      value={model}
      onChange={(e) => setModel(e.target.value)}
      onPressEnter={submit}
      style={width(180)}
      allowClear
    />,
    <Button key="submit" type="primary" onClick={submit}>
      {t('search.submit')}
    </Button>,
  ];
  return phone ? (
    <Flex wrap gap={8} style={{ marginBottom: 12 }} data-testid="channel-search-phone">
      {fields}
    </Flex>
  ) : (
    <Space wrap style={{ marginBottom: 12 }}>
      {fields}
    </Space>
  );
}

function DesktopActions(p: ToolbarProps) {
  const { t } = useTranslation('channel');
  return (
    <Space wrap style={{ marginBottom: 12 }}>
      <Button type="primary" onClick={p.onAdd} data-testid="channel-add">
        {t('action.add')}
      </Button>
      <Button onClick={p.onRefresh}>{t('action.refresh')}</Button>
      <Popconfirm title={t('confirm.deleteDisabled')} onConfirm={() => quiet(p.deleteDisabled())}>
        <Button danger>{t('action.deleteDisabled')}</Button>
      </Popconfirm>
      {/* Enabled without a selection: the click then explains instead of asking (spec §5). */}
      <Popconfirm
        title={t('confirm.batchDelete', { count: p.selectedCount })}
        disabled={p.selectedCount === 0}
        onConfirm={() => quiet(p.batchDelete())}
      >
        <Button
          danger
          onClick={() => {
            if (p.selectedCount === 0) quiet(p.batchDelete());
          }}
          data-testid="channel-batch-delete"
        >
          {t('action.batchDelete')}
        </Button>
      </Popconfirm>
      <Button onClick={p.openBatchTag}>{t('action.batchTag')}</Button>
      <Popconfirm title={t('confirm.testAll')} onConfirm={() => quiet(p.testAll())}>
        <Button data-testid="channel-test-all">{t('action.testAll')}</Button>
      </Popconfirm>
      <Popconfirm title={t('confirm.updateAllBalances')} onConfirm={() => quiet(p.updateAllBalances())}>
        <Button loading={p.updatingBalances} data-testid="channel-update-balances">
          {t('action.updateAllBalances')}
        </Button>
      </Popconfirm>
      <Popconfirm
        title={t('confirm.fixAbilities')}
        description={t('confirm.fixAbilitiesHint')}
        onConfirm={() => quiet(p.fixAbilities())}
      >
        <Button danger data-testid="channel-fix-abilities">
          {t('action.fixAbilities')}
        </Button>
      </Popconfirm>
      <Space>
        <span>{t('toggle.idSort')}</span>
        <Switch checked={p.idSort} onChange={p.setIdSort} />
        <span>{t('toggle.tagMode')}</span>
        <Switch checked={p.tagMode} onChange={p.setTagMode} />
      </Space>
      {p.columnSettings}
    </Space>
  );
}

/** Add, refresh and the column settings stay in view; everything else is in the menu. */
function PhoneActions(p: ToolbarProps) {
  const { t } = useTranslation('channel');
  const { modal } = AntApp.useApp();
  /** A menu entry that asks first, as its desktop button's Popconfirm does. */
  const confirmed = (title: string, run: () => Promise<void>, description?: string) => () =>
    void modal.confirm({
      title,
      content: description,
      okText: t('action.confirm'),
      cancelText: t('action.cancel'),
      onOk: () => quiet(run()),
    });
  const label = (id: string, text: string) => <span data-testid={`channel-more-${id}`}>{text}</span>;
  const toggle = (id: string, text: string, on: boolean) => (
    <Flex justify="space-between" align="center" gap={12} data-testid={`channel-more-${id}`}>
      {text}
      <Switch size="small" checked={on} />
    </Flex>
  );
  const items: MenuProps['items'] = [
    {
      key: 'delete-disabled',
      danger: true,
      label: label('delete-disabled', t('action.deleteDisabled')),
      onClick: confirmed(t('confirm.deleteDisabled'), p.deleteDisabled),
    },
    {
      key: 'batch-delete',
      danger: true,
      label: label('batch-delete', t('action.batchDelete')),
      // without a selection the click explains instead of asking (spec §5)
      onClick:
        p.selectedCount === 0
          ? () => quiet(p.batchDelete())
          : confirmed(t('confirm.batchDelete', { count: p.selectedCount }), p.batchDelete),
    },
    { key: 'batch-tag', label: label('batch-tag', t('action.batchTag')), onClick: p.openBatchTag },
    { type: 'divider' },
    {
      key: 'test-all',
      label: label('test-all', t('action.testAll')),
      onClick: confirmed(t('confirm.testAll'), p.testAll),
    },
    {
      key: 'update-balances',
      disabled: p.updatingBalances,
      label: label('update-balances', t('action.updateAllBalances')),
      onClick: confirmed(t('confirm.updateAllBalances'), p.updateAllBalances),
    },
    {
      key: 'fix-abilities',
      danger: true,
      label: label('fix-abilities', t('action.fixAbilities')),
      onClick: confirmed(t('confirm.fixAbilities'), p.fixAbilities, t('confirm.fixAbilitiesHint')),
    },
    { type: 'divider' },
    { key: 'id-sort', label: toggle('id-sort', t('toggle.idSort'), p.idSort), onClick: () => p.setIdSort(!p.idSort) },
    {
      key: 'tag-mode',
      label: toggle('tag-mode', t('toggle.tagMode'), p.tagMode),
      onClick: () => p.setTagMode(!p.tagMode),
    },
  ];
  return (
    <Flex wrap gap={8} style={{ marginBottom: 12 }} data-testid="channel-toolbar-phone">
      <Button type="primary" onClick={p.onAdd} data-testid="channel-add">
        {t('action.add')}
      </Button>
      <Button onClick={p.onRefresh}>{t('action.refresh')}</Button>
      <Dropdown menu={{ items }} trigger={['click']}>
        <Button icon={<MoreOutlined />} loading={p.updatingBalances} data-testid="channel-more">
          {t('action.more')}
        </Button>
      </Dropdown>
      {p.columnSettings}
    </Flex>
  );
}
