// API tokens page (spec §2 Tokens page, §4 token states, §5 Token form, §9 presets).
import { lazy, Suspense, useEffect, useMemo, useState, type ReactNode } from 'react';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import {
  Alert,
  App as AntApp,
  Button,
  Card,
  Flex,
  Grid,
  Input,
  Popconfirm,
  Space,
  Switch,
  Table,
  Tag,
  Tooltip,
  Typography,
} from 'antd';
import { CopyOutlined } from '@ant-design/icons';
import type { ColumnsType } from 'antd/es/table';
import { quiet } from '../../components/quiet.js';
import { ZeroBasedPager } from '../../components/ZeroBasedPager.js';
import { api } from '../../lib/api.js';
import { renderGroupColor, renderQuota, renderTime } from '../../lib/render.js';
import { copyText, getPageSize } from '../../lib/storage.js';
import './i18n.js';
import { canToggleStatus, fullKey, maskKey, TOKENS_KEY, type Token } from './logic.js';
import LimitTags from '../../components/usage-limits/LimitTags.js';
import { tokenLimits, type LimitStatus } from '../../components/usage-limits/api.js';
import CreatedKeysModal from './CreatedKeysModal.js';
// The form (date picker, selects, drawer) is fetched when first opened: the list shows sooner (docs/perf/first-load.md).
const TokenDrawer = lazy(() => import('./TokenDrawer.js'));

export default function TokenPage() {
  const { t } = useTranslation('token');
  const { message, modal } = AntApp.useApp();
  // the keys of the tokens just created, shown once in a dialog
  const [createdKeys, setCreatedKeys] = useState<string[] | null>(null);
  const [page, setPage] = useState(0);
  const [pageSize, setPageSize] = useState(() => getPageSize());
  const [keyword, setKeyword] = useState('');
  const [keySearch, setKeySearch] = useState('');
  // the search as submitted; null lists the pages
  const [search, setSearch] = useState<{ keyword: string; token: string } | null>(null);
  const searching = search !== null;
  const [selected, setSelected] = useState<Token[]>([]);
  const [drawer, setDrawer] = useState<{ open: boolean; id?: number }>({ open: false });
  // mounted from the first opening on, so that closing still animates
  const [drawerUsed, setDrawerUsed] = useState(false);
  if (drawer.open && !drawerUsed) setDrawerUsed(true);
  const qc = useQueryClient();
  // a phone shows each token as one stacked cell: a wide table there showed only the name and the actions
  const phone = Grid.useBreakpoint().md === false;

  const list = useQuery({
    queryKey: search ? [...TOKENS_KEY, 'search', search] : [...TOKENS_KEY, 'page', page, pageSize],
    placeholderData: keepPreviousData,
    queryFn: async () => {
      const res = search
        ? await api.get<Token[]>('/api/token/search', search)
        : await api.get<Token[]>('/api/token/', { p: page, size: pageSize });
      if (!res.success) throw new Error(res.message);
      return res.data ?? [];
    },
  });
  const tokens = useMemo(() => list.data ?? [], [list.data]);
  useEffect(() => {
    if (list.error) message.error(list.error.message);
  }, [list.error, message]);
  const reload = () => qc.invalidateQueries({ queryKey: TOKENS_KEY });

  // the usage limits in force on the listed tokens, in one request per page (server/src/api/limits.ts)
  const ids = tokens.map((tok) => tok.id);
  const limitsQuery = useQuery({
    queryKey: [...TOKENS_KEY, 'limits', ids],
    enabled: ids.length > 0,
    queryFn: () => tokenLimits(ids),
  });
  const limits: Record<number, LimitStatus> = limitsQuery.data ?? {};

  /** A token change: the server's refusal is toasted, a success reloads the list (and its limits). */
  const change = useMutation({
    mutationFn: (c: { kind: 'status'; tok: Token; enabled: boolean } | { kind: 'delete'; tok: Token }) =>
      c.kind === 'status'
        ? api.put('/api/token/?status_only=true', { id: c.tok.id, status: c.enabled ? 1 : 2 })
        : api.del(`/api/token/${c.tok.id}`),
    onSuccess: (res, c) => {
      if (!res.success) return void message.error(res.message);
      message.success(t(c.kind === 'status' ? 'msg.done' : 'msg.deleted'));
      return reload();
    },
  });
  const toggleStatus = (tok: Token, enabled: boolean) =>
    change.mutateAsync({ kind: 'status', tok, enabled }).catch(() => undefined);
  const remove = (tok: Token) => change.mutateAsync({ kind: 'delete', tok }).catch(() => undefined);

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
    void copy(selected.map((tok) => `${tok.name}    ${fullKey(tok.key)}`).join('\n'));
  };

  const statusTag = (s: number) => {
    switch (s) {
      case 1:
        return <Tag color="green">{t('status.enabled')}</Tag>;
      case 2:
        return <Tag color="red">{t('status.disabled')}</Tag>;
      case 3:
        return <Tag color="gold">{t('status.expired')}</Tag>;
      case 4:
        return <Tag color="default">{t('status.exhausted')}</Tag>;
      default:
        return <Tag>{t('status.unknown')}</Tag>;
    }
  };

  const columns: ColumnsType<Token> = [
    { key: 'name', title: t('col.name'), dataIndex: 'name' },
    {
      key: 'status',
      title: t('col.status'),
      render: (_, tok) => (
        <Space size={4}>
          {statusTag(tok.status)}
          <Switch
            size="small"
            checked={tok.status === 1}
            disabled={!canToggleStatus(tok.status)}
            onChange={(v) => quiet(toggleStatus(tok, v))}
            aria-label={`token-status-${tok.id}`}
          />
        </Space>
      ),
    },
    { key: 'used', title: t('col.used'), render: (_, tok) => renderQuota(tok.used_quota) },
    {
      key: 'remain',
      title: t('col.remain'),
      render: (_, tok) =>
        tok.unlimited_quota ? <Tag color="purple">{t('col.unlimited')}</Tag> : renderQuota(tok.remain_quota),
    },
    { key: 'limits', title: t('col.limits'), render: (_, tok) => <LimitTags status={limits[tok.id]} /> },
    {
      key: 'group',
      title: t('col.group'),
      render: (_, tok) =>
        tok.group ? <Tag color={renderGroupColor(tok.group)}>{tok.group}</Tag> : t('form.groupUser'),
    },
    { key: 'created', title: t('col.created'), render: (_, tok) => renderTime(tok.created_time) },
    {
      key: 'expiry',
      title: t('col.expiry'),
      render: (_, tok) => (tok.expired_time === -1 ? t('col.never') : renderTime(tok.expired_time)),
    },
    {
      key: 'key',
      title: t('col.key'),
      render: (_, tok) => (
        <Space size={4}>
          <Typography.Text code data-testid={`token-key-${tok.id}`}>
            {maskKey(tok.key)}
          </Typography.Text>
          <Tooltip title={t('action.copy')}>
            <Button size="small" icon={<CopyOutlined />} onClick={() => quiet(copy(fullKey(tok.key)))} />
          </Tooltip>
        </Space>
      ),
    },
    {
      key: 'actions',
      title: t('col.actions'),
      // kept in view when the table scrolls sideways (issue 34: edit/delete were off-screen at 1440 px)
      fixed: 'right',
      render: (_, tok) => (
        <Space size={4}>
          <Button
            size="small"
            onClick={() => setDrawer({ open: true, id: tok.id })}
            data-testid={`token-edit-${tok.id}`}
          >
            {t('action.edit')}
          </Button>
          <Popconfirm
            title={t('confirm.delete', { name: tok.name })}
            okButtonProps={{ danger: true, 'data-testid': `token-delete-confirm-${tok.id}` }}
            onConfirm={() => quiet(remove(tok))}
          >
            <Button size="small" danger data-testid={`token-delete-${tok.id}`}>
              {t('action.delete')}
            </Button>
          </Popconfirm>
        </Space>
      ),
    },
  ];

  const cell = (key: string, tok: Token) => {
    const col = columns.find((c) => c.key === key)!;
    return col.render ? (col.render(undefined, tok, 0) as ReactNode) : null;
  };
  const phoneColumns: ColumnsType<Token> = [
    {
      key: 'token',
      title: t('col.name'),
      render: (_, tok) => (
        <Flex vertical gap={6} data-testid={`token-card-${tok.id}`}>
          <Flex justify="space-between" align="center" gap={8} wrap>
            <Typography.Text strong>{tok.name}</Typography.Text>
            {cell('status', tok)}
          </Flex>
          <Typography.Text type="secondary">
            {t('col.remain')}: {cell('remain', tok)} · {t('col.used')}: {cell('used', tok)}
          </Typography.Text>
          <Typography.Text type="secondary">
            {t('col.expiry')}: {cell('expiry', tok)}
          </Typography.Text>
          {cell('key', tok)}
          {cell('actions', tok)}
        </Flex>
      ),
    },
  ];

  const hasMore = !searching && tokens.length >= pageSize;
  const startSearch = () => {
    const any = keyword.trim() !== '' || keySearch.trim() !== '';
    const next = any ? { keyword, token: keySearch.replace(/^sk-/, '') } : null;
    // a new search (or another page) is a new query; the same one again still means "look again"
    if (JSON.stringify(next) === JSON.stringify(search) && (next || page === 0)) return void reload();
    setPage(0);
    setSearch(next);
  };

  return (
    <Card title={t('title')} data-testid="token-page">
      <Alert type="warning" showIcon title={t('warning')} style={{ marginBottom: 12 }} />
      <Space wrap style={{ marginBottom: 12 }}>
        <Input
          placeholder={t('search.keyword')}
          value={keyword}
          onChange={(e) => setKeyword(e.target.value)}
          onPressEnter={startSearch}
          allowClear
          style={{ width: 200 }}
        />
        <Input
          placeholder={t('search.key')}
          value={keySearch}
          onChange={(e) => setKeySearch(e.target.value)}
          onPressEnter={startSearch}
          allowClear
          style={{ width: 240 }}
        />
        <Button type="primary" onClick={startSearch}>
          {t('search.submit')}
        </Button>
        <Button type="primary" onClick={() => setDrawer({ open: true })} data-testid="token-add">
          {t('action.add')}
        </Button>
        <Button onClick={copySelected}>{t('action.copySelected')}</Button>
      </Space>
      <Table<Token>
        rowKey="id"
        loading={list.isFetching}
        columns={phone ? phoneColumns : columns}
        dataSource={tokens}
        pagination={false}
        scroll={phone ? undefined : { x: 'max-content' }}
        rowSelection={{ selectedRowKeys: selected.map((s) => s.id), onChange: (_k, rows) => setSelected(rows) }}
      />
      {!searching && (
        <ZeroBasedPager
          page={page}
          pageSize={pageSize}
          shown={tokens.length}
          hasMore={hasMore}
          onPage={setPage}
          onPageSize={setPageSize}
        />
      )}
      {drawerUsed && (
        <Suspense fallback={null}>
          <TokenDrawer
            open={drawer.open}
            editId={drawer.id}
            onClose={() => setDrawer({ open: false })}
            onSaved={(keys) => {
              setDrawer({ open: false });
              if (keys?.length) setCreatedKeys(keys);
            }}
          />
        </Suspense>
      )}
      <CreatedKeysModal keys={createdKeys} onCopy={(text) => void copy(text)} onClose={() => setCreatedKeys(null)} />
    </Card>
  );
}
