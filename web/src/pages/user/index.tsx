// Users admin page (/user): searchable table, add/edit drawers, manage actions per role (spec §2, §4, §6).
// /user/edit/:id opens the edit drawer for that user over the list, /user/edit the caller's own profile; closing
// it returns to /user.
import { useCallback, useEffect, useState } from 'react';
import { Button, Card, Divider, Flex, Input, Popconfirm, Select, Space, Table, Tag, Tooltip, Typography } from 'antd';
import { message } from '../../lib/feedback.js';
import type { ColumnsType } from 'antd/es/table';
import { PlusOutlined, SearchOutlined, UserDeleteOutlined } from '@ant-design/icons';
import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { useLocation, useNavigate, useParams } from 'react-router';
import { api } from '../../lib/api.js';
import { renderGroupColor, renderNumber, renderQuota } from '../../lib/render.js';
import { getPageSize, PAGE_SIZE_OPTIONS, setPageSize } from '../../lib/storage.js';
import { isAdmin, useUser } from '../../context/user.js';
import PageHeader from '../../components/PageHeader.js';
import { AddUserDrawer, EditUserDrawer, type EditTarget } from './UserDrawers.js';
import { allowedActions, isDeleted, type AdminUser, type ManageAction, type Paged } from './types.js';
import { NS } from './i18n.js';
import ResetTwoFactorAction from '../personal/two-factor/AdminReset.js';

export default function Users() {
  const { t } = useTranslation(NS);
  const { user: me } = useUser();
  const qc = useQueryClient();
  const [keywordInput, setKeywordInput] = useState('');
  const [groupInput, setGroupInput] = useState<string | undefined>();
  const [filter, setFilter] = useState<{ keyword: string; group: string }>({ keyword: '', group: '' });
  const [page, setPage] = useState(1);
  const [pageSize, setSize] = useState(() => getPageSize(10));
  const [adding, setAdding] = useState(false);
  const routeTarget = useEditRoute();
  const [editing, setEditing] = useState<EditTarget>(routeTarget);
  const navigate = useNavigate();
  useEffect(() => setEditing(routeTarget), [routeTarget]);
  // Only admins can list users; a user opening their own profile at /user/edit gets the drawer alone.
  const canList = isAdmin(me) || routeTarget !== 'self';

  const searching = !!(filter.keyword || filter.group);
  const list = useQuery({
    queryKey: ['users', filter, page, pageSize],
    placeholderData: keepPreviousData,
    enabled: canList,
    queryFn: async () => {
      const res = searching
        ? await api.get<Paged<AdminUser>>('/api/user/search', { ...filter, p: page, page_size: pageSize })
        : await api.get<Paged<AdminUser>>('/api/user/', { p: page, page_size: pageSize });
      if (!res.success) {
        void message.error(res.message);
        return { items: [], total: 0, page, page_size: pageSize } as Paged<AdminUser>;
      }
      return res.data;
    },
  });
  const groups = useQuery({
    queryKey: ['groups'],
    enabled: canList,
    queryFn: async () => {
      const res = await api.get<string[]>('/api/group/');
      return res.success && Array.isArray(res.data) ? res.data : [];
    },
  });
  const refresh = useCallback(() => void qc.invalidateQueries({ queryKey: ['users'] }), [qc]);
  const closeEdit = useCallback(() => {
    setEditing(null);
    if (routeTarget !== null) navigate('/user', { replace: true });
  }, [routeTarget, navigate]);

  const manageUser = useMutation({
    mutationFn: (m: { id: number; action: ManageAction }) =>
      api.post<{ role: number; status: number }>('/api/user/manage', m),
    onSuccess: (res) => {
      if (!res.success) return void message.error(res.message);
      void message.success(t('manageDone'));
      refresh();
    },
  });
  const manage = (id: number, action: ManageAction) => manageUser.mutateAsync({ id, action }).catch(() => undefined);

  const callerRole = me?.role ?? 0;
  const roleTag = (role: number) =>
    role >= 100 ? (
      <Tag color="orange">{t('common:role.root')}</Tag>
    ) : role >= 10 ? (
      <Tag color="yellow">{t('common:role.admin')}</Tag>
    ) : role >= 1 ? (
      <Tag color="blue">{t('common:role.user')}</Tag>
    ) : (
      <Tag color="red">{t('common:role.unknown')}</Tag>
    );
  const statusTag = (u: AdminUser) => {
    if (isDeleted(u)) return <Tag color="red">{t('deleted')}</Tag>;
    if (u.status === 1) return <Tag color="green">{t('statusEnabled')}</Tag>;
    if (u.status === 2) return <Tag color="red">{t('statusDisabled')}</Tag>;
    return <Tag>{t('statusUnknown')}</Tag>;
  };

  // the rows' ids, for the one query telling which of them have two-factor in force
  const pageIds = (list.data?.items ?? []).map((u) => u.id);
  const columns: ColumnsType<AdminUser> = [
    { title: t('id'), dataIndex: 'id', width: 70 },
    {
      title: t('username'),
      dataIndex: 'username',
      render: (_, u) =>
        u.display_name && u.display_name !== u.username ? (
          <Tooltip title={u.display_name}>
            <span>{u.username}</span>
          </Tooltip>
        ) : (
          u.username
        ),
    },
    { title: t('group'), dataIndex: 'group', render: (g: string) => <Tag color={renderGroupColor(g)}>{g}</Tag> },
    {
      title: t('stats'),
      key: 'stats',
      render: (_, u) => (
        <Space size={4} wrap>
          <Tooltip title={t('remaining')}>
            <Tag color="default">{renderQuota(u.quota)}</Tag>
          </Tooltip>
          <Tooltip title={t('usedQuota')}>
            <Tag color="default">{renderQuota(u.used_quota)}</Tag>
          </Tooltip>
          <Tooltip title={t('requestCount')}>
            <Tag color="default">{renderNumber(u.request_count)}</Tag>
          </Tooltip>
        </Space>
      ),
    },
    {
      title: t('inviteInfo'),
      key: 'aff',
      responsive: ['lg'],
      render: (_, u) => (
        <Space size={4} wrap>
          <Tooltip title={t('affCount')}>
            <Tag>{renderNumber(u.aff_count ?? 0)}</Tag>
          </Tooltip>
          <Tooltip title={t('affHistory')}>
            <Tag>{renderQuota(u.aff_history_quota ?? 0)}</Tag>
          </Tooltip>
          <Tooltip title={t('inviter')}>
            <Tag>{u.inviter_id ? u.inviter_id : '-'}</Tag>
          </Tooltip>
        </Space>
      ),
    },
    { title: t('role'), dataIndex: 'role', render: roleTag },
    { title: t('status'), key: 'status', render: (_, u) => statusTag(u) },
    {
      title: t('actions'),
      key: 'actions',
      render: (_, u) => {
        const allowed = allowedActions(callerRole, u);
        if (allowed.size === 0) return null;
        return (
          <Space size={4} wrap>
            {allowed.has('promote') ? (
              <Popconfirm title={t('promoteConfirm')} onConfirm={() => manage(u.id, 'promote')}>
                <Button size="small">{t('promote')}</Button>
              </Popconfirm>
            ) : null}
            {allowed.has('demote') ? (
              <Popconfirm title={t('demoteConfirm')} onConfirm={() => manage(u.id, 'demote')}>
                <Button size="small">{t('demote')}</Button>
              </Popconfirm>
            ) : null}
            {allowed.has('disable') ? (
              <Button size="small" onClick={() => manage(u.id, 'disable')} data-testid={`disable-${u.id}`}>
                {t('disable')}
              </Button>
            ) : null}
            {allowed.has('enable') ? (
              <Button size="small" onClick={() => manage(u.id, 'enable')} data-testid={`enable-${u.id}`}>
                {t('enable')}
              </Button>
            ) : null}
            <ResetTwoFactorAction userId={u.id} pageIds={pageIds} />
            <Button size="small" onClick={() => setEditing(u.id)}>
              {t('edit')}
            </Button>
            {/* The irreversible soft delete sits apart from the reversible Disable, and asks first (issue 34). */}
            <Divider orientation="vertical" />
            <Popconfirm
              title={t('deleteConfirm', { username: u.username })}
              description={t('deleteConfirmDesc')}
              okText={t('delete')}
              okButtonProps={{ danger: true, 'data-testid': `confirm-deactivate-${u.id}` }}
              onConfirm={() => manage(u.id, 'delete')}
            >
              <Button size="small" danger icon={<UserDeleteOutlined />} data-testid={`deactivate-${u.id}`}>
                {t('delete')}
              </Button>
            </Popconfirm>
          </Space>
        );
      },
    },
  ];

  const search = () => {
    setPage(1);
    setFilter({ keyword: keywordInput.trim(), group: groupInput ?? '' });
  };

  return (
    <Card data-testid="users-page">
      <PageHeader
        title={t('title')}
        extra={
          <Button type="primary" icon={<PlusOutlined />} onClick={() => setAdding(true)} data-testid="add-user">
            {t('add')}
          </Button>
        }
      />
      <Flex gap={8} wrap style={{ marginBottom: 16 }}>
        <Input
          allowClear
          prefix={<SearchOutlined />}
          placeholder={t('keywordPh')}
          value={keywordInput}
          onChange={(e) => setKeywordInput(e.target.value)}
          onPressEnter={search}
          style={{ flex: '1 1 280px', maxWidth: 420 }}
        />
        <Select
          allowClear
          placeholder={t('groupPh')}
          value={groupInput}
          onChange={setGroupInput}
          options={(groups.data ?? []).map((g) => ({ value: g, label: g }))}
          style={{ width: 180 }}
        />
        <Button type="primary" onClick={search} loading={list.isFetching}>
          {t('search')}
        </Button>
      </Flex>
      <Table<AdminUser>
        rowKey="id"
        size="middle"
        columns={columns}
        dataSource={list.data?.items ?? []}
        loading={list.isLoading}
        scroll={{ x: 'max-content' }}
        pagination={{
          current: page,
          pageSize,
          total: list.data?.total ?? 0,
          showSizeChanger: true,
          pageSizeOptions: PAGE_SIZE_OPTIONS,
          showTotal: (total) => <Typography.Text type="secondary">{t('total', { total })}</Typography.Text>,
          onChange: (p, size) => {
            if (size !== pageSize) {
              setPageSize(size);
              setSize(size);
              setPage(1);
            } else setPage(p);
          },
        }}
      />
      <AddUserDrawer open={adding} onClose={() => setAdding(false)} />
      <EditUserDrawer userId={editing} groups={groups.data ?? []} onClose={closeEdit} />
    </Card>
  );
}

/** The drawer target named by the route: /user/edit/:id → that id, /user/edit → 'self', else none. */
function useEditRoute(): EditTarget {
  const { id } = useParams();
  const { pathname } = useLocation();
  if (id !== undefined) {
    const n = Number(id);
    return Number.isInteger(n) && n > 0 ? n : null;
  }
  return /^\/user\/edit\/?$/.test(pathname) ? 'self' : null;
}
